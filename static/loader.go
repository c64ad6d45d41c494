package static

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// appCSS replaces go-app's app.css: the loader becomes a small progress
// badge in a corner instead of a curtain over the page, because every page's
// prerendered HTML is already the real page (content first, wasm second).
//
//go:embed app.css
var appCSS string

// loaderPatch is one edit of go-app's generated app.js (v10.1.11): old
// must occur exactly once.
type loaderPatch struct{ why, old, new string }

// loaderPatches returns the edits that make go-app's loader fit a static
// site whose pages are readable before the wasm runs:
//
//   - Static pages (data-static-page: the guides, 404) do not load the wasm
//     at all, and the browser app follows links to them with a full page
//     load (GOAPP_INTERNAL_URLS), since it does not render them.
//   - app.wasm is fetched with revalidation (so a stale HTTP-cached copy is
//     never kept) and, on a visit the service worker does not control yet,
//     handed to the worker's cache; the worker is registered only after
//     that, and its install skips what the cache already holds
//     (worker.js), so the first visit downloads app.wasm once, not twice.
func loaderPatches(staticPrefixes []string) []loaderPatch {
	prefixes, _ := json.Marshal(staticPrefixes)
	return []loaderPatch{
		{"register the service worker after the wasm arrived",
			"goappInitServiceWorker();\ngoappWatchForUpdate();",
			"goappWatchForUpdate();"},
		{"follow links to static pages with a full load",
			"const goappEnv = ",
			"// Static pages are not routed by the browser app (app.StaticPrefixes).\n" +
				"const oomscopeStaticPrefixes = " + string(prefixes) + ";\n" +
				"let oomscopeHandOver = Promise.resolve();\n" +
				"const goappEnv = "},
		{"set the internal URLs once the environment exists",
			"const goappLoadingLabel = ",
			"goappEnv.GOAPP_INTERNAL_URLS = JSON.stringify(oomscopeStaticPrefixes.map(\n" +
				"  (p) => location.origin + goappEnv.GOAPP_ROOT_PREFIX.replace(/\\/$/, \"\") + p));\n" +
				"const goappLoadingLabel = "},
		{"load the wasm, then hand it over and register the worker",
			"async function goappInitWebAssembly() {",
			"async function goappInitWebAssembly() {\n" +
				"  try {\n" +
				"    await oomscopeLoadWebAssembly();\n" +
				"  } finally {\n" +
				"    await oomscopeHandOver;\n" +
				"    goappInitServiceWorker();\n" +
				"  }\n" +
				"}\n\n" +
				"// oomscopeKeep puts the app.wasm this page downloaded into the cache of\n" +
				"// its version, for the service worker registered next.\n" +
				"async function oomscopeKeep(url, response) {\n" +
				"  try {\n" +
				"    const cache = await caches.open(\"app-\" + goappEnv.GOAPP_VERSION);\n" +
				"    await cache.put(new URL(url, location.href).href, response);\n" +
				"  } catch (err) {\n" +
				"    // The worker downloads it itself.\n" +
				"  }\n" +
				"}\n\n" +
				"async function oomscopeLoadWebAssembly() {"},
		{"skip the wasm on static pages",
			`return urlParams.get("wasm") !== "false";`,
			`return urlParams.get("wasm") !== "false" && !document.querySelector("[data-static-page]");`},
		{"revalidate app.wasm and keep a copy for the worker",
			"const response = await fetch(url);",
			"const response = await fetch(url, { cache: \"no-cache\" });\n" +
				"  if (response.ok && \"caches\" in self && \"serviceWorker\" in navigator && !navigator.serviceWorker.controller) {\n" +
				"    oomscopeHandOver = oomscopeKeep(url, response.clone());\n" +
				"  }"},
	}
}

// patchLoader applies loaderPatches to go-app's app.js. It fails when
// go-app's text changed, so that an upgrade cannot silently undo them.
func patchLoader(js string, staticPrefixes []string) (string, error) {
	for _, p := range loaderPatches(staticPrefixes) {
		if n := strings.Count(js, p.old); n != 1 {
			return "", fmt.Errorf("static: app.js patch %q: found %d times, want 1 (did go-app change?)", p.why, n)
		}
		js = strings.Replace(js, p.old, p.new, 1)
	}
	return js, nil
}
