package app

import "github.com/maxence-charriere/go-app/v10/pkg/app"

// EstimatePage is the /estimate page. Its content comes with its own issue.
type EstimatePage struct {
	app.Compo
}

// OnNav sets the page's head metadata.
func (p *EstimatePage) OnNav(ctx app.Context) {
	if r, ok := routeByPath("/estimate"); ok {
		ctx.Page().SetTitle("%s · OOMScope", r.Title)
		ctx.Page().SetDescription(r.Description)
	}
}

func (p *EstimatePage) Render() app.UI {
	r, _ := routeByPath("/estimate")
	return Layout("/estimate",
		app.H1().Text(r.Title),
		app.P().Class("lead").Text(r.Description),
		app.P().Class("placeholder").Text("This tool is being built."),
	)
}
