package app

import (
	"oomscope/bytesize"

	"fmt"
	"html"
	"math"
	"sort"
	"strconv"
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

// draw renders the stacked site bands, the reserved line and the peak. It
// appends integer coordinates (tenths of a chart unit) with strconv: it runs
// on the page's main thread, where fmt would cost a frame.
func (c *chartData) draw() string {
	b := make([]byte, 0, 64*len(c.points)*(len(c.bands.Values)+1))
	b = append(b, `<svg class="snap-chart-svg" viewBox="0 0 10000 3000" preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg" aria-hidden="true">`...)
	xi := func(idx int) int64 { return int64(math.Round(c.x(idx) * 10)) }
	yi := func(v int64) int64 { return int64(math.Round(c.y(v) * 10)) }
	pt := func(b []byte, cmd byte, x, y int64) []byte {
		b = append(b, cmd)
		b = strconv.AppendInt(b, x, 10)
		b = append(b, ' ')
		return strconv.AppendInt(b, y, 10)
	}
	for k := 1; k < 4; k++ {
		b = append(b, `<line class="snap-grid" x1="0" x2="10000" y1="`...)
		b = strconv.AppendInt(b, int64(750*k), 10)
		b = append(b, `" y2="`...)
		b = strconv.AppendInt(b, int64(750*k), 10)
		b = append(b, `" vector-effect="non-scaling-stroke"/>`...)
	}
	n := len(c.points)
	xs := make([]int64, n)
	for j, p := range c.points {
		xs[j] = xi(p.Index)
	}
	base := make([]int64, n)
	top := make([]int64, n)
	for k, row := range c.bands.Values {
		if len(row) != n {
			continue
		}
		for j := range row {
			top[j] = base[j] + row[j]
		}
		b = append(b, `<path class="snap-band snap-band-`...)
		b = strconv.AppendInt(b, int64(bandClass(k, len(c.bands.Values))), 10)
		b = append(b, `" d="`...)
		for j := 0; j < n; j++ {
			cmd := byte('L')
			if j == 0 {
				cmd = 'M'
			}
			b = pt(b, cmd, xs[j], yi(top[j]))
		}
		for j := n - 1; j >= 0; j-- {
			b = pt(b, 'L', xs[j], yi(base[j]))
		}
		b = append(b, `Z"/>`...)
		copy(base, top)
	}
	b = append(b, `<path class="snap-reserved" vector-effect="non-scaling-stroke" d="`...)
	for j, p := range c.points {
		cmd := byte('L')
		if j == 0 {
			cmd = 'M'
		}
		b = pt(b, cmd, xs[j], yi(p.Reserved))
	}
	b = append(b, `"/>`...)
	if c.peakIndex >= c.from && c.peakIndex <= c.to {
		x := xi(c.peakIndex)
		b = append(b, `<path class="snap-peak-line" vector-effect="non-scaling-stroke" d="`...)
		b = pt(b, 'M', x, 0)
		b = pt(b, 'L', x, 3000)
		b = append(b, `"/>`...)
	}
	b = append(b, `</svg>`...)
	return string(b)
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
	if len(p.chart.points) == 0 {
		return
	}
	fx, fy := pointer(ctx, e)
	if p.dragging {
		p.dragTo = fx
		lo, hi := math.Min(p.dragFrom, p.dragTo), math.Max(p.dragFrom, p.dragTo)
		setOverlay(ctx, `<div class="snap-drag" style="left:`+pct(lo)+`;width:`+pct(hi-lo)+`"></div>`)
		return
	}
	j := p.chart.nearest(p.chart.indexAt(fx))
	p.hover = j
	p.hoverBand = p.chart.bandAt(j, int64((1-fy)*float64(p.chart.maxV)))
	setOverlay(ctx, p.tipHTML(p.device(), j))
}

func (p *SnapshotPage) onChartLeave(ctx app.Context, e app.Event) {
	ctx.PreventUpdate()
	p.hover, p.dragging = -1, false
	setOverlay(ctx, "")
}

func (p *SnapshotPage) onChartDown(ctx app.Context, e app.Event) {
	ctx.PreventUpdate()
	if len(p.chart.points) == 0 {
		return
	}
	e.PreventDefault()
	fx, _ := pointer(ctx, e)
	p.dragging, p.dragFrom, p.dragTo = true, fx, fx
}

func (p *SnapshotPage) onChartUp(ctx app.Context, e app.Event) {
	if !p.dragging {
		ctx.PreventUpdate()
		return
	}
	p.dragging = false
	setOverlay(ctx, "")
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
		overlay = append(overlay, app.Span().Class("snap-ytick").Style("top", pct(float64(k)/4)).Text(bytesize.Format(v, p.unit)))
	}
	if p.state != nil && p.state.Index >= c.from && p.state.Index <= c.to {
		overlay = append(overlay, app.Div().Class("snap-sel-line").Style("left", pct(c.x(p.state.Index)/chartW)))
	}
	// Filled by the pointer handlers, outside go-app's rendering.
	overlay = append(overlay, app.Div().Class("snap-overlay"))
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

// tipHTML draws the hover line and the tooltip for point j: totals, the
// bands there and the stack of the band under the cursor.
func (p *SnapshotPage) tipHTML(d *analysis.DeviceReport, j int) string {
	c := &p.chart
	if d == nil || j < 0 || j >= len(c.points) {
		return ""
	}
	pt := c.points[j]
	fx := c.x(pt.Index) / chartW
	var b strings.Builder
	b.WriteString(`<div class="snap-hover-line" style="left:` + pct(fx) + `"></div>`)
	side := "left:" + pct(fx)
	if fx > 0.55 {
		side = "right:" + pct(1-fx)
	}
	b.WriteString(`<div class="snap-tip" id="snap-tip" style="` + side + `">`)
	head := fmt.Sprintf("Entry %d", pt.Index)
	if pt.Index < 0 {
		head = "Before the first entry"
	}
	if pt.TimeUS > 0 && d.FirstTimeUS > 0 {
		head += fmt.Sprintf(" · %.3f s", float64(pt.TimeUS-d.FirstTimeUS)/1e6)
	}
	b.WriteString("<strong>" + html.EscapeString(head) + "</strong><div>allocated " + bytesize.Format(pt.Allocated, p.unit) +
		" · reserved " + bytesize.Format(pt.Reserved, p.unit) + `</div><ul class="snap-tip-list">`)
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
	n := len(c.bands.Sites)
	for i, bd := range bs {
		if i == 6 {
			break
		}
		cls := "snap-tip-row"
		if bd.k == p.hoverBand {
			cls += " snap-tip-hot"
		}
		fmt.Fprintf(&b, `<li class="%s"><span class="snap-swatch snap-bg-%d"></span> %s %s</li>`, cls, bandClass(bd.k, n),
			bytesize.Format(bd.v, p.unit), html.EscapeString(c.bands.Sites[bd.k]))
	}
	b.WriteString("</ul>")
	if p.hoverBand >= 0 && p.hoverBand < len(c.bands.SiteIndex) {
		si := c.bands.SiteIndex[p.hoverBand]
		for _, s := range d.TopSites {
			if s.SiteIndex == si && si >= 0 {
				// Python frames say the most in a small box; C++ only without.
				var lines []string
				for _, l := range s.Stack {
					if strings.Contains(l, ".py:") {
						lines = append(lines, l)
					}
				}
				if len(lines) == 0 {
					lines = s.Stack
				}
				if len(lines) > 8 {
					lines = append(lines[:8:8], "…")
				}
				if len(lines) == 0 {
					lines = []string{"(no stack recorded)"}
				}
				b.WriteString(`<pre class="snap-tip-stack">` + html.EscapeString(strings.Join(lines, "\n")) + "</pre>")
				break
			}
		}
	}
	b.WriteString("</div>")
	return b.String()
}
