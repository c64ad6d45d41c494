package static

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	ui "oomscope/app"
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
		name := strings.TrimPrefix(r.Path, "/") + ".html"
		if r.Path == "/" {
			name = "index.html"
		}
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
