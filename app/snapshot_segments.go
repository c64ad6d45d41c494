package app

import (
	"oomscope/bytesize"

	"fmt"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/snapshot/analysis"
	"oomscope/snapshot/chart"
)

func (p *SnapshotPage) onStateIndex(ctx app.Context, e app.Event) {
	d := p.device()
	if d == nil {
		return
	}
	i, err := strconv.Atoi(strings.TrimSpace(ctx.JSSrc().Get("value").String()))
	if err != nil {
		p.stateErr = "Type an entry number between -1 and " + strconv.Itoa(d.Entries-1) + "."
		return
	}
	p.requestState(ctx, max(-1, min(i, d.Entries-1)))
}

// renderState shows the allocator state at the chosen moment.
func (p *SnapshotPage) renderState(d *analysis.DeviceReport) app.UI {
	body := []app.UI{
		app.H2().Text("Allocator state"),
		app.Div().Class("snap-toolbar").Body(
			app.Label().For("snap-index").Text("After entry"),
			app.Input().Type("number").ID("snap-index").Min(-1).Max(d.Entries-1).Value(p.stateIndex).OnChange(p.onStateIndex),
			app.Button().Class("secondary").Text("Peak").OnClick(func(ctx app.Context, e app.Event) { p.requestState(ctx, d.PeakIndex) }),
			app.Button().Class("secondary").Text("Start").OnClick(func(ctx app.Context, e app.Event) { p.requestState(ctx, -1) }),
			app.Button().Class("secondary").Text("End").OnClick(func(ctx app.Context, e app.Event) { p.requestState(ctx, d.Entries-1) }),
		),
	}
	if p.stateErr != "" {
		body = append(body, app.P().Class("error").Attr("role", "alert").Text(p.stateErr))
	}
	st := p.state
	if st == nil {
		body = append(body, app.P().Class("muted").Text("Computing…"))
		return app.Section().Class("snap-state").ID("snap-state").Body(body...)
	}
	f := st.Fragmentation
	what := "at the peak"
	if st.Index != d.PeakIndex {
		what = whenText(d.Entries, d.FirstTimeUS, st.Index, st.TimeUS)
		if st.Action != "" {
			what += " (" + shown(st.Action) + ")"
		}
	}
	body = append(body,
		app.P().ID("snap-state-when").Text("State "+what+"."),
		app.Div().Class("snap-stats").Body(
			stat("allocated", bytesize.Format(st.AllocatedBytes, p.unit), fmt.Sprintf("%s live allocations", bytesize.Commas(int64(st.LiveAllocations)))),
			stat("reserved", bytesize.Format(st.ReservedBytes, p.unit), fmt.Sprintf("%d segments", f.Segments)),
			stat("free in reserved", bytesize.Format(f.FreeBytes, p.unit), "reserved − allocated"),
			stat("rounding waste", bytesize.Format(f.InternalFreeBytes, p.unit), "inside live blocks"),
			stat("between blocks", bytesize.Format(f.ExternalFreeBytes, p.unit), "cached, reusable"),
			stat("largest free block", bytesize.Format(f.LargestFreeBlockBytes, p.unit), "biggest request served without cudaMalloc"),
		),
		categoryBar(st.Categories, p.unit),
		app.Raw(chart.SegmentsSVG(st, p.unit)),
		app.If(st.OmittedSegments > 0, func() app.UI {
			return app.P().Class("muted").Text(fmt.Sprintf("Showing the %d largest segments; %d smaller ones (%s) are not drawn.",
				len(st.Segments), st.OmittedSegments, bytesize.Format(st.OmittedBytes, p.unit)))
		}),
		app.P().Class("formula").Text(f.Rule),
	)
	return app.Section().Class("snap-state").ID("snap-state").Body(body...)
}

func stat(label, value, note string) app.UI {
	return app.Div().Class("snap-stat").Body(
		app.Span().Class("snap-stat-label").Text(label),
		app.Span().Class("snap-stat-value").Text(value),
		app.Span().Class("snap-stat-note").Text(note),
	)
}
