package app

import (
	"oomscope/bytesize"

	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/snapshot/analysis"
)

// segmentsSVG draws the segments of a state as bars scaled to the largest
// one: live blocks coloured by category (rounding waste paler), free space
// grey. Hovering a block shows its size, site and category. Blocks too thin
// to see are drawn as one sliver per run. It appends with strconv: this
// runs on the page's main thread.
func segmentsSVG(st *analysis.State, u bytesize.Unit) string {
	if len(st.Segments) == 0 {
		return `<svg class="snap-segs-svg" viewBox="0 0 1000 10" xmlns="http://www.w3.org/2000/svg" aria-hidden="true"></svg>`
	}
	const rowH, gap = 10, 4
	var maxSize int64
	for _, s := range st.Segments {
		maxSize = max(maxSize, s.Size)
	}
	// Coordinates in hundredths of a unit of a 1000-unit-wide row.
	scale := func(n int64) int64 { return int64(float64(n) / float64(maxSize) * 100000) }
	num := func(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }
	rect := func(b []byte, cls string, x, y, w int64) []byte {
		b = append(b, `<rect class="`...)
		b = append(b, cls...)
		b = append(b, `" x="`...)
		b = num(b, x)
		b = append(b, `" y="`...)
		b = num(b, y)
		b = append(b, `" width="`...)
		b = num(b, w)
		b = append(b, `" height="`...)
		b = num(b, rowH*100)
		return append(b, `"/>`...)
	}
	h := int64(len(st.Segments))*(rowH+gap) + gap
	b := make([]byte, 0, 4096)
	b = append(b, `<svg class="snap-segs-svg" viewBox="0 0 100000 `...)
	b = num(b, h*100)
	b = append(b, `" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="segments">`...)
	for r, s := range st.Segments {
		y := (gap + int64(r)*(rowH+gap)) * 100
		b = append(b, `<g><title>`...)
		b = append(b, html.EscapeString(fmt.Sprintf("segment %s: %s (%s B), %s allocated, %s free between blocks, largest free %s, %s pool%s",
			s.Address, bytesize.Format(s.Size, u), bytesize.Commas(s.Size), bytesize.Format(s.AllocatedBytes, u), bytesize.Format(s.ExternalFreeBytes, u), bytesize.Format(s.LargestFreeBytes, u), s.Pool,
			map[bool]string{true: ", expandable", false: ""}[s.Expandable]))...)
		b = append(b, `</title>`...)
		b = rect(b, "snap-seg-bg", 0, y, scale(s.Size))
		b = append(b, `</g>`...)
		var lastEnd int64 = -1
		for _, bl := range s.Blocks {
			x, w, wr := scale(bl.Offset), max(scale(bl.Size), 40), max(scale(bl.Requested), 30)
			if x < lastEnd {
				continue // thinner than what is already drawn there
			}
			lastEnd = x + w
			pend := ""
			if bl.Pending {
				pend = ", freed but pending (record_stream)"
			}
			b = append(b, `<g class="`...)
			b = append(b, catClass(bl.Category)...)
			b = append(b, `"><title>`...)
			b = append(b, html.EscapeString(bytesize.Format(bl.Requested, u)+" requested in a "+bytesize.Format(bl.Size, u)+" block: "+st.SiteLabels[bl.Site]+
				" ("+bl.Category+")"+pend)...)
			b = append(b, `</title>`...)
			b = rect(b, "snap-blk-waste", x, y, w)
			b = rect(b, "snap-blk", x, y, min(wr, w))
			b = append(b, `</g>`...)
		}
	}
	b = append(b, `</svg>`...)
	return string(b)
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
	what := "at the peak"
	if st.Index != d.PeakIndex {
		what = whenText(d, st.Index, st.TimeUS)
		if st.Action != "" {
			what += " (" + st.Action + ")"
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
		app.Raw(segmentsSVG(st, p.unit)),
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
