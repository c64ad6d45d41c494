// Package static writes OOMScope's static site and serves it.
//
// Build prerenders every route of package app into HTML, writes go-app's
// loader, manifest and service worker, copies the assets in web/ and draws
// the PNG icons. The wasm binaries must already be in <out>/web: the
// site's Version is a hash of everything served, so any change to the code
// or the assets makes clients update. Server serves the result the way a
// static host does (/route → route.html, gzip, application/wasm).
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	ui "oomscope/app"
)

//go:embed web
var assets embed.FS

//go:embed worker.js
var workerJS string

// CSP is the Content-Security-Policy of every page: only this origin, plus
// what WebAssembly needs to compile. It is a <meta> tag, so it also holds on
// hosts that send no headers.
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob:; connect-src 'self'; worker-src 'self'; font-src 'self'; " +
	"object-src 'none'; base-uri 'self'; form-action 'none'; manifest-src 'self'"

// Options says where and how to build the site.
type Options struct {
	Out   string // output directory; <Out>/web/app.wasm must exist
	Base  string // path the site is served under: "/" or e.g. "/repo/"
	Label string // optional human build label shown in the footer
	// SiteURL is the public URL of the site's root, e.g.
	// "https://user.github.io/oomscope/": it makes the sitemap's and the
	// og:url/og:image links absolute. Optional.
	SiteURL string
	// Precompress writes .gz copies (and .br ones when Brotli > 0, at that
	// quality, 1–11) of every text and wasm file for Server and hosts that
	// serve precompressed files.
	Precompress bool
	Brotli      int
}

// prefix returns the base path without trailing slash ("" for the root).
func (o Options) prefix() string {
	b := "/" + strings.Trim(o.Base, "/")
	if b == "/" {
		return ""
	}
	return b
}

// Build writes the site into o.Out and returns its version.
func Build(o Options) (version string, err error) {
	wasm, err := os.Stat(filepath.Join(o.Out, "web", "app.wasm"))
	if err != nil {
		return "", fmt.Errorf("static: build the wasm first: %w", err)
	}
	if err := copyAssets(filepath.Join(o.Out, "web")); err != nil {
		return "", err
	}
	if err := writeIcons(filepath.Join(o.Out, "web")); err != nil {
		return "", err
	}
	if err := writeSearchIndex(filepath.Join(o.Out, "web"), o.prefix()); err != nil {
		return "", err
	}
	webFiles, err := listFiles(filepath.Join(o.Out, "web"))
	if err != nil {
		return "", err
	}
	// What the generator itself writes (worker, loader, badge) is part of
	// the version too, so that a change to them updates clients.
	loader, _ := json.Marshal(loaderPatches(ui.StaticPrefixes))
	version, err = hashFiles(filepath.Join(o.Out, "web"), webFiles, o.prefix(), o.Label, o.SiteURL, workerJS, appCSS, string(loader))
	if err != nil {
		return "", err
	}
	h := Handler(o, version, wasm.Size(), webFiles)
	// The host-side prerender reads these with app.Getenv (os.Getenv there).
	os.Setenv("GOAPP_VERSION", version)
	os.Setenv("GOAPP_ROOT_PREFIX", o.prefix())
	os.Setenv("OOMSCOPE_LABEL", o.Label)
	ui.Register()
	var pages []string
	for _, r := range ui.Routes() {
		pages = append(pages, r.Path)
	}
	if err := app.GenerateStaticWebsite(o.Out, h, pages...); err != nil {
		return "", fmt.Errorf("static: generate: %w", err)
	}
	if err := finish(o); err != nil {
		return "", err
	}
	if err := writeSitemap(o.Out, o.SiteURL, o.prefix()); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(o.Out, "version.txt"), []byte(version+"\n"), 0o644); err != nil {
		return "", err
	}
	if o.Precompress {
		if err := Precompress(o.Out, o.Brotli); err != nil {
			return "", err
		}
	}
	return version, nil
}

