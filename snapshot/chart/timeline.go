// Package chart lays out the snapshot page's pictures and writes them as
// SVG and HTML: the timeline of allocated memory stacked by allocation
// site, with the reserved line, the peak, shaded bands (steps, phases) and
// an axis of round ticks; its hover tooltip; the allocator's segments
// with their blocks; and the memory of all ranks of a job at once
// (ranks.go). It is pure Go, tested on the host; the page (app/)
// only places what it is given.
//
// Every text that comes from a snapshot (site, frame and file names) is
// written through package untrusted, so no name can add markup.
package chart

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/untrusted"
)

// The timeline's SVG coordinates: 10000 × 3000 user units, stretched to the
// chart's box (preserveAspectRatio="none"); the page overlays HTML at the
// same fractions of its width and height.
const (
	svgW = 10000
	svgH = 3000
	// minShade is the narrowest shade drawn, in drawing units: 0.05 % of the
	// width, under half a pixel of a 1,000-pixel chart. Narrower bands would
	// be invisible (and thousands of them slow the page); zooming in widens
	// them.
	minShade = 5
)

// Shade is a range of trace entries drawn as a shaded band behind the
// timeline (a training step, a phase): From and To are its first and last
// trace index. Its class and tooltip come from Options.ShadeClass and
// ShadeLabel, asked only for the bands drawn: a trace of many short steps
// has hundreds of thousands of shades, nearly all too narrow to draw, and
// shades without strings hold no pointers for a garbage collector to scan.
type Shade struct {
	From, To int
}

// Options are the choices of a timeline beyond its data.
type Options struct {
	// Unit is how the axis labels sizes.
	Unit bytesize.Unit
	// Peak is the trace index of the peak, marked by a line when in range.
	Peak int
	// Shades are drawn behind the bands, in order.
	Shades []Shade
	// ShadeClass, when set, returns what is added to shade k's CSS classes
	// (letters, digits, '-' and spaces only; anything else is dropped).
	ShadeClass func(k int) string
	// ShadeLabel, when set, returns shade k's tooltip.
	ShadeLabel func(k int) string
}

// Timeline is the stacked timeline of one device (or of a zoomed range):
// its data, its scale and its SVG, drawn once.
type Timeline struct {
	// Points are the timeline's states, in trace order.
	Points []analysis.Point
	// Bands split each point's allocated bytes by site.
	Bands *analysis.SiteSeries
	// From and To are the first and last trace index drawn.
	From, To int
	// Top is the top of the y axis in bytes.
	Top int64
	// Ticks label the y axis, from 0 to Top.
	Ticks []Tick
	// HiddenShades counts the shades in range that are too narrow to draw
	// at this zoom (see minShade).
	HiddenShades int
	// SVG is the drawing: grid, bands, reserved line and peak.
	SVG string
	// ShadesSVG is the shades, an SVG of their own on the same
	// coordinates, to be placed behind SVG; "" when none is drawn. Apart,
	// a page adds them to a timeline it shows without them (WithShades)
	// and the timeline's drawing stays as it is: with them in one SVG, the
	// browser parsed the whole timeline again (150-220 KB on 55-200 MB
	// snapshots) to show a few dozen rectangles.
	ShadesSVG string

	opt Options
}

// AllocatedLabel names the one band of AllocatedBand.
const AllocatedLabel = "allocated (sites to come)"

// AllocatedBand is the band of a timeline drawn before its sites are known
// (the page's, from the summary): one band, each point's allocated bytes,
// labelled AllocatedLabel. The timeline keeps the scale, the reserved line
// and the peak of the one drawn later with the site bands, whose stack
// tops it follows: the site series' columns add up to the points'
// allocated bytes.
func AllocatedBand(pts []analysis.Point) *analysis.SiteSeries {
	row := make([]int64, len(pts))
	for j, p := range pts {
		row[j] = p.Allocated
	}
	return &analysis.SiteSeries{Sites: []string{AllocatedLabel}, SiteIndex: []int32{-1}, Values: [][]int64{row}}
}

// NewTimeline lays out pts with their site bands; it returns nil when
// there is nothing to draw.
func NewTimeline(pts []analysis.Point, bands *analysis.SiteSeries, opt Options) *Timeline {
	if len(pts) == 0 || bands == nil {
		return nil
	}
	t := &Timeline{Points: pts, Bands: bands, From: pts[0].Index, To: pts[len(pts)-1].Index, opt: opt}
	var maxV int64
	for _, p := range pts {
		maxV = max(maxV, p.Allocated, p.Reserved)
	}
	t.Top, t.Ticks = YTicks(maxV, opt.Unit)
	t.SVG = t.draw()
	t.ShadesSVG = t.drawShades()
	return t
}

