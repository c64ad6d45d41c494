//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	ui "oomscope/app"
)

// routeName turns a route path into a file-friendly name.
func routeName(p string) string {
	if p == "/" {
		return "home"
	}
	return strings.ReplaceAll(strings.Trim(p, "/"), "/", "-")
}

// pages returns every page a visitor reaches by a link: the routes but the
// 404 page, which has its own test.
func pages() []ui.Route {
	var rs []ui.Route
	for _, r := range ui.Routes() {
		if r.Path != ui.NotFoundPath {
			rs = append(rs, r)
		}
	}
	return rs
}

// heading returns the page's first <h1> text once the app has rendered one.
func heading(tb *tab) string {
	return poll[string](tb, `(() => { const h = document.querySelector("main h1"); return h ? h.textContent : ""; })()`, 20*time.Second)
}

// TestRoutes loads every route, checks it renders its own page with no
// console error, takes a screenshot, and proves the session only talked to
// the local server.
func TestRoutes(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	for _, r := range pages() {
		tb.open(r.Path)
		h := heading(tb)
		if r.Path != "/" && !strings.Contains(h, strings.SplitN(r.Title, " ", 2)[0]) {
			t.Errorf("%s: heading %q does not name the page %q", r.Path, h, r.Title)
		}
		if got := tb.text("footer .privacy"); !strings.Contains(got, "leaves this page") {
			t.Errorf("%s: footer privacy line = %q", r.Path, got)
		}
		if !r.Static {
			tb.screenshot("route-" + routeName(r.Path)) // TestAccessibility shoots every page
		}
	}
	tb.setViewport(375, 800)
	tb.open("/")
	tb.screenshot("route-home-phone")
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// clickThrough clicks each header link and each home card, checking that the
// app navigates to the right page under the site's prefix.
func clickThrough(t *testing.T, tb *tab, prefix string) {
	t.Helper()
	tb.open("/")
	for _, r := range ui.Routes() {
		if !r.Nav {
			continue
		}
		link := fmt.Sprintf(`header nav a[href="%s%s"]`, prefix, r.Path)
		if r.Static {
			// The app does not render static pages: a full page load.
			tb.clickAndWaitReload(link)
		} else {
			tb.click(link)
		}
		got := poll[string](tb, fmt.Sprintf(`location.pathname === %q && document.querySelector("main h1") ? location.pathname : ""`, prefix+r.Path), 20*time.Second)
		if got != prefix+r.Path {
			t.Errorf("clicking %s went to %s", r.Title, got)
		}
		if a := tb.text("header nav a.active"); a != r.Title {
			t.Errorf("on %s the active nav item is %q", r.Path, a)
		}
	}
	// The brand goes home; a home card goes to its tool; a guide's link
	// to a tool keeps the prefix too.
	// (The last nav item is the guide list, a static page: a full load.)
	tb.clickAndWaitReload("header a.brand")
	poll[bool](tb, fmt.Sprintf(`location.pathname === %q`, prefix+"/"), 20*time.Second)
	tb.click(fmt.Sprintf(`a.tool-card[href="%s/triage"]`, prefix))
	poll[bool](tb, fmt.Sprintf(`location.pathname === %q`, prefix+"/triage"), 20*time.Second)
	tb.open("/guides/read-the-message")
	tb.click(fmt.Sprintf(`.guide-body a[href="%s/triage"]`, prefix))
	poll[bool](tb, fmt.Sprintf(`location.pathname === %q`, prefix+"/triage"), 20*time.Second)
}

// TestNavigation clicks through the site at the root of a host.
func TestNavigation(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	clickThrough(t, tb, "")
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// offlineRoutes loads the site once, waits until the service worker holds
// it, switches the network off and loads every route again.
func offlineRoutes(t *testing.T, s *site, version string) *tab {
	tb := newTab(t, s)
	tb.open("/")
	tb.waitOfflineReady(version)
	if evalJS[bool](tb, `!!document.getElementById("update-banner")`) {
		t.Errorf("the first visit offers an update")
	}
	tb.requireWatched("service_worker")
	tb.goOffline()
	for _, r := range pages() {
		tb.open(r.Path)
		h := heading(tb)
		if r.Path != "/" && !strings.Contains(h, strings.SplitN(r.Title, " ", 2)[0]) {
			t.Errorf("offline %s: heading %q", r.Path, h)
		}
	}
	// A route with a query string, as shared links and iframes use.
	tb.open("/estimate?model=llama-3.1-8b")
	heading(tb)
	// A path the site does not have: the 404 page, from the cache.
	tb.open(missingPage)
	if h := heading(tb); !strings.Contains(h, "ran out of memory") {
		t.Errorf("offline unknown path: heading %q", h)
	}
	return tb
}

// TestOffline: after the first visit every route loads with no network.
// The server sends no-store, so only the service worker can answer.
func TestOffline(t *testing.T) {
	dir := distDir(t)
	s := serveSite(t, dir, "", "no-store")
	tb := offlineRoutes(t, s, siteVersion(t, dir))
	// The first visit downloaded app.wasm once: the page handed its copy to
	// the service worker, which did not fetch it again.
	n := 0
	for _, r := range s.requests() {
		if r.Path == "/web/app.wasm" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("app.wasm was requested %d times on the first visit, want 1", n)
	}
	tb.screenshot("offline-estimate")
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// TestSubPath builds the site for /oomscope/ (GitHub Pages style) and checks
// that links keep the prefix, and that it works offline too.
func TestSubPath(t *testing.T) {
	dir, version := buildVariant(t, "/oomscope/", "")
	s := serveSite(t, dir, "/oomscope", "no-store")
	tb := newTab(t, s)
	clickThrough(t, tb, "/oomscope")
	tb.assertClean()
	assertLocalOnly(t, tb, s)

	s2 := serveSite(t, dir, "/oomscope", "no-store")
	tb2 := offlineRoutes(t, s2, version)
	tb2.assertClean()
	assertLocalOnly(t, tb2, s2)
}

// TestUpdate deploys a new version while a visitor has the old one: the page
// offers the update and shows the new version after the reload, even with
// the HTTP caching a static host sends.
func TestUpdate(t *testing.T) {
	v1dir, v1 := buildVariant(t, "/", "release-one")
	v2dir, v2 := buildVariant(t, "/", "release-two")
	if v1 == v2 {
		t.Fatalf("two builds with different labels have the same version %s", v1)
	}
	s := serveSite(t, v1dir, "", "public, max-age=600")
	tb := newTab(t, s)
	tb.open("/")
	tb.waitOfflineReady(v1)
	if got := tb.text("#site-version"); !strings.Contains(got, "release-one") || !strings.Contains(got, v1) {
		t.Fatalf("v1 footer shows %q", got)
	}
	s.swap(v2dir)
	tb.do(chromedp.Reload())
	tb.waitReady()
	poll[bool](tb, `document.body.getAttribute("data-update-available") === "true" && !!document.getElementById("update-banner")`, 60*time.Second)
	tb.screenshot("update-banner")
	tb.clickAndWaitReload("#update-reload")
	got := poll[string](tb, fmt.Sprintf(`(() => { const e = document.getElementById("site-version"); return e && e.textContent.includes(%q) ? e.textContent : ""; })()`, v2), 60*time.Second)
	if !strings.Contains(got, "release-two") {
		t.Errorf("after the update the footer shows %q", got)
	}
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}
