package app

import (
	"fmt"
	"math"
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/chart"
	"oomscope/snapshot/load"
)

// newChart lays out the timeline of the shown device (pts and bands: the
// whole trace or a zoomed range) in the page's unit; nil when there is
// nothing to draw. Before the result, the device is the one the summary's
// timeline shows (chartDevice).
func (p *SnapshotPage) newChart(pts []analysis.Point, bands *analysis.SiteSeries) *chart.Timeline {
	d := p.chartDevice()
	if d == nil {
		return nil
	}
	return deviceChart(d, pts, bands, p.unit)
}

// deviceChart lays out a timeline of device d (pts and bands: the whole
// trace or a zoomed range) in unit u.
func deviceChart(d *analysis.DeviceReport, pts []analysis.Point, bands *analysis.SiteSeries, u bytesize.Unit) *chart.Timeline {
	if len(pts) == 0 {
		return nil
	}
	shades, class, label, hidden := phaseShades(d, pts[0].Index, pts[len(pts)-1].Index)
	c := chart.NewTimeline(pts, bands, chart.Options{Unit: u, Peak: d.PeakIndex, Shades: shades, ShadeClass: class, ShadeLabel: label})
	if c != nil {
		c.HiddenShades += hidden
	}
	return c
}

// withPhaseShades returns timeline c of device d with d's step and phase
// shades added, its drawing kept (chart.Timeline.WithShades): the page
// then adds the shades' SVG alone, behind the timeline it shows.
func withPhaseShades(c *chart.Timeline, d *analysis.DeviceReport) *chart.Timeline {
	shades, class, label, hidden := phaseShades(d, c.From, c.To)
	s := c.WithShades(shades, class, label)
	s.HiddenShades += hidden
	return s
}

// chartDevice is the device the timeline shows: the shown device of the
// result, or before it the one whose timeline the summary brought
// (SnapshotPage.early).
func (p *SnapshotPage) chartDevice() *analysis.DeviceReport {
	if p.res == nil {
		return p.early
	}
	return p.device()
}

// firstChart is the whole timeline of the device a result (or, its
// memory curve alone, a summary: newSummaryChart) shows first, in unit u:
// laid out while the message is read, so that the frame that shows the
// message draws it too.
type firstChart struct {
	dev   int
	unit  bytesize.Unit
	chart *chart.Timeline
	// rep is the device a summary's chart shows (newSummaryChart).
	rep *analysis.DeviceReport
}

// newFirstChart lays out the timeline of r's busiest device.
func newFirstChart(r *load.Result, u bytesize.Unit) *firstChart {
	i := max(0, r.Busiest())
	if i >= len(r.Devices) {
		return nil
	}
	d := &r.Devices[i]
	return &firstChart{dev: i, unit: u, chart: deviceChart(d, d.Timeline, d.SiteSeries, u)}
}

// newSummaryChart lays out the timeline of the busiest device of a
// summary (its headlines and timelines, load.Response), before the
// result: the memory curve alone, one band of allocated bytes
// (chart.AllocatedBand) under the reserved line, on the scale the
// result's timeline will have. rep is that device as its headline knows
// it, for the chart's peak line and axis. nil when it has no timeline.
func newSummaryChart(hs []analysis.Headline, tls [][]analysis.Point, u bytesize.Unit) *firstChart {
	i := max(0, analysis.BusiestHeadline(hs))
	if i >= len(hs) || i >= len(tls) || len(tls[i]) == 0 {
		return nil
	}
	rep := headlineDevice(hs[i])
	return &firstChart{dev: i, unit: u, rep: rep, chart: deviceChart(rep, tls[i], chart.AllocatedBand(tls[i]), u)}
}

// headlineDevice is a device's report as its headline knows it (the
// numbers the timeline reads: its device, entries, times and peaks), the
// rest to come with the result.
func headlineDevice(h analysis.Headline) *analysis.DeviceReport {
	return &analysis.DeviceReport{Device: h.Device, Entries: h.Entries, FirstTimeUS: h.FirstTimeUS, LastTimeUS: h.LastTimeUS,
		PeakAllocatedBytes: h.PeakAllocatedBytes, PeakIndex: h.PeakIndex, PeakTimeUS: h.PeakTimeUS,
		PeakReservedBytes: h.PeakReservedBytes, PeakReservedIndex: h.PeakReservedIndex,
		FinalAllocatedBytes: h.FinalAllocatedBytes, FinalReservedBytes: h.FinalReservedBytes}
}

