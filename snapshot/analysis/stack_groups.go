package analysis

import (
	"regexp"

	"oomscope/snapshot"
)

// StackGroups splits a displayed stack (lines written by FormatFrame,
// innermost frame first) into what a reader looks for first, the frames of
// their own code, then the Python frames of torch, its thin wrappers and
// the standard library (isLibrary), then the C++ frames. Each group keeps
// the stack's order.
func StackGroups(lines []string) (user, library, native []string) {
	for _, l := range lines {
		f := parseFrameLine(l)
		switch {
		case !isPython(&f):
			native = append(native, l)
		case isLibrary(&f):
			library = append(library, l)
		default:
			user = append(user, l)
		}
	}
	return user, library, native
}

// pythonLine matches the location of a Python frame's line, "file.py:123 "
// or "<frozen ...>:123 "; the file name may contain spaces.
var pythonLine = regexp.MustCompile(`^(.*?(?:\.py|>)):\d+ `)

// parseFrameLine recovers the file name of a FormatFrame line: a Python
// frame is "file.py:123 name"; anything else is a C++ frame.
func parseFrameLine(l string) snapshot.Frame {
	if m := pythonLine.FindStringSubmatch(l); m != nil {
		if f := (snapshot.Frame{Filename: m[1]}); isPython(&f) {
			return f
		}
	}
	return snapshot.Frame{Filename: "??", Name: l}
}
