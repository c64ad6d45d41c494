package app

import (
	"fmt"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/estimator/triage"
)

// renderBar draws the card the message describes.
func (p *TriagePage) renderBar(f *triage.Finding) app.UI {
	b, ok := triage.CardBar(f)
	if !ok || b.Total <= 0 {
		return app.Div()
	}
	return cardBar(b, p.unit, "triage", fmt.Sprintf("%s in total, as the message reports it.", bytesize.Format(b.Total, p.unit)))
}

// cardBar draws a card as one horizontal bar (who holds what) and the
// failed request against the free part, as triage.CardBar lays it out;
// element ids start with prefix (triage-bar, triage-zoom, ...).
func cardBar(b triage.Bar, unit bytesize.Unit, prefix, sub string) app.UI {
	if b.Total <= 0 {
		return app.Div()
	}
	pct := func(n int64) float64 { return 100 * float64(n) / float64(b.Total) }
	var segs, legend []app.UI
	for _, s := range b.Segments {
		w := pct(s.Bytes)
		tip := fmt.Sprintf("%s: %s (%s)", s.Label, bytesize.Format(s.Bytes, unit), s.Formula)
		segs = append(segs, app.Div().Class("triage-seg triage-seg-"+s.Name).Style("width", "%.3f%%", w).Title("%s", tip).DataSet("seg", s.Name))
		legend = append(legend, app.Li().Body(
			app.Span().Class("triage-swatch triage-seg-"+s.Name),
			app.Text(fmt.Sprintf("%s %s (%.1f %%)", s.Label, bytesize.Format(s.Bytes, unit), w)),
		))
	}
	var req app.UI = app.Div()
	if b.Request > 0 {
		start := pct(b.RequestStart)
		width := pct(b.Request)
		fits := b.Shortfall == 0
		if start+width > 100 {
			width = 100 - start
		}
		label := fmt.Sprintf("request %s", bytesize.Format(b.Request, unit))
		if !fits {
			label += fmt.Sprintf(": %s more than is free", bytesize.Format(b.Shortfall, unit))
		}
		cls := "triage-req"
		if !fits {
			cls += " triage-req-short"
		}
		// Zoom: the request against the free part, scaled to the larger.
		free := b.Total - b.RequestStart
		scale := float64(max(free, b.Request, 1))
		zoom := func(name, cls string, n int64) app.UI {
			return app.Div().Class("triage-zoom-row").Body(
				app.Span().Class("triage-zoom-name").Text(name),
				app.Div().Class("triage-zoom-track").Body(
					app.Div().Class(cls).Style("width", "max(%.3f%%, 2px)", 100*float64(n)/scale),
				),
				app.Span().Class("triage-zoom-size").Text(bytesize.Format(n, unit)),
			)
		}
		req = app.Div().Class("triage-req-row").Body(
			app.Div().Class(cls).Style("margin-left", "%.3f%%", start).Style("width", "max(%.3f%%, 3px)", width),
			app.P().ID(prefix+"-req-label").Class("triage-req-label").Text(label),
			app.Div().ID(prefix+"-zoom").Class("triage-zoom").Body(
				zoom("Free", "triage-zoom-free", free),
				zoom("Request", cls, b.Request),
			),
		)
	}
	return app.Section().Class("triage-card").Body(
		app.H2().Text("The card"),
		app.P().Class("muted").Text(sub),
		app.Div().ID(prefix+"-bar").Class("triage-bar").Aria("hidden", "true").Body(segs...),
		req,
		app.Ul().Class("triage-legend").Body(legend...),
		app.If(b.Note != "", func() app.UI { return app.P().Class("muted").Text(b.Note) }),
	)
}
