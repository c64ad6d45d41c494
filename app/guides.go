//go:build !js

package app

import (
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/content"
)

// The guides and the 404 page are static pages (Route.Static): they are
// prerendered by the generator and need no WebAssembly, so this file is not
// part of the browser build.
func init() {
	staticPages = func(rs []Route) []Route {
		for i := range rs {
			if rs[i].Path == GuidesPath {
				rs[i].New = func() app.Composer { return &GuidesPage{} }
			}
		}
		for _, g := range content.Guides() {
			slug := g.Slug
			rs = append(rs, Route{GuidesPath + "/" + slug, g.Title, g.Summary, false, true, func() app.Composer { return &GuidePage{Slug: slug} }})
		}
		return append(rs, Route{NotFoundPath, "Page not found", "There is no page at this address.", false, true, func() app.Composer { return &NotFoundPage{} }})
	}
}

// GuidesPage lists the guides, with a search box over all of them
// (static/web/site.js searches the index the generator writes).
type GuidesPage struct {
	app.Compo
}

// OnNav sets the page's head metadata.
func (p *GuidesPage) OnNav(ctx app.Context) {
	r, _ := routeByPath(GuidesPath)
	ctx.Page().SetTitle("Guides · OOMScope")
	ctx.Page().SetDescription(r.Description)
}

func (p *GuidesPage) Render() app.UI {
	var items []app.UI
	for _, g := range content.Guides() {
		items = append(items, app.Li().Body(
			app.A().Href(Href(GuidesPath+"/"+g.Slug)).Text(g.Title),
			app.P().Text(g.Summary),
		))
	}
	return StaticLayout(GuidesPath,
		app.H1().Text("Guides"),
		app.P().Class("lead").Text("Measure, classify, fix cheapest first. Each guide links to the tool that does the work, with presets."),
		// Hidden until site.js, which does the searching, has started.
		app.Form().ID("guide-search").Class("guide-search").Role("search").Hidden(true).Body(
			app.Label().For("guide-q").Text("Search the guides"),
			app.Input().Type("search").ID("guide-q").Name("q").AutoComplete(false).Attr("spellcheck", "false").
				Placeholder("e.g. fragmentation, KV cache, NCCL"),
			app.P().ID("guide-search-status").Class("muted guide-search-status").Aria("live", "polite"),
			app.Ol().ID("guide-results").Class("guide-results"),
		),
		app.Ol().ID("guide-list").Class("guide-list").Body(items...),
	)
}

// GuidePage shows one guide.
type GuidePage struct {
	app.Compo
	Slug string
}

// OnNav sets the page's head metadata.
func (p *GuidePage) OnNav(ctx app.Context) {
	if g, ok := content.Find(p.Slug); ok {
		ctx.Page().SetTitle("%s · OOMScope", g.Title)
		ctx.Page().SetDescription(g.Summary)
	}
}

func (p *GuidePage) Render() app.UI {
	g, ok := content.Find(p.Slug)
	if !ok {
		return StaticLayout(GuidesPath, app.H1().Text("Guide not found"))
	}
	var toc app.UI
	if len(g.Headings) >= 3 {
		var items []app.UI
		for _, h := range g.Headings {
			items = append(items, app.Li().Body(app.A().Href("#"+h.ID).Text(h.Text)))
		}
		toc = app.Nav().Class("toc").Aria("label", "On this page").Body(
			app.P().Class("toc-title").Text("On this page"),
			app.Ol().Body(items...),
		)
	}
	var pager []app.UI
	gs := content.Guides()
	for i := range gs {
		if gs[i].Slug != g.Slug {
			continue
		}
		if i > 0 {
			pager = append(pager, app.A().Class("prev").Rel("prev").Href(Href(GuidesPath+"/"+gs[i-1].Slug)).
				Body(app.Span().Class("muted").Text("Previous"), app.Span().Text(gs[i-1].Title)))
		}
		if i+1 < len(gs) {
			pager = append(pager, app.A().Class("next").Rel("next").Href(Href(GuidesPath+"/"+gs[i+1].Slug)).
				Body(app.Span().Class("muted").Text("Next"), app.Span().Text(gs[i+1].Title)))
		}
	}
	return StaticLayout(GuidesPath+"/"+g.Slug,
		app.Article().Class("guide").Body(
			app.P().Class("crumbs").Body(app.A().Href(Href(GuidesPath)).Text("Guides"), app.Text(" /")),
			app.H1().Text(g.Title),
			toc,
			app.Raw(`<div class="guide-body">`+prefixLinks(g.HTML)+`</div>`),
			app.Nav().Class("pager").Aria("label", "More guides").Body(pager...),
		),
	)
}

// prefixLinks adds the site's root prefix to the internal links of rendered
// Markdown: raw HTML is not rewritten by go-app.
func prefixLinks(html string) string {
	p := rootPrefix()
	if p == "" {
		return html
	}
	return strings.ReplaceAll(html, `href="/`, `href="`+p+`/`)
}

// NotFoundPage is written as 404.html: static hosts (and make serve) show
// it for any path the site does not have.
type NotFoundPage struct {
	app.Compo
}

// OnNav sets the page's head metadata.
func (p *NotFoundPage) OnNav(ctx app.Context) {
	ctx.Page().SetTitle("Page not found · OOMScope")
}

func (p *NotFoundPage) Render() app.UI {
	var tools []app.UI
	for _, r := range navRoutes() {
		tools = append(tools, app.Li().Body(app.A().Href(Href(r.Path)).Text(r.Title), app.Text(": "+r.Description)))
	}
	return StaticLayout(NotFoundPath,
		app.Section().Class("not-found").Body(
			app.P().Class("not-found-code").Aria("hidden", "true").Text("404"),
			app.H1().Text("This page ran out of memory"),
			app.P().Class("lead").Body(
				app.Text("Well, not really: there is no page at "),
				app.Code().ID("nf-path").Text("this address"),
				app.Text(". The link may be mistyped, or the page may have moved."),
			),
			app.P().Body(app.A().Class("button").Href(Href("/")).Text("Go to the home page")),
			app.H2().Text("Where to go"),
			app.Ul().Class("not-found-links").Body(tools...),
		),
	)
}