// WithShades returns a copy of t with shades, their classes and labels (as
// Options.Shades, ShadeClass and ShadeLabel) in place of its own; its SVG
// is t's, not drawn again.
func (t *Timeline) WithShades(shades []Shade, class, label func(k int) string) *Timeline {
	c := *t
	c.opt.Shades, c.opt.ShadeClass, c.opt.ShadeLabel = shades, class, label
	c.HiddenShades = 0
	c.ShadesSVG = c.drawShades()
	return &c
}

// X maps a trace index to a fraction of the chart's width.
func (t *Timeline) X(idx int) float64 {
	if t.To <= t.From {
		return 0.5
	}
	return float64(idx-t.From) / float64(t.To-t.From)
}

// Y maps bytes to a fraction of the chart's height from the top.
func (t *Timeline) Y(v int64) float64 { return 1 - float64(v)/float64(t.Top) }

// IndexAt maps a fraction of the chart's width to a trace index.
func (t *Timeline) IndexAt(f float64) int {
	return t.From + int(math.Round(f*float64(t.To-t.From)))
}

// BytesAt maps a fraction of the chart's height from the top to bytes.
func (t *Timeline) BytesAt(f float64) int64 { return int64((1 - f) * float64(t.Top)) }

// Nearest returns the index of the point closest to trace index idx.
func (t *Timeline) Nearest(idx int) int {
	j := sort.Search(len(t.Points), func(j int) bool { return t.Points[j].Index >= idx })
	switch {
	case j == len(t.Points):
		return j - 1
	case j > 0 && idx-t.Points[j-1].Index < t.Points[j].Index-idx:
		return j - 1
	}
	return j
}

// BandAt returns the band under height v (bytes) at point j, -1 if none.
func (t *Timeline) BandAt(j int, v int64) int {
	var acc int64
	for k, row := range t.Bands.Values {
		if j < len(row) {
			acc += row[j]
			if v <= acc && row[j] > 0 {
				return k
			}
		}
	}
	return -1
}

// BandClass numbers the colour of band k of n (CSS snap-band-N and
// snap-bg-N): the last band ("other sites") is always grey (99).
func BandClass(k, n int) int {
	if k == n-1 {
		return 99
	}
	return k % 10
}

// XLabel names a trace index for the x axis, with its time into the trace
// when the timeline knows it (firstUS is the trace's first time_us).
func (t *Timeline) XLabel(idx int, firstUS int64) string {
	s := "entry " + bytesize.Commas(int64(idx))
	if idx < 0 {
		s = "before the trace"
	}
	for _, p := range t.Points {
		if p.Index == idx && p.TimeUS > 0 && firstUS > 0 {
			s += " · " + seconds(p.TimeUS-firstUS)
			break
		}
	}
	return s
}

// seconds renders a duration in µs as seconds with three decimals.
func seconds(us int64) string {
	return strconv.FormatFloat(float64(us)/1e6, 'f', 3, 64) + " s"
}

// Percent renders a fraction (clamped to 0…1) as a CSS percentage.
func Percent(f float64) string {
	return strconv.FormatFloat(100*math.Max(0, math.Min(1, f)), 'f', 2, 64) + "%"
}

// svgOpen starts each of the timeline's SVGs.
const svgOpen = `viewBox="0 0 10000 3000" preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg" aria-hidden="true">`

// drawShades renders the shades in range that are wide enough to see
// (counting the others in HiddenShades), "" when there is none.
func (t *Timeline) drawShades() string {
	var b []byte
	xi := func(idx int) int64 { return int64(math.Round(t.X(idx) * svgW)) }
	for k, s := range t.opt.Shades {
		lo, hi := max(s.From, t.From), min(s.To, t.To)
		if lo > hi {
			continue
		}
		x0, x1 := xi(lo), xi(hi)
		if x1-x0 < minShade {
			t.HiddenShades++
			continue
		}
		if b == nil {
			b = append(b, `<svg class="snap-chart-svg snap-shades-svg" `+svgOpen...)
		}
		b = append(b, `<rect class="snap-shade`...)
		if t.opt.ShadeClass != nil {
			if c := className(t.opt.ShadeClass(k)); c != "" {
				b = append(b, ' ')
				b = append(b, c...)
			}
		}
		b = append(b, `" x="`...)
		b = strconv.AppendInt(b, x0, 10)
		b = append(b, `" y="0" width="`...)
		b = strconv.AppendInt(b, x1-x0, 10)
		b = append(b, `" height="3000"><title>`...)
		if t.opt.ShadeLabel != nil {
			b = append(b, untrusted.HTML(t.opt.ShadeLabel(k))...)
		}
		b = append(b, `</title></rect>`...)
	}
	if b == nil {
		return ""
	}
	return string(append(b, `</svg>`...))
}

