package main

import (
	"bytes"
	"encoding/json"
	"io"
)

// writeJSON writes v as json.Encoder with SetIndent("", "  ") does, byte
// for byte, but faster: a snapshot's report can be 80 MB of JSON (its
// steps and phase spans), and the encoder's indentation steps a scanner
// per byte (0.6 s of a 1 GB file's 4 s). v is marshalled compactly and
// indented as it is written (see indenter).
func writeJSON(w io.Writer, v any) error {
	in := newIndenter(w)
	// Encode hands the compact document and its newline to one Write
	// (json.Marshal would copy it first: 48 MB for the 1 GiB
	// distinct-stacks file).
	if err := json.NewEncoder(in).Encode(v); err != nil {
		return err
	}
	return in.flush()
}

// indenter writes compact JSON (as json.Marshal makes it: no space
// outside strings) indented as json.Indent(dst, src, "", "  ") would: a
// newline and two spaces per level after '{', '[' and ',', none inside an
// empty object or array, ": " after a key. Strings are copied whole; a
// newline ends a document. It appends to a block and writes the block
// when full: a report is millions of short tokens, and a bufio call per
// token took half the time. Each Write must hold whole tokens (and an
// empty object or array whole).
type indenter struct {
	w     io.Writer
	out   []byte
	depth int
	err   error
}

// indentBlock is the size of the blocks an indenter writes.
const indentBlock = 256 << 10

func newIndenter(w io.Writer) *indenter {
	return &indenter{w: w, out: make([]byte, 0, indentBlock)}
}

// Write indents src: it always takes all of it; the first error of the
// underlying writer comes back from flush.
func (in *indenter) Write(src []byte) (int, error) {
	const spaces = "\n                                                                "
	out, depth := in.out, in.depth
	newline := func(depth int) {
		n := 1 + 2*depth
		if n <= len(spaces) {
			out = append(out, spaces[:n]...)
			return
		}
		out = append(out, '\n')
		for n--; n > 0; n -= len(spaces) - 1 {
			out = append(out, spaces[1:min(n+1, len(spaces))]...)
		}
	}
	for i := 0; i < len(src); {
		if len(out) >= cap(out)-256 {
			in.write(out)
			out = out[:0]
		}
		c := src[i]
		switch c {
		case '"':
			j := stringEnd(src, i)
			if len(out)+j-i > cap(out) {
				in.write(out)
				in.write(src[i:j])
				out = out[:0]
			} else {
				out = append(out, src[i:j]...)
			}
			i = j
			continue
		case '{', '[':
			out = append(out, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				out = append(out, src[i+1])
				i += 2
				continue
			}
			depth++
			newline(depth)
		case ',':
			out = append(out, c)
			newline(depth)
		case ':':
			out = append(out, ':', ' ')
		case '}', ']':
			depth--
			newline(depth)
			out = append(out, c)
		case '\n':
			out = append(out, c)
		default:
			// A number or a literal: up to the next punctuation.
			j := i + 1
			for j < len(src) && !isJSONPunct(src[j]) {
				j++
			}
			out = append(out, src[i:j]...)
			i = j
			continue
		}
		i++
	}
	in.out, in.depth = out, depth
	return len(src), nil
}

// write writes b to the underlying writer unless it failed before.
func (in *indenter) write(b []byte) {
	if in.err == nil {
		_, in.err = in.w.Write(b)
	}
}

// flush writes what is left and returns the first error of the
// underlying writer.
func (in *indenter) flush() error {
	in.write(in.out)
	in.out = in.out[:0]
	return in.err
}

// stringEnd returns the index after the string that starts at src[i] (a
// quote): after the first quote not escaped, that is not after an odd
// number of backslashes (in JSON a backslash is only ever an escape's
// first byte, "\\" included); len(src) if there is none.
func stringEnd(src []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(src[j:], '"')
		if k < 0 {
			return len(src)
		}
		j += k
		n := 0
		for src[j-1-n] == '\\' {
			n++
		}
		j++
		if n%2 == 0 {
			return j
		}
	}
}

// isJSONPunct reports whether c ends a number or literal in compact JSON
// (a newline: the document).
func isJSONPunct(c byte) bool { return c == ',' || c == '}' || c == ']' || c == ':' || c == '\n' }
