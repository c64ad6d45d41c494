package app

import (
	"sync"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Route is one page of the site.
type Route struct {
	Path        string // URL path, e.g. "/estimate"
	Title       string // short name used in the navigation
	Description string // one sentence for the page head and the home page
	Nav         bool   // shown in the header navigation
	// Static pages need no WebAssembly: their prerendered HTML is the whole
	// page (the guides, the 404 page), and app.js does not load the wasm on
	// them. The browser app does not route them: following a link to one
	// from a tool is a full page load (see static/loader.go).
	Static bool
	// New makes the page's component. It is nil in the browser for static
	// pages, whose components are only linked into the generator.
	New func() app.Composer
}

// Routes lists every page of the site, in navigation order. The generator
// prerenders each of them, and the service worker precaches them. The list
// is built once (the layout reads it on every render); callers must not
// modify it.
var Routes = sync.OnceValue(routes)

// staticPages adds the static pages (guide list, guides, 404) on the host;
// it is set by guides.go, which is not part of the browser build, so that
// neither the guides' text nor the Markdown tooling ends up in app.wasm.
var staticPages func(rs []Route) []Route

func routes() []Route {
	rs := []Route{
		{"/", "OOMScope", "Find out why your GPU runs out of memory, and the cheapest fix. Everything runs in your browser.", false, false, func() app.Composer { return &Home{} }},
		{"/estimate", "Estimate", "Estimate GPU memory for a model and a training or inference setup, bucket by bucket.", true, false, func() app.Composer { return &EstimatePage{} }},
		{"/triage", "Triage", "Paste a CUDA out-of-memory error: get every number in it, the likely cause and the fixes.", true, false, func() app.Composer { return &TriagePage{} }},
		{"/snapshot", "Snapshot", "Drop a snapshot.pickle from torch.cuda.memory._dump_snapshot(): peak, timeline, culprits.", true, false, func() app.Composer { return &SnapshotPage{} }},
		{GuidesPath, "Guides", "How to measure, classify and fix GPU out-of-memory errors, cheapest fix first.", true, true, nil},
	}
	if staticPages != nil {
		rs = staticPages(rs)
	}
	return rs
}

// GuidesPath is the guide list; every guide lives under it.
const GuidesPath = "/guides"

// NotFoundPath is the page a static host shows for an unknown path; the
// generator writes it as 404.html.
const NotFoundPath = "/404"

// StaticPrefixes are the paths of every static page: a link to a path that
// starts with one of them is followed by a full page load, not by the
// browser app.
var StaticPrefixes = []string{GuidesPath, NotFoundPath}

// Register declares the routes that the browser app renders. It must run
// before app.RunWhenOnBrowser in the browser and before generation on the
// host (where static pages are registered too, to be prerendered).
func Register() {
	for _, r := range Routes() {
		if r.New != nil {
			app.Route(r.Path, r.New)
		}
	}
}

// navRoutes returns the routes of the header navigation, in order.
func navRoutes() []Route {
	var rs []Route
	for _, r := range Routes() {
		if r.Nav {
			rs = append(rs, r)
		}
	}
	return rs
}

// routeByPath returns the route registered for path, if any.
func routeByPath(path string) (Route, bool) {
	for _, r := range Routes() {
		if r.Path == path {
			return r, true
		}
	}
	return Route{}, false
}
