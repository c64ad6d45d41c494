// Package untrusted neutralises text that comes from a file or a paste
// (frame and file names in a snapshot, annotation names, a pasted error
// message) for each place OOMScope writes it: a terminal, Markdown, HTML
// and SVG. Such text is data: nothing in it may move the cursor, clear a
// screen, retitle a window, close a code fence or a table cell, open a tag
// or reorder the text around it.
//
// Every function first makes its input one line of plain text (Line), then
// applies the quoting rules of its output. None of them is needed for JSON:
// encoding/json already escapes control characters and <, > and &.
package untrusted

import (
	"html"
	"strings"
	"unicode/utf8"
)

// Line returns s as one line of plain, printable text, safe for a terminal:
//   - escape sequences (ESC [ … CSI, ESC ] … OSC, ESC P/X/^/_ … strings up
//     to their terminator, and two-byte ESC sequences) are removed whole;
//   - tab, newline, carriage return, vertical tab, form feed and the Unicode
//     line and paragraph separators become one space each;
//   - other control characters (C0, DEL, C1), the byte-order mark and the
//     Unicode bidirectional controls (which reorder the text shown around
//     them) are removed;
//   - bytes that are not UTF-8 become U+FFFD.
//
// Everything else, including non-ASCII letters, is kept as it is.
func Line(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case r == 0x1b:
			i += escapeLen(s[i:])
			continue
		case r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f' || r == 0x2028 || r == 0x2029:
			b.WriteByte(' ')
		case dropped(r):
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isPlain reports whether s is printable ASCII, which Line keeps as it is.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// dropped reports whether Line removes r: control characters, the
// byte-order mark and the bidirectional formatting controls.
func dropped(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0xfeff, r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// escapeLen returns the length of the escape sequence that starts s (which
// starts with ESC), as a terminal would read it; a sequence cut short by the
// end of s runs to the end.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[': // CSI: parameters and intermediates, then one final byte.
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
			if s[i] < 0x20 || s[i] > 0x3f {
				return i // malformed: stop before the stray byte
			}
		}
		return len(s)
	case ']', 'P', 'X', '^', '_': // strings, ended by BEL or ESC \ (ST)
		for i := 2; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b {
				if i+1 < len(s) && s[i+1] == '\\' {
					return i + 2
				}
				return i
			}
		}
		return len(s)
	}
	// ESC, intermediates 0x20–0x2f, then one final byte 0x30–0x7e.
	i := 1
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// HTML returns s as HTML text or as the value of a quoted attribute, on one
// line (Line), with &, <, >, ' and " escaped. It serves SVG <title>
// elements too.
func HTML(s string) string { return html.EscapeString(Line(s)) }

// CodeSpan returns s as a Markdown code span on one line: the fence is one
// backtick longer than the longest run of backticks in s, so nothing in s
// can end the span, and a space pads s when it starts or ends with a
// backtick (CommonMark strips one such space on each side).
func CodeSpan(s string) string {
	s = Line(s)
	if s == "" {
		return "` `"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// CodeBlock returns lines as a fenced Markdown code block, each one made a
// single line by Line. The fence is longer than the longest run of
// backticks in any line (at least three), so no line can close it.
func CodeBlock(lines []string) string {
	run := 2
	clean := make([]string, len(lines))
	for i, l := range lines {
		clean[i] = Line(l)
		run = max(run, longestRun(clean[i], '`'))
	}
	fence := strings.Repeat("`", run+1)
	var b strings.Builder
	b.WriteString(fence + "\n")
	for _, l := range clean {
		b.WriteString(l + "\n")
	}
	b.WriteString(fence + "\n")
	return b.String()
}

// TableCell returns Markdown for one cell of a pipe table: s on one line with
// every pipe escaped, which GitHub-flavoured Markdown requires even inside a
// code span (and which it removes again there). s is Markdown already, e.g.
// the result of CodeSpan or Text.
func TableCell(s string) string {
	return strings.ReplaceAll(Line(s), "|", `\|`)
}

// Text returns s as Markdown text on one line that renders as s and is no
// markup: &, < and > become entities (no HTML, no autolink), the characters
// that make emphasis, links, code and strikethrough are escaped
// with a backslash, and so is a character that would open a block at the
// start of a line (a heading, quote, list item or thematic break). Leading
// and trailing spaces are dropped (indented code, hard line breaks). It is
// safe at the start of a line and in a list item; in a table cell, pass it
// through TableCell.
func Text(s string) string {
	s = strings.Trim(Line(s), " ")
	var b strings.Builder
	b.Grow(len(s) + 8)
	lead := leadingBlockMarker(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\\', '`', '*', '_', '[', ']', '~':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			if i == lead {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// leadingBlockMarker returns the index of the character that would make s,
// at the start of a line, a block other than a paragraph ('#', '+', '-',
// '=' or the '.' or ')' of "12." or "3)"), or -1.
func leadingBlockMarker(s string) int {
	if s == "" {
		return -1
	}
	switch s[0] {
	case '#', '+', '-', '=':
		return 0
	}
	i := 0
	for i < len(s) && i < 10 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		return i
	}
	return -1
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}
