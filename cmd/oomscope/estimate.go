package main

import (
	"fmt"
	"io"
)

// runEstimate is filled by its issue.
func runEstimate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "oomscope estimate: not implemented yet")
	return exitBadInput
}