// finish rewrites what go-app generated: the pages (fixPrerender), the
// loader (patchLoader) and its stylesheet (appCSS).
func finish(o Options) error {
	err := filepath.WalkDir(o.Out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, []byte(fixPrerender(string(b), o.SiteURL != "")), 0o644)
	})
	if err != nil {
		return err
	}
	js, err := os.ReadFile(filepath.Join(o.Out, "app.js"))
	if err != nil {
		return err
	}
	patched, err := patchLoader(string(js), ui.StaticPrefixes)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.Out, "app.js"), []byte(patched), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.Out, "app.css"), []byte(appCSS), 0o644)
}

// Handler returns the go-app handler that describes the site. webFiles are
// the paths under <out>/web (slash-separated, relative to web/); all of them
// are precached, with every route.
func Handler(o Options, version string, wasmSize int64, webFiles []string) *app.Handler {
	var styles, cacheable []string
	styles = append(styles, "/web/css/main.css")
	for _, f := range webFiles {
		if f == "theme.js" || f == "site.js" {
			continue // linked as scripts below, which go-app precaches
		}
		cacheable = append(cacheable, "/web/"+f)
		if strings.HasPrefix(f, "css/") && strings.HasSuffix(f, ".css") && f != "css/main.css" {
			styles = append(styles, "/web/"+f)
		}
	}
	for _, r := range ui.Routes() {
		cacheable = append(cacheable, r.Path)
	}
	var res app.ResourceResolver = app.LocalDir("")
	if p := o.prefix(); p != "" {
		res = app.PrefixedLocation(p)
	}
	env := map[string]string{}
	if o.Label != "" {
		env["OOMSCOPE_LABEL"] = o.Label
	}
	var domain, image string
	if u, err := url.Parse(o.SiteURL); err == nil && u.Host != "" {
		domain, image = u.Host, "/web/icon-512.png"
	}
	return &app.Handler{
		Name:        "OOMScope",
		ShortName:   "OOMScope",
		Title:       "OOMScope: why did my GPU run out of memory?",
		Description: "Estimate GPU memory, triage CUDA out-of-memory errors and analyse PyTorch memory snapshots, entirely in your browser.",
		Author:      "OOMScope",
		Domain:      domain,
		Image:       image,
		Keywords:    []string{"PyTorch", "CUDA", "out of memory", "OOM", "GPU memory", "memory snapshot", "estimator"},
		Lang:        "en",
		Icon: app.Icon{
			Default:  "/web/icon-192.png",
			Large:    "/web/icon-512.png",
			Maskable: "/web/icon-maskable-512.png",
			SVG:      "/web/icon.svg",
		},
		BackgroundColor: "#0f172a",
		ThemeColor:      "#0f172a",
		LoadingLabel:    "Loading the tools… {progress}%",
		Styles:          styles,
		// theme.js runs before the page is drawn (no flash of the wrong
		// theme); site.js is the progressive enhancement every page gets
		// without the wasm app (copy buttons, guide search, embed).
		Scripts:               []string{"/web/theme.js", "/web/site.js defer"},
		RawHeaders:            []string{`<meta http-equiv="Content-Security-Policy" content="` + CSP + `">`},
		CacheableResources:    cacheable,
		Resources:             res,
		Version:               version,
		Env:                   env,
		WasmContentLength:     strconv.FormatInt(wasmSize, 10),
		ServiceWorkerTemplate: workerJS,
		StartURL:              "/?pwa",
	}
}

// copyAssets writes the embedded web/ tree into dir.
func copyAssets(dir string) error {
	return fs.WalkDir(assets, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "web")))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// listFiles returns the regular files under dir, slash-separated and sorted.
func listFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if !isCompressed(rel) {
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	sort.Strings(out)
	return out, err
}

// hashFiles returns the first 16 hex digits of a SHA-256 over the names and
// contents of files (relative to dir) and the extra strings.
func hashFiles(dir string, files []string, extra ...string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		fh, err := os.Open(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00", path.Clean(f))
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return "", err
		}
	}
	for _, e := range extra {
		fmt.Fprintf(h, "\x00%s", e)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
