package app

import "github.com/maxence-charriere/go-app/v10/pkg/app"

// Home is the landing page: what the tool is, and one click to each tool and
// the guides.
type Home struct {
	app.Compo
}

// OnNav sets the page's head metadata.
func (h *Home) OnNav(ctx app.Context) {
	ctx.Page().SetTitle("OOMScope: why did my GPU run out of memory?")
}

func (h *Home) Render() app.UI {
	var cards []app.UI
	for _, r := range navRoutes() {
		cards = append(cards, app.A().Class("card tool-card").Href(Href(r.Path)).Body(
			app.H2().Text(r.Title),
			app.P().Text(r.Description),
		))
	}
	return Layout("/",
		app.Section().Class("hero").Body(
			app.H1().Text("Why did my GPU run out of memory?"),
			app.P().Class("lead").Text("OOMScope reads your CUDA out-of-memory error, your memory snapshot or your training setup, tells you where the memory went, and ranks the fixes cheapest first with the bytes each one saves."),
			app.P().Class("lead").Text("It runs entirely in your browser and works offline: nothing you paste or drop is uploaded."),
		),
		app.Div().Class("cards").Body(cards...),
		app.Section().Class("workflow").Body(
			app.H2().Text("The workflow"),
			app.Ol().Body(
				app.Li().Body(app.Strong().Text("Measure. "), app.Text("Capture a memory snapshot, or start from the error message you already have.")),
				app.Li().Body(app.Strong().Text("Classify. "), app.Text("Fragmentation, true shortage, another process or non-PyTorch memory each need a different fix.")),
				app.Li().Body(app.Strong().Text("Fix cheapest first. "), app.Text("Micro-batch and accumulation, mixed precision, checkpointing, 8-bit optimizer, LoRA/QLoRA, sharding.")),
			),
			app.P().Body(
				app.Text("Not sure which case you have? Start with the "),
				app.A().Href(Href(GuidesPath+"/symptoms")).Text("symptom, cause and first fix table"),
				app.Text("."),
			),
		),
	)
}
