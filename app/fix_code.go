package app

import (
	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/fixes"
)

// FixCode shows a catalog fix's code with a Copy button and a link to the
// guide section that explains it: the same block wherever a fix is shown
// (the estimator's rungs, the snapshot's fixes). ID prefixes the element
// ids (<ID>-code, <ID>-copy, <ID>-copied, <ID>-guide).
type FixCode struct {
	app.Compo

	Fix fixes.Fix
	ID  string

	note string
}

// fixCode returns the FixCode of catalog fix id (nothing for an unknown id).
func fixCode(id, elemID string) app.UI {
	fx, ok := fixes.Get(id, "")
	if !ok {
		return app.Text("")
	}
	return &FixCode{Fix: fx, ID: elemID}
}

// Render draws the code, the button and the guide link.
func (c *FixCode) Render() app.UI {
	return app.Div().Class("fix-code").DataSet("fix", c.Fix.ID).Body(
		app.Pre().TabIndex(0).Body(app.Code().ID(c.ID+"-code").Class("language-"+c.Fix.Lang).Text(c.Fix.Code)),
		app.Div().Class("fix-code-row").Body(
			app.Button().ID(c.ID+"-copy").Class("secondary fix-copy").Text("Copy").
				Aria("label", "Copy: "+c.Fix.Title).OnClick(c.onCopy),
			app.Span().ID(c.ID+"-copied").Class("fix-copied").Aria("live", "polite").Text(c.note),
			app.A().ID(c.ID+"-guide").Class("fix-guide").Href(Href(c.Fix.Guide)).Text("Why and when: the guide"),
		),
	)
}

func (c *FixCode) onCopy(ctx app.Context, e app.Event) {
	c.note = "Copying…"
	copyText(ctx, c.Fix.Code, func(ok bool) {
		if ok {
			c.note = "Copied to the clipboard."
		} else {
			c.note = "Copy failed: select the code and press Ctrl+C."
		}
	})
}