// pointer returns the pointer position over the chart as fractions of its
// width and height.
func pointer(ctx app.Context, e app.Event) (fx, fy float64) {
	r := ctx.JSSrc().Call("getBoundingClientRect")
	w, h := jsNumber(r, "width"), jsNumber(r, "height")
	if w <= 0 || h <= 0 {
		return 0, 0
	}
	fx = (jsNumber(e.Value, "clientX") - jsNumber(r, "left")) / w
	fy = (jsNumber(e.Value, "clientY") - jsNumber(r, "top")) / h
	return math.Max(0, math.Min(1, fx)), math.Max(0, math.Min(1, fy))
}

// The chart's hover line, tooltip and drag rectangle are drawn straight
// into the #snap-overlay element: moving the pointer must not re-render the
// page (go-app would rebuild every section on each mousemove).

// setOverlay replaces the overlay's content.
func setOverlay(ctx app.Context, html string) {
	ov := ctx.JSSrc().Call("querySelector", ".snap-overlay")
	if ov.Truthy() {
		ov.Set("innerHTML", html)
	}
}

func (p *SnapshotPage) onChartMove(ctx app.Context, e app.Event) {
	ctx.PreventUpdate()
	c := p.chart
	if c == nil {
		return
	}
	fx, fy := pointer(ctx, e)
	if p.dragging {
		p.dragTo = fx
		setOverlay(ctx, chart.DragHTML(math.Min(p.dragFrom, p.dragTo), math.Max(p.dragFrom, p.dragTo)))
		return
	}
	j := c.Nearest(c.IndexAt(fx))
	p.hover = j
	p.hoverBand = c.BandAt(j, c.BytesAt(fy))
	setOverlay(ctx, c.TipHTML(p.chartDevice(), j, p.hoverBand, p.unit))
}

func (p *SnapshotPage) onChartLeave(ctx app.Context, e app.Event) {
	ctx.PreventUpdate()
	p.dragging = false
	if isTouch(e) && e.Get("type").String() == "pointerleave" {
		// A finger lifted off the chart: keep the tooltip of the tap.
		return
	}
	p.hover = -1
	setOverlay(ctx, "")
}

// isTouch reports whether a pointer event comes from a finger.
func isTouch(e app.Event) bool { return e.Get("pointerType").String() == "touch" }

func (p *SnapshotPage) onChartDown(ctx app.Context, e app.Event) {
	ctx.PreventUpdate()
	if p.chart == nil || p.res == nil {
		// Before the result (the summary's timeline), the worker holds
		// no analysis to zoom into or to ask a state of.
		return
	}
	e.PreventDefault()
	fx, _ := pointer(ctx, e)
	if isTouch(e) {
		// No hover on a touch screen: the tap shows the tooltip.
		p.onChartMove(ctx, e)
	}
	p.dragging, p.dragFrom, p.dragTo = true, fx, fx
}

func (p *SnapshotPage) onChartUp(ctx app.Context, e app.Event) {
	if !p.dragging {
		ctx.PreventUpdate()
		return
	}
	p.dragging = false
	fx, _ := pointer(ctx, e)
	p.dragTo = fx
	lo, hi := math.Min(p.dragFrom, p.dragTo), math.Max(p.dragFrom, p.dragTo)
	if p.chart == nil {
		return
	}
	if hi-lo > 0.015 {
		setOverlay(ctx, "")
		p.requestZoom(ctx, p.chart.IndexAt(lo), p.chart.IndexAt(hi))
		return
	}
	if !isTouch(e) {
		setOverlay(ctx, "") // a finger's tap keeps its tooltip
	}
	j := p.chart.Nearest(p.chart.IndexAt(fx))
	p.requestState(ctx, p.chart.Points[j].Index)
}

func (p *SnapshotPage) onZoomReset(ctx app.Context, e app.Event) {
	if d := p.device(); d != nil {
		p.zoom, p.hover = nil, -1
		p.chart = p.newChart(d.Timeline, d.SiteSeries)
	}
}

func (p *SnapshotPage) onZoomPeak(ctx app.Context, e app.Event) {
	d := p.device()
	if d == nil {
		return
	}
	span := max(20, d.Entries/20)
	p.requestZoom(ctx, max(-1, d.PeakIndex-span), min(d.Entries-1, d.PeakIndex+span))
}

