// Package hostile generates adversarial inputs for tests: names that try to
// break out of each output OOMScope writes (terminal, Markdown, HTML, SVG),
// and pastes that try to make OOM triage slow, large or wrong. Tests of
// every output and the fuzzers' seeds take their inputs from here, so a new
// attack added once is tried everywhere.
//
// Nothing here is linked into the site or the CLI: only tests import it.
package hostile

import "strings"

// Name is one adversarial name, with what it attacks.
type Name struct {
	// Attack says what the name tries to do, for test messages.
	Attack string
	// Text is the name itself, as a frame, file or annotation name.
	Text string
}

// Names returns names that each try to escape one kind of output: raw HTML
// and event handlers, closing tags, Markdown fences and table cells,
// headings and links, terminal escape sequences (clear screen, window
// title, hyperlinks), bidirectional overrides, invalid UTF-8 and very long
// text. Every name holds the marker "PWN" where its payload is, so a test
// can look for it.
func Names() []Name {
	return []Name{
		{"HTML element with an event handler", `<img src=x onerror=alert("PWN")>`},
		{"script element", `</summary></details><script>alert("PWN")</script>`},
		{"attribute break-out", `" onmouseover="alert('PWN')" x="`},
		{"SVG break-out", `</title></g></svg><svg onload=alert("PWN")>`},
		{"HTML entity", `&lt;script&gt;PWN&amp;`},
		{"closing code fence and heading", "model.py:1 f\n```\n# PWN heading\n</details><script>PWN</script>\n```"},
		{"tilde fence", "~~~\n# PWN\n~~~"},
		{"long backtick run", "````````` PWN ``"},
		{"code span break-out", "`` PWN `` `<b>x</b>`"},
		{"table cell break-out", "a | PWN | b\n|---|---|\n| c"},
		{"Markdown link and image", "[PWN](javascript:alert(1)) ![PWN](http://remote.invalid/x.png)"},
		{"emphasis and heading at start", "# PWN *bold* _it_ ~~gone~~"},
		{"list and quote markers", "1. PWN\n> quoted\n- item"},
		{"setext underline", "PWN\n===\n---"},
		{"ANSI clear screen and colour", "\x1b[2J\x1b[H\x1b[31mPWN\x1b[0m"},
		{"OSC window title", "\x1b]0;PWN title\x07frame"},
		{"OSC 8 hyperlink with ST", "\x1b]8;;http://remote.invalid/\x1b\\PWN\x1b]8;;\x1b\\"},
		{"C1 CSI and DCS", "\u009b2J\u0090PWN\u009c"},
		{"carriage return overwrite", "harmless\rPWN"},
		{"backspaces and bell", "PWN\b\b\b\x07\x00\x7f"},
		{"bidi override", "PWN\u202eevil.py\u202c \u2066x\u2069"},
		{"line separators", "PWN\u2028next\u2029para\ufeff"},
		{"invalid UTF-8", "PWN\xff\xfe\xc0\x80"},
		{"very long name", "PWN" + strings.Repeat("a/", 5000) + "x.py"},
	}
}
