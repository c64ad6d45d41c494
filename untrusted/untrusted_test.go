package untrusted

import (
	"bytes"
	"html"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"

	"oomscope/untrusted/hostile"
)

func TestLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text.py:12 f", "plain text.py:12 f"},
		{"a\nb\tc\r\nd", "a b c  d"},
		{"\x1b[2J\x1b[H\x1b[1;31mred\x1b[0m", "red"},
		{"\x1b]0;title\x07after", "after"},
		{"\x1b]8;;http://x/\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"\x1bPdcs payload\x1b\\ok", "ok"},
		{"\x1b(Bcharset", "charset"},
		{"\x1b7saved\x1b8", "saved"},
		{"cut \x1b[31", "cut "},
		{"cut \x1b]0;never ends", "cut "},
		{"esc at end \x1b", "esc at end "},
		{"bad \x1b[\x01m", "bad m"},
		{"\u009b2Jc1", "2Jc1"},
		{"nul\x00del\x7fbell\x07bs\b", "nuldelbellbs"},
		{"rlo\u202eevil\u202c\u2066iso\u2069\u200f", "rloevilisopdf"[:0] + "rloevil" + "iso"},
		{"ls\u2028ps\u2029bom\ufeff", "ls ps bom"},
		{"bad\xffutf8\xc0\x80", "bad\ufffdutf8\ufffd\ufffd"},
		{"naïve 日本語 emoji 🎉", "naïve 日本語 emoji 🎉"},
	}
	for _, tt := range tests {
		if got := Line(tt.in); got != tt.want {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// checkLine verifies what Line promises for any input.
func checkLine(t *testing.T, in string) {
	t.Helper()
	got := Line(in)
	if !utf8.ValidString(got) {
		t.Fatalf("Line(%q) = %q is not UTF-8", in, got)
	}
	for _, r := range got {
		if r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x2028 || r == 0x2029 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			t.Fatalf("Line(%q) = %q keeps %U", in, got, r)
		}
	}
	if Line(got) != got {
		t.Fatalf("Line is not idempotent on %q: %q then %q", in, got, Line(got))
	}
}

// md renders GitHub-flavoured Markdown (tables, strikethrough) with raw HTML
// passed through, as a permissive renderer of internal docs would: any
// markup that escaped neutralising shows up in its output.
var md = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))

func render(t *testing.T, src string) string {
	t.Helper()
	var b bytes.Buffer
	if err := md.Convert([]byte(src), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkMarkdown renders s through each Markdown function in the context it
// is made for and checks that the result is exactly the text of s, with no
// element other than the container the context makes.
func checkMarkdown(t *testing.T, s string) {
	t.Helper()
	want := Line(s)
	unwrap := func(what, got, prefix, suffix string) string {
		t.Helper()
		if !strings.HasPrefix(got, prefix) || !strings.HasSuffix(got, suffix) {
			t.Fatalf("%s of %q renders as %q, want %q…%q", what, s, got, prefix, suffix)
		}
		inner := got[len(prefix) : len(got)-len(suffix)]
		if strings.ContainsAny(inner, "<>") {
			t.Fatalf("%s of %q renders markup: %q", what, s, got)
		}
		return html.UnescapeString(inner)
	}

	// Text as a list item.
	if got := unwrap("Text", render(t, "- "+Text(s)+"\n"), "<ul>\n<li>", "</li>\n</ul>\n"); got != strings.Trim(want, " ") {
		t.Fatalf("Text(%q) renders as %q, want %q", s, got, strings.Trim(want, " "))
	}
	// A code span in a table cell, next to a Text cell.
	table := "| a | b |\n|---|---|\n| " + TableCell(CodeSpan(s)) + " | " + TableCell(Text(s)) + " |\n"
	got := render(t, table)
	const head = "<table>\n<thead>\n<tr>\n<th>a</th>\n<th>b</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td><code>"
	i := strings.Index(got, "</code></td>\n<td>")
	if i < 0 {
		t.Fatalf("table with %q renders as %q", s, got)
	}
	if code := unwrap("CodeSpan", got[:i], head, ""); code != want && !(want == "" && code == " ") {
		t.Fatalf("CodeSpan(%q) in a table renders as %q, want %q", s, code, want)
	}
	if cell := unwrap("TableCell(Text)", got[i+len("</code></td>\n"):], "<td>", "</td>\n</tr>\n</tbody>\n</table>\n"); cell != strings.Trim(want, " ") {
		t.Fatalf("Text(%q) in a table renders as %q", s, cell)
	}
	// A code block of two lines after an HTML block, as in a report.
	src := "<details><summary>" + HTML(s) + "</summary>\n\n" + CodeBlock([]string{s, "second " + s}) + "</details>\n"
	got = render(t, src)
	pre := "<details><summary>" + HTML(s) + "</summary>\n<pre><code>"
	body := unwrap("CodeBlock", got, pre, "</code></pre>\n</details>\n")
	if body != want+"\nsecond "+want+"\n" {
		t.Fatalf("CodeBlock(%q) renders as %q", s, body)
	}
}

func TestMarkdownHostileNames(t *testing.T) {
	for _, n := range hostile.Names() {
		t.Run(n.Attack, func(t *testing.T) {
			checkLine(t, n.Text)
			checkMarkdown(t, n.Text)
			if h := HTML(n.Text); strings.ContainsAny(h, "<>\"'\n") {
				t.Errorf("HTML(%q) = %q", n.Text, h)
			}
		})
	}
}

func TestCodeSpan(t *testing.T) {
	tests := []struct{ in, want string }{
		{"x.py:1 f", "`x.py:1 f`"},
		{"a`b", "``a`b``"},
		{"`start", "`` `start ``"},
		{"end``", "``` end`` ```"},
		{"", "` `"},
		{" both ", "`  both  `"},
	}
	for _, tt := range tests {
		if got := CodeSpan(tt.in); got != tt.want {
			t.Errorf("CodeSpan(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCodeBlockFence(t *testing.T) {
	if got := CodeBlock([]string{"a", "b"}); got != "```\na\nb\n```\n" {
		t.Errorf("plain block %q", got)
	}
	if got := CodeBlock([]string{"x ````` y"}); !strings.HasPrefix(got, "``````\n") || !strings.HasSuffix(got, "\n``````\n") {
		t.Errorf("fence not longer than the run inside: %q", got)
	}
}

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"allocations freed twice", "allocations freed twice"},
		{"# h", `\# h`},
		{"12. item", `12\. item`},
		{"3) item", `3\) item`},
		{"- x", `\- x`},
		{"a - b. c", "a - b. c"},
		{"<b>&", "&lt;b&gt;&amp;"},
		{"*a* _b_ [c](d) `e` ~f~ g|h \\", `\*a\* \_b\_ \[c\](d) \` + "`e\\`" + ` \~f\~ g|h \\`},
		{"  padded  ", "padded"},
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzNeutralise(f *testing.F) {
	for _, n := range hostile.Names() {
		f.Add(n.Text)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkLine(t, s)
		checkMarkdown(t, s)
	})
}
