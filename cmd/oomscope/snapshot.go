package main

import (
	"fmt"
	"io"
)

// runSnapshot is filled by its issue.
func runSnapshot(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "oomscope snapshot: not implemented yet")
	return exitBadInput
}
