package app

import (
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/content"
)

// GuidesPage lists the guides.
type GuidesPage struct {
	app.Compo
}

// OnNav sets the page's head metadata.
func (p *GuidesPage) OnNav(ctx app.Context) {
	ctx.Page().SetTitle("Guides · OOMScope")
}

func (p *GuidesPage) Render() app.UI {
	var items []app.UI
	for _, g := range content.Guides() {
		items = append(items, app.Li().Body(
			app.A().Href(Href("/guides/"+g.Slug)).Text(g.Title),
			app.P().Text(g.Summary),
		))
	}
	return Layout("/guides",
		app.H1().Text("Guides"),
		app.P().Class("lead").Text("Measure, classify, fix cheapest first. Each guide links to the tool that does the work, with presets."),
		app.Ol().Class("guide-list").Body(items...),
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
		return Layout("/guides", app.H1().Text("Guide not found"))
	}
	var next app.UI = app.Text("")
	gs := content.Guides()
	for i := range gs {
		if gs[i].Slug == g.Slug && i+1 < len(gs) {
			next = app.P().Class("next").Body(app.Text("Next guide: "), app.A().Href(Href("/guides/"+gs[i+1].Slug)).Text(gs[i+1].Title))
		}
	}
	return Layout("/guides/"+g.Slug,
		app.Article().Class("guide").Body(
			app.H1().Text(g.Title),
			app.Raw(`<div class="guide-body">`+prefixLinks(g.HTML)+`</div>`),
			next,
		),
	)
}

// prefixLinks adds the site's root prefix to the internal links of rendered
// Markdown: raw HTML is not rewritten by go-app, on the host or in the
// browser.
func prefixLinks(html string) string {
	p := rootPrefix()
	if p == "" {
		return html
	}
	return strings.ReplaceAll(html, `href="/`, `href="`+p+`/`)
}
