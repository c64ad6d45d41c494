package app

import "github.com/maxence-charriere/go-app/v10/pkg/app"

// TriagePage is the /triage page. Its content comes with its own issue.
type TriagePage struct {
	app.Compo
}

// OnNav sets the page's head metadata.
func (p *TriagePage) OnNav(ctx app.Context) {
	if r, ok := routeByPath("/triage"); ok {
		ctx.Page().SetTitle("%s · OOMScope", r.Title)
		ctx.Page().SetDescription(r.Description)
	}
}

func (p *TriagePage) Render() app.UI {
	r, _ := routeByPath("/triage")
	return Layout("/triage",
		app.H1().Text(r.Title),
		app.P().Class("lead").Text(r.Description),
		app.P().Class("placeholder").Text("This tool is being built."),
	)
}
