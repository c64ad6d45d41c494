package app

import (
	"html"
	"net/url"
	"regexp"
	"testing"

	"oomscope/content"
	"oomscope/estimator"
)

// TestGuidePresets checks that every preset link in the guides opens its
// tool in a valid state: estimator queries parse, triage examples exist.
func TestGuidePresets(t *testing.T) {
	link := regexp.MustCompile(`href="(/(?:estimate|triage)\?[^"]*)"`)
	n := 0
	for _, g := range content.Guides() {
		for _, m := range link.FindAllStringSubmatch(g.HTML, -1) {
			n++
			u, err := url.Parse(html.UnescapeString(m[1]))
			if err != nil {
				t.Errorf("guide %s: bad link %s: %v", g.Slug, m[1], err)
				continue
			}
			switch u.Path {
			case "/estimate":
				if _, err := estimator.ParseQuery(u.Query()); err != nil {
					t.Errorf("guide %s: %s: %v", g.Slug, m[1], err)
				}
			case "/triage":
				if _, ok := exampleByID(u.Query().Get(triageExampleKey)); !ok {
					t.Errorf("guide %s: %s names no triage example", g.Slug, m[1])
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no preset link found in the guides")
	}
}
