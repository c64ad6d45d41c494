package app

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/snapshot/analysis"
)

// segmentsSVG draws the segments of a state as bars scaled to the largest
// one: live blocks coloured by category (rounding waste paler), free space
// grey. Hovering a block shows its size, site and category.
func segmentsSVG(st *analysis.State) string {
	if len(st.Segments) == 0 {
		return `<svg class="snap-segs-svg" viewBox="0 0 1000 10" xmlns="http://www.w3.org/2000/svg" aria-hidden="true"></svg>`
	}
	const rowH, gap, labelW = 10.0, 4.0, 0.0
	var maxSize int64
	for _, s := range st.Segments {
		maxSize = max(maxSize, s.Size)
	}
	scale := func(n int64) float64 { return float64(n) / float64(maxSize) * 1000 }
	h := float64(len(st.Segments))*(rowH+gap) + gap
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="snap-segs-svg" viewBox="0 0 1000 %.0f" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="segments">`, h)
	for r, s := range st.Segments {
		y := gap + float64(r)*(rowH+gap)
		fmt.Fprintf(&b, `<g><title>segment %s: %s (%s), %s allocated, %s free between blocks, largest free %s, %s pool%s</title>`,
			s.Address, gib(s.Size), commas(s.Size), gib(s.AllocatedBytes), gib(s.ExternalFreeBytes), gib(s.LargestFreeBytes), s.Pool,
			map[bool]string{true: ", expandable", false: ""}[s.Expandable])
		fmt.Fprintf(&b, `<rect class="snap-seg-bg" x="%.0f" y="%.1f" width="%.2f" height="%.0f"/></g>`, labelW, y, scale(s.Size), rowH)
		for _, bl := range s.Blocks {
			x := labelW + scale(bl.Offset)
			w := max(scale(bl.Size), 0.6)
			wr := max(scale(bl.Requested), 0.4)
			site := st.SiteLabels[bl.Site]
			pend := ""
			if bl.Pending {
				pend = ", freed but pending (record_stream)"
			}
			fmt.Fprintf(&b, `<g class="%s"><title>%s requested in a %s block: %s (%s)%s</title>`,
				catClass(bl.Category), gib(bl.Requested), gib(bl.Size), html.EscapeString(site), bl.Category, pend)
			fmt.Fprintf(&b, `<rect class="snap-blk-waste" x="%.2f" y="%.1f" width="%.2f" height="%.0f"/>`, x, y, w, rowH)
			fmt.Fprintf(&b, `<rect class="snap-blk" x="%.2f" y="%.1f" width="%.2f" height="%.0f"/></g>`, x, y, min(wr, w), rowH)
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

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
	what := "the peak"
	if st.Index != d.PeakIndex {
		what = whenText(d, st.Index, st.TimeUS)
		if st.Action != "" {
			what += " (" + st.Action + ")"
		}
	}
	body = append(body,
		app.P().ID("snap-state-when").Text("State at "+what+"."),
		app.Div().Class("snap-stats").Body(
			stat("allocated", gib(st.AllocatedBytes), fmt.Sprintf("%s live allocations", commas(int64(st.LiveAllocations)))),
			stat("reserved", gib(st.ReservedBytes), fmt.Sprintf("%d segments", f.Segments)),
			stat("free in reserved", gib(f.FreeBytes), "reserved − allocated"),
			stat("rounding waste", gib(f.InternalFreeBytes), "inside live blocks"),
			stat("between blocks", gib(f.ExternalFreeBytes), "cached, reusable"),
			stat("largest free block", gib(f.LargestFreeBlockBytes), "biggest request served without cudaMalloc"),
		),
		categoryBar(st.Categories),
		app.Raw(segmentsSVG(st)),
		app.If(st.OmittedSegments > 0, func() app.UI {
			return app.P().Class("muted").Text(fmt.Sprintf("Showing the %d largest segments; %d smaller ones (%s) are not drawn.",
				len(st.Segments), st.OmittedSegments, gib(st.OmittedBytes)))
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
