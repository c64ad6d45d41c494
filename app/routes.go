package app

import (
	"sync"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/content"
)

// Route is one page of the site.
type Route struct {
	Path        string // URL path, e.g. "/estimate"
	Title       string // short name used in the navigation
	Description string // one sentence for the page head and the home page
	Nav         bool   // shown in the header navigation
	New         func() app.Composer
}

// Routes lists every page of the site, in navigation order. The generator
// prerenders each of them, and the service worker precaches them. The list
// is built once (the layout reads it on every render); callers must not
// modify it.
var Routes = sync.OnceValue(routes)

func routes() []Route {
	rs := []Route{
		{"/", "OOMScope", "Find out why your GPU runs out of memory, and the cheapest fix. Everything runs in your browser.", false, func() app.Composer { return &Home{} }},
		{"/estimate", "Estimate", "Estimate GPU memory for a model and a training or inference setup, bucket by bucket.", true, func() app.Composer { return &EstimatePage{} }},
		{"/triage", "Triage", "Paste a CUDA out-of-memory error: get every number in it, the likely cause and the fixes.", true, func() app.Composer { return &TriagePage{} }},
		{"/snapshot", "Snapshot", "Drop a snapshot.pickle from torch.cuda.memory._dump_snapshot(): peak, timeline, culprits.", true, func() app.Composer { return &SnapshotPage{} }},
		{"/guides", "Guides", "How to measure, classify and fix GPU out-of-memory errors, cheapest fix first.", true, func() app.Composer { return &GuidesPage{} }},
	}
	for _, g := range content.Guides() {
		slug := g.Slug
		rs = append(rs, Route{"/guides/" + slug, g.Title, g.Summary, false, func() app.Composer { return &GuidePage{Slug: slug} }})
	}
	return rs
}

// Register declares every route to go-app. It must run before
// app.RunWhenOnBrowser in the browser and before generation on the host.
func Register() {
	for _, r := range Routes() {
		app.Route(r.Path, r.New)
	}
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
