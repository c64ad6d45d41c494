// Package content holds the guides: Markdown files in guides/, rendered to
// HTML at build time (go generate ./content writes rendered/) and embedded
// into the site. The browser gets the rendered HTML; no Markdown renderer is
// linked into the wasm binary.
package content

//go:generate go run ./cmd/render

import (
	"embed"
	"path"
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
	Slug    string // URL name: /guides/<slug>
	Order   int    // position in the guide list
	Title   string // the Markdown's first "# " heading
	Summary string // the first paragraph after the title
	HTML    string // rendered body, without the title heading
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
		title, summary := Meta(md)
		html, _ := rendered.ReadFile(path.Join("rendered", slug+".html"))
		gs = append(gs, Guide{Slug: slug, Order: order, Title: title, Summary: summary, HTML: string(html)})
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

// Meta returns a guide's title (its first "# " line) and summary (the first
// paragraph after it, with Markdown emphasis and links reduced to text).
func Meta(md []byte) (title, summary string) {
	lines := strings.Split(string(md), "\n")
	i := 0
	for ; i < len(lines); i++ {
		if t, ok := strings.CutPrefix(lines[i], "# "); ok {
			title = strings.TrimSpace(t)
			i++
			break
		}
	}
	for ; i < len(lines) && strings.TrimSpace(lines[i]) == ""; i++ {
	}
	var para []string
	for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		para = append(para, strings.TrimSpace(lines[i]))
	}
	return title, plain(strings.Join(para, " "))
}

// plain strips Markdown emphasis, code marks and link targets.
func plain(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '*', '_', '`':
		case '[':
		case ']':
			if j := strings.IndexByte(s[i:], ')'); i+1 < len(s) && s[i+1] == '(' && j > 0 {
				i += j
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
