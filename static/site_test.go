package static

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	ui "oomscope/app"
	"oomscope/content"
)

// buildTestSite runs the generator on a stand-in wasm file.
func buildTestSite(t *testing.T, base, wasm string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "web"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "web", "app.wasm"), []byte(wasm), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := Build(Options{Out: dir, Base: base})
	if err != nil {
		t.Fatal(err)
	}
	return dir, v
}

func TestBuildWritesEveryRoute(t *testing.T) {
	dir, version := buildTestSite(t, "/", "stand-in wasm")
	for _, r := range ui.Routes() {
		name := pageFile(r.Path)
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("route %s: %v", r.Path, err)
			continue
		}
		html := string(b)
		if !strings.Contains(html, `http-equiv="Content-Security-Policy"`) {
			t.Errorf("%s has no CSP", name)
		}
		if !strings.Contains(html, ui.PrivacyLine) {
			t.Errorf("%s lacks the privacy line", name)
		}
		// Nothing is loaded from another host.
		for _, m := range regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(html, -1) {
			if strings.Contains(m[1], "://") || strings.HasPrefix(m[1], "//") {
				t.Errorf("%s loads %s from another host", name, m[1])
			}
		}
	}
	worker, _ := os.ReadFile(filepath.Join(dir, "app-worker.js"))
	if !strings.Contains(string(worker), `"app-" + "`+version+`"`) {
		t.Errorf("worker does not carry version %s", version)
	}
	for _, want := range []string{`"/web/app.wasm"`, `"/estimate"`, `"/web/icon.svg"`, `"/web/css/main.css"`, `cache: "reload"`} {
		if !strings.Contains(string(worker), want) {
			t.Errorf("worker lacks %s", want)
		}
	}
	var manifest struct {
		StartURL string `json:"start_url"`
		Icons    []struct{ Src string }
	}
	b, _ := os.ReadFile(filepath.Join(dir, "manifest.webmanifest"))
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Icons) < 3 {
		t.Errorf("manifest icons: %+v", manifest.Icons)
	}
	for _, ic := range manifest.Icons {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(ic.Src))); err != nil {
			t.Errorf("manifest icon %s missing: %v", ic.Src, err)
		}
	}
}

func TestVersionFollowsContent(t *testing.T) {
	_, v1 := buildTestSite(t, "/", "wasm one")
	_, v1again := buildTestSite(t, "/", "wasm one")
	_, v2 := buildTestSite(t, "/", "wasm two")
	if v1 != v1again {
		t.Errorf("same input, versions %s and %s: builds are not reproducible", v1, v1again)
	}
	if v1 == v2 {
		t.Errorf("different wasm, same version %s", v1)
	}
}

func TestBuildSubPath(t *testing.T) {
	dir, _ := buildTestSite(t, "/oomscope/", "stand-in wasm")
	b, _ := os.ReadFile(filepath.Join(dir, "guides", "measure.html"))
	html := string(b)
	for _, want := range []string{`href="/oomscope/web/css/main.css"`, `src="/oomscope/app.js"`, `href="/oomscope/snapshot"`} {
		if !strings.Contains(html, want) {
			t.Errorf("sub-path page lacks %s", want)
		}
	}
	m, _ := os.ReadFile(filepath.Join(dir, "manifest.webmanifest"))
	if !strings.Contains(string(m), `"start_url":"/oomscope/?pwa"`) {
		t.Errorf("manifest start_url not under the sub-path: %s", m)
	}
}

func TestIconsDrawn(t *testing.T) {
	for _, size := range []int{192, 512} {
		img := drawIcon(size, false)
		if img.Bounds().Dx() != size {
			t.Fatalf("icon size %d", img.Bounds().Dx())
		}
		// Corners of the plain icon are transparent (rounded tile); the
		// maskable icon is full bleed.
		if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
			t.Errorf("plain icon corner is not transparent")
		}
		if _, _, _, a := drawIcon(size, true).At(0, 0).RGBA(); a == 0 {
			t.Errorf("maskable icon corner is transparent")
		}
	}
}

