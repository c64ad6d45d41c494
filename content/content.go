// Package content holds the guides: Markdown files in guides/, rendered to
// HTML at build time (go generate ./content writes rendered/) and embedded
// into the site. The browser gets the rendered HTML; no Markdown renderer is
// linked into the wasm binary.
package content

//go:generate go run ./cmd/render

import (
	"embed"
	stdhtml "html"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Sources holds the guides' Markdown, named "<order>-<slug>.md".
//
//go:embed guides/*.md
var Sources embed.FS

//go:embed rendered/*.html
var rendered embed.FS

// Guide is one guide page.
type Guide struct {
	Slug     string    // URL name: /guides/<slug>
	Order    int       // position in the guide list
	Title    string    // the Markdown's first "# " heading
	Summary  string    // the first paragraph after the title, as plain text
	HTML     string    // rendered body, without the title heading
	Headings []Heading // the body's second-level headings, in order
	Text     string    // the body as plain text (for the search index)
}

// Heading is a section of a guide.
type Heading struct {
	ID   string // the element id: /guides/<slug>#<id>
	Text string
}

// Guides returns every guide in reading order. The list is read from the
// embedded files once; callers must not modify it.
var Guides = sync.OnceValue(readGuides)

func readGuides() []Guide {
	entries, _ := Sources.ReadDir("guides")
	var gs []Guide
	for _, e := range entries {
		order, slug, ok := SplitName(e.Name())
		if !ok {
			continue
		}
		md, _ := Sources.ReadFile(path.Join("guides", e.Name()))
		b, _ := rendered.ReadFile(path.Join("rendered", slug+".html"))
		h := string(b)
		gs = append(gs, Guide{Slug: slug, Order: order, Title: Title(md), Summary: Summary(h), HTML: h, Headings: Headings(h), Text: PlainText(h)})
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].Order < gs[j].Order })
	return gs
}

// Find returns the guide with the given slug.
func Find(slug string) (Guide, bool) {
	for _, g := range Guides() {
		if g.Slug == slug {
			return g, true
		}
	}
	return Guide{}, false
}

// SplitName splits a guide file name "3-fix-cheapest-first.md" into its
// order and slug.
func SplitName(name string) (order int, slug string, ok bool) {
	base, found := strings.CutSuffix(name, ".md")
	if !found {
		return 0, "", false
	}
	num, slug, found := strings.Cut(base, "-")
	n, err := strconv.Atoi(num)
	if !found || err != nil || slug == "" {
		return 0, "", false
	}
	return n, slug, true
}

// Title returns a guide's title: its first "# " line.
func Title(md []byte) string {
	for _, line := range strings.Split(string(md), "\n") {
		if t, ok := strings.CutPrefix(line, "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

var (
	firstPara = regexp.MustCompile(`(?s)<p>(.*?)</p>`)
	h2        = regexp.MustCompile(`(?s)<h2 id="([^"]+)">(.*?)</h2>`)
	tag       = regexp.MustCompile(`<[^>]*>`)
	blockTag  = regexp.MustCompile(`(?i)</?(?:p|li|ul|ol|h[1-6]|pre|div|table|thead|tbody|tr|td|th|blockquote|br|hr)\b[^>]*>`)
	space     = regexp.MustCompile(`\s+`)
	// boilerplate is rendered markup that is not text: the code blocks'
	// Copy buttons.
	boilerplate = regexp.MustCompile(`<button[^>]*>.*?</button>`)
)

// Summary returns the text of the first paragraph of a rendered guide.
// It reads the HTML, not the Markdown, so code spans keep their
// underscores ("expandable_segments").
func Summary(html string) string {
	m := firstPara.FindStringSubmatch(html)
	if m == nil {
		return ""
	}
	return PlainText(m[1])
}

// Headings returns the second-level headings of a rendered guide.
func Headings(html string) []Heading {
	var hs []Heading
	for _, m := range h2.FindAllStringSubmatch(html, -1) {
		hs = append(hs, Heading{ID: m[1], Text: PlainText(m[2])})
	}
	return hs
}

// PlainText reduces rendered HTML to its text on one line: block elements
// are separated by a space, inline ones (code, links, emphasis) vanish.
func PlainText(html string) string {
	s := boilerplate.ReplaceAllString(html, " ")
	s = blockTag.ReplaceAllString(s, " ")
	s = tag.ReplaceAllString(s, "")
	s = stdhtml.UnescapeString(s)
	s = space.ReplaceAllString(s, " ")
	return strings.TrimSpace(s)
}
