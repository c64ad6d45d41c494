package app

import "oomscope/untrusted"

// shown returns text that came from a paste or a file (a file, frame or
// site name, a phrase of a pasted message) as the page shows it: on one
// line, without escape sequences, C0 and C1 control characters, the
// byte-order mark or bidirectional controls (untrusted.Line). go-app
// escapes HTML already; this keeps control characters from showing as
// boxes and an unclosed bidi override from reordering the rest of its
// element.
func shown(s string) string { return untrusted.Line(s) }

// shownLines is each of lines through shown: a stack's frames.
func shownLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = shown(l)
	}
	return out
}
