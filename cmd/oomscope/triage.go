package main

import (
	"fmt"
	"io"
)

// runTriage is filled by its issue.
func runTriage(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "oomscope triage: not implemented yet")
	return exitBadInput
}
