package content

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"oomscope/content/internal/render"
)

// TestRenderedUpToDate fails when a guide changed without go generate.
func TestRenderedUpToDate(t *testing.T) {
	gs := Guides()
	entries, _ := Sources.ReadDir("guides")
	if len(gs) == 0 || len(gs) != len(entries) {
		t.Fatalf("Guides() = %d guides for %d files", len(gs), len(entries))
	}
	for _, g := range gs {
		src, err := Sources.ReadFile("guides/" + strconv.Itoa(g.Order) + "-" + g.Slug + ".md")
		if err != nil {
			t.Fatal(err)
		}
		want, err := render.HTML(src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal([]byte(g.HTML), want) {
			t.Errorf("rendered/%s.html is stale: run go generate ./content", g.Slug)
		}
		if g.Title == "" || g.Summary == "" {
			t.Errorf("guide %s: title %q summary %q", g.Slug, g.Title, g.Summary)
		}
	}
}

// TestGuideLinks checks that every internal link in a guide points to a tool
// page or another guide, so presets do not rot.
func TestGuideLinks(t *testing.T) {
	known := map[string]bool{"/": true, "/estimate": true, "/triage": true, "/snapshot": true, "/guides": true}
	for _, g := range Guides() {
		known["/guides/"+g.Slug] = true
	}
	link := regexp.MustCompile(`href="(/[^"?#]*)`)
	for _, g := range Guides() {
		ms := link.FindAllStringSubmatch(g.HTML, -1)
		if len(ms) == 0 {
			t.Errorf("guide %s links to no tool", g.Slug)
		}
		for _, m := range ms {
			if !known[m[1]] {
				t.Errorf("guide %s links to unknown page %s", g.Slug, m[1])
			}
		}
	}
}

func TestMeta(t *testing.T) {
	if got := Title([]byte("intro\n# A title\n\ntext")); got != "A title" {
		t.Errorf("Title = %q", got)
	}
	html, err := render.HTML([]byte("# A title\n\nFirst **bold** line,\nsee [the page](/x) and `expandable_segments:True`.\n\n## Two words\n\nSecond.\n\n```sh\nls\n```\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Summary(string(html)), "First bold line, see the page and expandable_segments:True."; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if hs := Headings(string(html)); len(hs) != 1 || hs[0] != (Heading{"two-words", "Two words"}) {
		t.Errorf("Headings = %+v", hs)
	}
	if got := PlainText(string(html)); strings.Contains(got, "Copy") || !strings.HasSuffix(got, "Second. ls") {
		t.Errorf("PlainText = %q", got)
	}
	for _, tt := range []struct {
		name string
		ok   bool
	}{{"1-a.md", true}, {"x-a.md", false}, {"1.md", false}, {"1-a.txt", false}} {
		if _, _, ok := SplitName(tt.name); ok != tt.ok {
			t.Errorf("SplitName(%q) ok = %v", tt.name, ok)
		}
	}
}

// TestRender checks the site's additions to Markdown: claims on links,
// copyable keyboard-scrollable code, focusable tables.
func TestRender(t *testing.T) {
	html, err := render.HTML([]byte("[fits](/estimate?a=b \"expect: fits\") [plain](/x \"a title\")\n\n```\nx\n```\n\n| a |\n|---|\n| 1 |\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<a href="/estimate?a=b" data-expect="fits">fits</a>`,
		`<a href="/x" title="a title">plain</a>`,
		`<button type="button" class="copy-code">Copy</button><pre tabindex="0"><code>x`,
		`<div class="table-wrap" tabindex="0" role="region" aria-label="Table"><table>`,
	} {
		if !strings.Contains(string(html), want) {
			t.Errorf("rendered HTML lacks %s:\n%s", want, html)
		}
	}
}