// renderTimeline draws the chart with its axis, legend, hover details and
// zoom controls.
func (p *SnapshotPage) renderTimeline(d *analysis.DeviceReport) app.UI {
	c := p.chart
	if c == nil {
		return app.P().Class("muted").Text("This trace has no entries to draw: the snapshot holds only the final state.")
	}
	// The shades are an SVG of their own behind the timeline's, in their
	// place before they come (slot): added with the diagnosis, they are
	// parsed alone, and the timeline stays as drawn. Both are parsed ahead
	// when they can be (svgDrawing).
	overlay := []app.UI{
		slot(c.ShadesSVG != "", func() app.UI { return &svgDrawing{SVG: c.ShadesSVG} }),
		&svgDrawing{SVG: c.SVG},
	}
	for _, tk := range c.Ticks {
		overlay = append(overlay, app.Span().Class("snap-ytick").Style("top", chart.Percent(tk.Y)).Text(tk.Label))
	}
	if p.state != nil && p.state.Index >= c.From && p.state.Index <= c.To {
		overlay = append(overlay, app.Div().Class("snap-sel-line").Style("left", chart.Percent(c.X(p.state.Index))))
	}
	// Filled by the pointer handlers, outside go-app's rendering.
	overlay = append(overlay, app.Div().Class("snap-overlay"))
	zoomed := p.zoom != nil
	return app.Section().Class("snap-timeline").Body(
		app.H2().Text("Timeline"),
		app.P().Class("muted").Text("Allocated memory (requested bytes of live allocations) stacked by allocation site; "+
			"the line is reserved memory. Drag across the chart to zoom, click to see the allocator state at that moment. "+
			"The x axis counts trace entries."),
		// In its place before the shades come (slot): the chart and all
		// after it are not drawn anew when it appears.
		slot(c.HiddenShades > 0, func() app.UI {
			return app.P().Class("muted").ID("snap-shades-hidden").Text(fmt.Sprintf(
				"%d step and phase bands are narrower than the chart can show at this zoom: zoom in to see them.", c.HiddenShades))
		}),
		app.Div().Class("snap-toolbar").Body(
			// Before the result (the summary's timeline), the worker holds
			// no analysis to zoom into.
			app.Button().Class("secondary").Text("Zoom to the peak").Disabled(p.res == nil).OnClick(p.onZoomPeak),
			app.If(zoomed, func() app.UI {
				return app.Button().Class("secondary").ID("snap-zoom-reset").Text("Show the whole trace").OnClick(p.onZoomReset)
			}),
			app.Span().Class("muted").Text(entryRange(c.From, c.To)),
		),
		// Pointer events serve mouse, pen and touch alike: on a touch
		// screen a tap shows the tooltip and selects the moment, a
		// sideways drag zooms, and vertical swipes still scroll the page.
		// data-top is the y axis's top in bytes, the scale of the
		// drawing's heights (for the tests).
		app.Div().ID("snap-chart").Class("snap-chart").DataSet("top", strconv.FormatInt(c.Top, 10)).
			On("pointermove", p.onChartMove).On("pointerleave", p.onChartLeave).On("pointercancel", p.onChartLeave).
			On("pointerdown", p.onChartDown).On("pointerup", p.onChartUp).
			Body(overlay...),
		app.Div().Class("snap-xaxis").Body(
			app.Span().Text(c.XLabel(c.From, d.FirstTimeUS)),
			app.Span().Text(c.XLabel(c.To, d.FirstTimeUS)),
		),
		p.renderLegend(),
	)
}

// entryRange names the span of trace entries shown; index -1 is the
// state before recording started.
func entryRange(from, to int) string {
	if from < 0 {
		return "from before the trace to entry " + bytesize.Commas(int64(to))
	}
	return "entries " + bytesize.Commas(int64(from)) + " to " + bytesize.Commas(int64(to))
}

func (p *SnapshotPage) renderLegend() app.UI {
	var items []app.UI
	n := len(p.chart.Bands.Sites)
	for k, s := range p.chart.Bands.Sites {
		items = append(items, app.Li().Body(
			app.Span().Class(fmt.Sprintf("snap-swatch snap-bg-%d", chart.BandClass(k, n))),
			app.Span().Text(shown(s)),
		))
	}
	items = append(items, app.Li().Body(app.Span().Class("snap-swatch snap-swatch-line"), app.Span().Text("reserved")))
	return app.Ul().Class("snap-legend").Body(items...)
}
