package app

import "github.com/maxence-charriere/go-app/v10/pkg/app"

// SnapshotPage is the /snapshot page. Its content comes with its own issue.
type SnapshotPage struct {
	app.Compo
}

// OnNav sets the page's head metadata.
func (p *SnapshotPage) OnNav(ctx app.Context) {
	if r, ok := routeByPath("/snapshot"); ok {
		ctx.Page().SetTitle("%s · OOMScope", r.Title)
		ctx.Page().SetDescription(r.Description)
	}
}

func (p *SnapshotPage) Render() app.UI {
	r, _ := routeByPath("/snapshot")
	return Layout("/snapshot",
		app.H1().Text(r.Title),
		app.P().Class("lead").Text(r.Description),
		app.P().Class("placeholder").Text("This tool is being built."),
	)
}
