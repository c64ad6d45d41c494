package content

import (
	"bytes"
	"regexp"
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
		src, err := Sources.ReadFile("guides/" + itoa(g.Order) + "-" + g.Slug + ".md")
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
	title, sum := Meta([]byte("# A title\n\nFirst **bold** line,\nsee [the page](/x) and `code`.\n\nSecond."))
	if title != "A title" || sum != "First bold line, see the page and code." {
		t.Errorf("Meta = %q, %q", title, sum)
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

func itoa(n int) string { return string(rune('0' + n)) }