// draw renders the grid, the stacked site bands, the reserved line and
// the peak. It appends integer coordinates with strconv: it runs
// on the page's main thread, where fmt would cost a frame.
func (t *Timeline) draw() string {
	b := make([]byte, 0, 64*len(t.Points)*(len(t.Bands.Values)+1))
	b = append(b, `<svg class="snap-chart-svg" `+svgOpen...)
	xi := func(idx int) int64 { return int64(math.Round(t.X(idx) * svgW)) }
	yi := func(v int64) int64 { return int64(math.Round(t.Y(v) * svgH)) }
	num := strconv.AppendInt
	pt := func(b []byte, cmd byte, x, y int64) []byte {
		b = append(b, cmd)
		b = num(b, x, 10)
		b = append(b, ' ')
		return num(b, y, 10)
	}
	b = appendGrid(b, t.Ticks, t.Top, yi)
	// The paths are most of the work (points × bands): their coordinates
	// are worked out in loops without calls and written by appendPoint,
	// one call a point (the page's WebAssembly is built without inlining,
	// and the closures xi, yi and pt cost eight calls a point: 19 ms of a
	// 55 MB file's first frame).
	n := len(t.Points)
	xs := make([]int64, n)
	for j, p := range t.Points {
		xs[j] = xi(p.Index)
	}
	top := float64(t.Top)
	base := make([]int64, n)  // bytes under the band
	sum := make([]int64, n)   // bytes under the band's top
	ybase := make([]int64, n) // their heights in the SVG
	ytop := make([]int64, n)
	for j := range ybase {
		ybase[j] = int64(math.Round((1 - 0/top) * svgH))
	}
	for k, row := range t.Bands.Values {
		if len(row) != n {
			continue
		}
		for j := range row {
			sum[j] = base[j] + row[j]
			ytop[j] = int64(math.Round((1 - float64(sum[j])/top) * svgH))
		}
		b = append(b, `<path class="snap-band snap-band-`...)
		b = num(b, int64(BandClass(k, len(t.Bands.Values))), 10)
		b = append(b, `" d="`...)
		for j := 0; j < n; j++ {
			cmd := byte('L')
			if j == 0 {
				cmd = 'M'
			}
			b = appendPoint(b, cmd, xs[j], ytop[j])
		}
		for j := n - 1; j >= 0; j-- {
			b = appendPoint(b, 'L', xs[j], ybase[j])
		}
		b = append(b, `Z"/>`...)
		copy(base, sum)
		copy(ybase, ytop)
	}
	b = append(b, `<path class="snap-reserved" vector-effect="non-scaling-stroke" d="`...)
	for j, p := range t.Points {
		cmd := byte('L')
		if j == 0 {
			cmd = 'M'
		}
		b = appendPoint(b, cmd, xs[j], int64(math.Round((1-float64(p.Reserved)/top)*svgH)))
	}
	b = append(b, `"/>`...)
	if p := t.opt.Peak; p >= t.From && p <= t.To {
		x := xi(p)
		b = append(b, `<path class="snap-peak-line" vector-effect="non-scaling-stroke" d="`...)
		b = pt(b, 'M', x, 0)
		b = pt(b, 'L', x, svgH)
		b = append(b, `"/>`...)
	}
	b = append(b, `</svg>`...)
	return string(b)
}

// appendPoint appends a path command and its point, "<cmd><x> <y>", as
// strconv.AppendInt writes the numbers, without calls.
func appendPoint(b []byte, cmd byte, x, y int64) []byte {
	var buf [1 + 2*20 + 1]byte // a command, two int64 with their signs, a space
	i := len(buf)
	for k, v := range [2]int64{y, x} {
		u := uint64(v)
		if v < 0 {
			u = -u
		}
		for {
			i--
			buf[i] = byte('0' + u%10)
			if u /= 10; u == 0 {
				break
			}
		}
		if v < 0 {
			i--
			buf[i] = '-'
		}
		if k == 0 {
			i--
			buf[i] = ' '
		}
	}
	i--
	buf[i] = cmd
	return append(b, buf[i:]...)
}

// className keeps the letters, digits, '-' and spaces of a CSS class list.
func className(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == ' ' {
			return r
		}
		return -1
	}, s)
}

// appendGrid writes a horizontal grid line for each tick strictly between 0
// and top, at the SVG height yi gives it.
func appendGrid(b []byte, ticks []Tick, top int64, yi func(int64) int64) []byte {
	for _, tk := range ticks {
		if tk.Bytes == 0 || tk.Bytes >= top {
			continue
		}
		y := yi(tk.Bytes)
		b = append(b, `<line class="snap-grid" x1="0" x2="10000" y1="`...)
		b = strconv.AppendInt(b, y, 10)
		b = append(b, `" y2="`...)
		b = strconv.AppendInt(b, y, 10)
		b = append(b, `" vector-effect="non-scaling-stroke"/>`...)
	}
	return b
}
