package app

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/snapshot/analysis"
)

// Chart geometry in SVG user units; the SVG stretches to the page width.
const (
	chartW = 1000.0
	chartH = 300.0
)

// chartData is the timeline being drawn: points, stacked site bands and the
// SVG drawn from them once (hovering does not redraw it).
type chartData struct {
	points    []analysis.Point
	bands     *analysis.SiteSeries
	from, to  int
	maxV      int64
	peakIndex int
	svg       string
}

func newChartData(d *analysis.DeviceReport, pts []analysis.Point, bands *analysis.SiteSeries) chartData {
	c := chartData{points: pts, bands: bands, peakIndex: -2}
	if d == nil || len(pts) == 0 || bands == nil {
		return c
	}
	c.peakIndex = d.PeakIndex
	c.from, c.to = pts[0].Index, pts[len(pts)-1].Index
	for _, p := range pts {
		c.maxV = max(c.maxV, p.Allocated, p.Reserved)
	}
	c.maxV = max(1, c.maxV+c.maxV/20)
	c.svg = c.draw()
	return c
}

// x maps a trace index to the chart's x.
func (c *chartData) x(idx int) float64 {
	if c.to <= c.from {
		return chartW / 2
	}
	return float64(idx-c.from) / float64(c.to-c.from) * chartW
}

// y maps bytes to the chart's y.
func (c *chartData) y(v int64) float64 { return chartH - float64(v)/float64(c.maxV)*chartH }