// TestPrerenderReadsRight: the prerendered pages mean what the app shows,
// before any script runs (fixPrerender).
func TestPrerenderReadsRight(t *testing.T) {
	dir, _ := buildTestSite(t, "/", "stand-in wasm")
	b, err := os.ReadFile(filepath.Join(dir, "estimate.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if m := regexp.MustCompile(`\s(selected|checked|disabled|hidden)="false"`).FindString(html); m != "" {
		t.Errorf("estimate.html still has %q", m)
	}
	// One selected option per select, and it is the default request's.
	for _, sel := range regexp.MustCompile(`(?s)<select[^>]*id="est-([a-z_]+)"[^>]*>(.*?)</select>`).FindAllStringSubmatch(html, -1) {
		opts := regexp.MustCompile(`<option[^>]*\sselected[\s>][^>]*|<option[^>]*\sselected>`).FindAllString(sel[2], -1)
		if len(opts) != 1 {
			t.Errorf("select est-%s has %d selected options", sel[1], len(opts))
		}
	}
	// Enumerated attributes keep "false": it means false for them.
	if got := fixPrerender(`<button aria-pressed="false" spellcheck="false"><option selected="false" value="x"><input checked="false">`, false); got != `<button aria-pressed="false" spellcheck="false"><option value="x"><input>` {
		t.Errorf("fixPrerender = %s", got)
	}
	if got := fixPrerender(`<p>the text selected=&#34;false&#34;</p>`, false); !strings.Contains(got, "selected=&#34;false&#34;") {
		t.Errorf("fixPrerender changed text: %s", got)
	}
	// Without a domain there are no "https://" og: links.
	if strings.Contains(html, `content="https://"`) || strings.Contains(html, `content="https:///`) {
		t.Errorf("estimate.html has og: links without a host")
	}
	// The loader is a status badge with a decorative icon.
	if !regexp.MustCompile(`<aside[^>]*id="app-wasm-loader"[^>]*role="status"`).MatchString(html) || strings.Contains(html, "wasm loader icon") {
		t.Errorf("loader not marked up as a status badge")
	}
}

// TestStaticPages: guides and 404 are marked static (app.js skips the wasm
// there) and tool pages are not; the loader patches are in app.js.
func TestStaticPages(t *testing.T) {
	dir, _ := buildTestSite(t, "/", "stand-in wasm")
	for _, r := range ui.Routes() {
		b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(pageFile(r.Path))))
		if got := strings.Contains(string(b), "data-static-page"); got != r.Static {
			t.Errorf("%s: data-static-page %v, want %v", r.Path, got, r.Static)
		}
	}
	js, _ := os.ReadFile(filepath.Join(dir, "app.js"))
	for _, p := range loaderPatches(ui.StaticPrefixes) {
		if !strings.Contains(string(js), p.new) {
			t.Errorf("app.js lacks the patch %q", p.why)
		}
	}
	if _, err := patchLoader("go-app changed", ui.StaticPrefixes); err == nil {
		t.Errorf("patchLoader accepted a loader it does not know")
	}
	css, _ := os.ReadFile(filepath.Join(dir, "app.css"))
	if string(css) != appCSS {
		t.Errorf("app.css is go-app's, not the badge")
	}
	nf, err := os.ReadFile(filepath.Join(dir, "404.html"))
	if err != nil || !strings.Contains(string(nf), "ran out of memory") {
		t.Errorf("404.html: %v", err)
	}
}

func TestSitemapAndSearchIndex(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "web"), 0o755)
	os.WriteFile(filepath.Join(dir, "web", "app.wasm"), []byte("wasm"), 0o644)
	if _, err := Build(Options{Out: dir, Base: "/oomscope/", SiteURL: "https://example.org/oomscope/"}); err != nil {
		t.Fatal(err)
	}
	sm, _ := os.ReadFile(filepath.Join(dir, "sitemap.xml"))
	for _, r := range ui.Routes() {
		loc := "<loc>https://example.org/oomscope" + r.Path + "</loc>"
		if got := strings.Contains(string(sm), loc); got != (r.Path != ui.NotFoundPath) {
			t.Errorf("sitemap has %s: %v", loc, got)
		}
	}
	robots, _ := os.ReadFile(filepath.Join(dir, "robots.txt"))
	if !strings.Contains(string(robots), "Sitemap: https://example.org/oomscope/sitemap.xml") {
		t.Errorf("robots.txt = %s", robots)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "estimate.html"))
	if !strings.Contains(string(page), `content="https://example.org/oomscope/estimate"`) {
		t.Errorf("og:url not absolute with a site URL")
	}
	var idx []SearchEntry
	b, _ := os.ReadFile(filepath.Join(dir, "web", "search.json"))
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	gs := content.Guides()
	if len(idx) != len(gs) {
		t.Fatalf("search index has %d guides, want %d", len(idx), len(gs))
	}
	for i, g := range gs {
		if idx[i].URL != "/oomscope/guides/"+g.Slug || idx[i].Title != g.Title || !strings.Contains(idx[i].Text, g.Summary) {
			t.Errorf("search entry %d = %+v", i, idx[i].URL)
		}
	}
}

// pageFile is the file the generator writes for a route.
func pageFile(route string) string {
	if route == "/" {
		return "index.html"
	}
	return strings.TrimPrefix(route, "/") + ".html"
}
