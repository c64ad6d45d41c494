package static

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"

	ui "oomscope/app"
	"oomscope/content"
)

// SearchEntry is one guide in the search index (web/search.json) that
// static/web/site.js searches in the page, offline, without the wasm app.
type SearchEntry struct {
	URL      string          `json:"url"` // with the site's prefix
	Title    string          `json:"title"`
	Summary  string          `json:"summary"`
	Sections []SearchSection `json:"sections"`
	Text     string          `json:"text"`
}

// SearchSection is a second-level heading of a guide.
type SearchSection struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// writeSearchIndex writes web/search.json from the guides.
func writeSearchIndex(webDir, prefix string) error {
	var idx []SearchEntry
	for _, g := range content.Guides() {
		e := SearchEntry{URL: prefix + ui.GuidesPath + "/" + g.Slug, Title: g.Title, Summary: g.Summary, Text: g.Text}
		for _, h := range g.Headings {
			e.Sections = append(e.Sections, SearchSection{h.ID, h.Text})
		}
		idx = append(idx, e)
	}
	b, err := json.Marshal(idx)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(webDir, "search.json"), b, 0o644)
}

// writeSitemap writes sitemap.xml (every page but the 404) and robots.txt.
// Sitemaps need absolute URLs: without siteURL the locations are paths from
// the host's root, and robots.txt does not point to the sitemap.
func writeSitemap(out, siteURL, prefix string) error {
	type loc struct {
		Loc string `xml:"loc"`
	}
	var set struct {
		XMLName xml.Name `xml:"urlset"`
		NS      string   `xml:"xmlns,attr"`
		URLs    []loc    `xml:"url"`
	}
	set.NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
	base := strings.TrimSuffix(siteURL, "/")
	if base == "" {
		base = prefix
	}
	for _, r := range ui.Routes() {
		if r.Path == ui.NotFoundPath {
			continue
		}
		set.URLs = append(set.URLs, loc{base + r.Path})
	}
	b, err := xml.MarshalIndent(set, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "sitemap.xml"), append([]byte(xml.Header), b...), 0o644); err != nil {
		return err
	}
	robots := "User-agent: *\nAllow: /\n"
	if siteURL != "" {
		robots += "Sitemap: " + base + "/sitemap.xml\n"
	}
	return os.WriteFile(filepath.Join(out, "robots.txt"), []byte(robots), 0o644)
}