// draw renders the stacked site bands, the reserved line and the peak.
func (c *chartData) draw() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="snap-chart-svg" viewBox="0 0 %g %g" preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg" aria-hidden="true">`, chartW, chartH)
	for k := 1; k < 4; k++ {
		y := chartH * float64(k) / 4
		fmt.Fprintf(&b, `<line class="snap-grid" x1="0" x2="%g" y1="%.1f" y2="%.1f" vector-effect="non-scaling-stroke"/>`, chartW, y, y)
	}
	n := len(c.points)
	base := make([]int64, n)
	top := make([]int64, n)
	for k, row := range c.bands.Values {
		if len(row) != n {
			continue
		}
		for j := range row {
			top[j] = base[j] + row[j]
		}
		fmt.Fprintf(&b, `<path class="snap-band snap-band-%d" d="`, bandClass(k, len(c.bands.Values)))
		for j, p := range c.points {
			cmd := 'L'
			if j == 0 {
				cmd = 'M'
			}
			fmt.Fprintf(&b, "%c%.1f %.1f", cmd, c.x(p.Index), c.y(top[j]))
		}
		for j := n - 1; j >= 0; j-- {
			fmt.Fprintf(&b, "L%.1f %.1f", c.x(c.points[j].Index), c.y(base[j]))
		}
		b.WriteString(`Z"/>`)
		copy(base, top)
	}
	b.WriteString(`<polyline class="snap-reserved" vector-effect="non-scaling-stroke" points="`)
	for _, p := range c.points {
		fmt.Fprintf(&b, "%.1f,%.1f ", c.x(p.Index), c.y(p.Reserved))
	}
	b.WriteString(`"/>`)
	if c.peakIndex >= c.from && c.peakIndex <= c.to {
		x := c.x(c.peakIndex)
		fmt.Fprintf(&b, `<line class="snap-peak-line" x1="%.1f" x2="%.1f" y1="0" y2="%g" vector-effect="non-scaling-stroke"/>`, x, x, chartH)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// bandClass numbers the colour of band k of n: the last band ("other
// sites") is always grey.
func bandClass(k, n int) int {
	if k == n-1 {
		return 99
	}
	return k % 10
}

// nearest returns the index of the point closest to trace index idx.
func (c *chartData) nearest(idx int) int {
	j := sort.Search(len(c.points), func(j int) bool { return c.points[j].Index >= idx })
	switch {
	case j == len(c.points):
		return j - 1
	case j > 0 && idx-c.points[j-1].Index < c.points[j].Index-idx:
		return j - 1
	}
	return j
}

// bandAt returns the band under height v (bytes) at point j, -1 if none.
func (c *chartData) bandAt(j int, v int64) int {
	var acc int64
	for k, row := range c.bands.Values {
		if j < len(row) {
			acc += row[j]
			if v <= acc && row[j] > 0 {
				return k
			}
		}
	}
	return -1
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

// indexAt maps a fraction of the chart width to a trace index.
func (c *chartData) indexAt(f float64) int {
	return c.from + int(math.Round(f*float64(c.to-c.from)))
}

func (p *SnapshotPage) onChartMove(ctx app.Context, e app.Event) {
	if len(p.chart.points) == 0 {
		return
	}
	fx, fy := pointer(ctx, e)
	if p.dragging {
		p.dragTo = fx
		return
	}
	j := p.chart.nearest(p.chart.indexAt(fx))
	p.hover = j
	p.hoverBand = p.chart.bandAt(j, int64((1-fy)*float64(p.chart.maxV)))
}

func (p *SnapshotPage) onChartLeave(ctx app.Context, e app.Event) {
	p.hover, p.dragging = -1, false
}

func (p *SnapshotPage) onChartDown(ctx app.Context, e app.Event) {
	if len(p.chart.points) == 0 {
		return
	}
	e.PreventDefault()
	fx, _ := pointer(ctx, e)
	p.dragging, p.dragFrom, p.dragTo = true, fx, fx
}

func (p *SnapshotPage) onChartUp(ctx app.Context, e app.Event) {
	if !p.dragging {
		return
	}
	p.dragging = false
	fx, _ := pointer(ctx, e)
	p.dragTo = fx
	lo, hi := math.Min(p.dragFrom, p.dragTo), math.Max(p.dragFrom, p.dragTo)
	if hi-lo > 0.015 {
		p.requestZoom(ctx, p.chart.indexAt(lo), p.chart.indexAt(hi))
		return
	}
	j := p.chart.nearest(p.chart.indexAt(fx))
	p.requestState(ctx, p.chart.points[j].Index)
}

func (p *SnapshotPage) onZoomReset(ctx app.Context, e app.Event) {
	if d := p.device(); d != nil {
		p.zoom, p.hover = nil, -1
		p.chart = newChartData(d, d.Timeline, d.SiteSeries)
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

// pct renders a fraction of the chart as a CSS percentage.
func pct(f float64) string { return fmt.Sprintf("%.2f%%", 100*math.Max(0, math.Min(1, f))) }

// renderTimeline draws the chart with its axis, legend, hover details and
// zoom controls.
func (p *SnapshotPage) renderTimeline(d *analysis.DeviceReport) app.UI {
	c := &p.chart
	if len(c.points) == 0 || c.bands == nil {
		return app.P().Class("muted").Text("This trace has no entries to draw: the snapshot holds only the final state.")
	}
	overlay := []app.UI{app.Raw(c.svg)}
	for k := 0; k <= 4; k++ {
		v := c.maxV * int64(4-k) / 4
		overlay = append(overlay, app.Span().Class("snap-ytick").Style("top", pct(float64(k)/4)).Text(gib(v)))
	}
	if p.state != nil && p.state.Index >= c.from && p.state.Index <= c.to {
		overlay = append(overlay, app.Div().Class("snap-sel-line").Style("left", pct(c.x(p.state.Index)/chartW)))
	}
	if p.dragging {
		lo, hi := math.Min(p.dragFrom, p.dragTo), math.Max(p.dragFrom, p.dragTo)
		overlay = append(overlay, app.Div().Class("snap-drag").Style("left", pct(lo)).Style("width", pct(hi-lo)))
	}
	if p.hover >= 0 && p.hover < len(c.points) && !p.dragging {
		pt := c.points[p.hover]
		fx := c.x(pt.Index) / chartW
		overlay = append(overlay, app.Div().Class("snap-hover-line").Style("left", pct(fx)))
		tip := app.Div().Class("snap-tip").ID("snap-tip").Body(p.renderTip(d, p.hover)...)
		if fx > 0.55 {
			tip = tip.Style("right", pct(1-fx))
		} else {
			tip = tip.Style("left", pct(fx))
		}
		overlay = append(overlay, tip)
	}
	zoomed := p.zoom != nil
	return app.Section().Class("snap-timeline").Body(
		app.H2().Text("Timeline"),
		app.P().Class("muted").Text("Allocated memory (requested bytes of live allocations) stacked by allocation site; "+
			"the line is reserved memory. Drag across the chart to zoom, click to see the allocator state at that moment. "+
			"The x axis counts trace entries."),
		app.Div().Class("snap-toolbar").Body(
			app.Button().Class("secondary").Text("Zoom to the peak").OnClick(p.onZoomPeak),
			app.If(zoomed, func() app.UI {
				return app.Button().Class("secondary").ID("snap-zoom-reset").Text("Show the whole trace").OnClick(p.onZoomReset)
			}),
			app.Span().Class("muted").Text(fmt.Sprintf("entries %d to %d", c.from, c.to)),
		),
		app.Div().ID("snap-chart").Class("snap-chart").
			On("mousemove", p.onChartMove).On("mouseleave", p.onChartLeave).
			On("mousedown", p.onChartDown).On("mouseup", p.onChartUp).
			Body(overlay...),
		app.Div().Class("snap-xaxis").Body(
			app.Span().Text(p.axisLabel(d, c.from)),
			app.Span().Text(p.axisLabel(d, c.to)),
		),
		p.renderLegend(),
	)
}

// axisLabel names a trace index with its time when known.
func (p *SnapshotPage) axisLabel(d *analysis.DeviceReport, idx int) string {
	s := fmt.Sprintf("entry %d", idx)
	if idx < 0 {
		s = "before the trace"
	}
	for _, pt := range p.chart.points {
		if pt.Index == idx && pt.TimeUS > 0 && d.FirstTimeUS > 0 {
			s += fmt.Sprintf(" · %.3f s", float64(pt.TimeUS-d.FirstTimeUS)/1e6)
			break
		}
	}
	return s
}

func (p *SnapshotPage) renderLegend() app.UI {
	var items []app.UI
	n := len(p.chart.bands.Sites)
	for k, s := range p.chart.bands.Sites {
		items = append(items, app.Li().Body(
			app.Span().Class(fmt.Sprintf("snap-swatch snap-bg-%d", bandClass(k, n))),
			app.Span().Text(s),
		))
	}
	items = append(items, app.Li().Body(app.Span().Class("snap-swatch snap-swatch-line"), app.Span().Text("reserved")))
	return app.Ul().Class("snap-legend").Body(items...)
}

// renderTip shows the state at a hovered point: totals, the bands there and
// the stack of the band under the cursor.
func (p *SnapshotPage) renderTip(d *analysis.DeviceReport, j int) []app.UI {
	c := &p.chart
	pt := c.points[j]
	head := fmt.Sprintf("Entry %d", pt.Index)
	if pt.Index < 0 {
		head = "Before the first entry"
	}
	if pt.TimeUS > 0 && d.FirstTimeUS > 0 {
		head += fmt.Sprintf(" · %.3f s", float64(pt.TimeUS-d.FirstTimeUS)/1e6)
	}
	out := []app.UI{
		app.Strong().Text(head),
		app.Div().Text(fmt.Sprintf("allocated %s · reserved %s", gib(pt.Allocated), gib(pt.Reserved))),
	}
	type band struct {
		k int
		v int64
	}
	var bs []band
	for k, row := range c.bands.Values {
		if j < len(row) && row[j] > 0 {
			bs = append(bs, band{k, row[j]})
		}
	}
	sort.Slice(bs, func(a, b int) bool { return bs[a].v > bs[b].v })
	var rows []app.UI
	n := len(c.bands.Sites)
	for i, b := range bs {
		if i == 6 {
			break
		}
		cls := "snap-tip-row"
		if b.k == p.hoverBand {
			cls += " snap-tip-hot"
		}
		rows = append(rows, app.Li().Class(cls).Body(
			app.Span().Class(fmt.Sprintf("snap-swatch snap-bg-%d", bandClass(b.k, n))),
			app.Span().Text(gib(b.v)+" "+c.bands.Sites[b.k]),
		))
	}
	out = append(out, app.Ul().Class("snap-tip-list").Body(rows...))
	if p.hoverBand >= 0 && p.hoverBand < len(c.bands.SiteIndex) {
		si := c.bands.SiteIndex[p.hoverBand]
		for _, s := range d.TopSites {
			if s.SiteIndex == si && si >= 0 {
				lines := s.Stack
				if len(lines) > 8 {
					lines = append(lines[:8:8], "…")
				}
				if len(lines) == 0 {
					lines = []string{"(no stack recorded)"}
				}
				out = append(out, app.Pre().Class("snap-tip-stack").Text(strings.Join(lines, "\n")))
				break
			}
		}
	}
	return out
}
