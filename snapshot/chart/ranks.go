package chart

import (
	"math"
	"strconv"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/untrusted"
)

// The chart of all ranks at once: one line per rank of a distributed job,
// its allocated (or reserved) bytes over time, every line on the same axes
// so that a rank that holds more stands out; the outliers are drawn in
// red above the others, and the band of peaks that are not outliers
// (load.OutlierBand) is shaded. The page places the HTML as one node and
// finds the line under the pointer with Nearest.

// RankLine is one rank's line.
type RankLine struct {
	// Label names the rank ("rank 3"), in its tooltip.
	Label string
	// Outlier lines are drawn in red, above the others.
	Outlier bool
	// Points are the rank's timeline, in trace order.
	Points []analysis.Point
}

// RanksOptions are the choices of the chart beyond its lines.
type RanksOptions struct {
	// Unit is how the axis labels sizes.
	Unit bytesize.Unit
	// Reserved draws the reserved bytes instead of the allocated ones.
	Reserved bool
	// BandLo and BandHi, when BandHi > 0, are the range of peaks that are
	// not outliers, shaded, with Median drawn as a dashed line.
	BandLo, BandHi, Median int64
}

// Ranks is the laid-out chart of all ranks.
type Ranks struct {
	// Lines are the ranks drawn, as given.
	Lines []RankLine
	// Time is true when the x axis is the time since each rank's first
	// trace entry (every line has times); else it is the share of each
	// rank's trace (entries), 0 to 100 %.
	Time bool
	// SpanUS is the x axis' length in µs when Time.
	SpanUS int64
	// Top is the top of the y axis in bytes; Ticks label it from 0.
	Top   int64
	Ticks []Tick
	// XTicks label the x axis.
	XTicks []XTick
	// HTML is the drawing: the plot (grid, band, median, lines, an empty
	// highlight path "snap-rk-hl" for the page to fill) with its y tick
	// labels, and the x axis, in one element.
	HTML string

	opt RanksOptions
	xs  [][]float64 // per line, each point's x as a fraction of the width
}

// XTick is one label of an x axis.
type XTick struct {
	// X is where the tick is, as a fraction of the width.
	X float64
	// Label is its text ("2.5 s", "50 %").
	Label string
}

// NewRanks lays out the lines (those with no point are not drawn); it
// returns nil when none has a point.
func NewRanks(lines []RankLine, opt RanksOptions) *Ranks {
	c := &Ranks{Lines: lines, opt: opt, Time: true}
	drawn := 0
	var maxV int64
	for _, l := range lines {
		if len(l.Points) == 0 {
			continue
		}
		drawn++
		first, last := l.Points[0], l.Points[len(l.Points)-1]
		if first.TimeUS <= 0 || last.TimeUS <= first.TimeUS {
			c.Time = false
		}
		c.SpanUS = max(c.SpanUS, last.TimeUS-first.TimeUS)
		for _, p := range l.Points {
			maxV = max(maxV, c.value(p))
		}
	}
	if drawn == 0 {
		return nil
	}
	if !c.Time {
		c.SpanUS = 0
	}
	c.xs = make([][]float64, len(lines))
	for k, l := range lines {
		c.xs[k] = make([]float64, len(l.Points))
		if len(l.Points) == 0 {
			continue
		}
		first, last := l.Points[0], l.Points[len(l.Points)-1]
		for j, p := range l.Points {
			switch {
			case c.Time:
				c.xs[k][j] = float64(p.TimeUS-first.TimeUS) / float64(c.SpanUS)
			case last.Index > first.Index:
				c.xs[k][j] = float64(p.Index-first.Index) / float64(last.Index-first.Index)
			}
		}
	}
	c.Top, c.Ticks = YTicks(maxV, opt.Unit)
	c.XTicks = c.xTicks()
	c.HTML = c.draw()
	return c
}

// value is what a point's line shows.
func (c *Ranks) value(p analysis.Point) int64 {
	if c.opt.Reserved {
		return p.Reserved
	}
	return p.Allocated
}

// xTicks labels the x axis: 3 to 5 round steps of seconds over the
// longest trace, or quarters of the traces.
func (c *Ranks) xTicks() []XTick {
	if !c.Time {
		var t []XTick
		for q := range 5 {
			t = append(t, XTick{X: float64(q) / 4, Label: strconv.Itoa(25*q) + " %"})
		}
		return t
	}
	span := float64(c.SpanUS) / 1e6
	step, n, dec := niceSteps(span, false)
	var t []XTick
	for i := 0; i <= n; i++ {
		v := float64(i) * step
		if v > span*(1+1e-9) {
			break
		}
		t = append(t, XTick{X: v / span, Label: strconv.FormatFloat(v, 'f', dec, 64) + " s"})
	}
	return t
}

// X is the chart's x, as a fraction of its width, of point j of line k.
func (c *Ranks) X(k, j int) float64 { return c.xs[k][j] }

// Y maps bytes to a fraction of the chart's height from the top.
func (c *Ranks) Y(v int64) float64 { return 1 - float64(v)/float64(c.Top) }

// At is the value line k shows at x (a fraction of the width), joining
// its points by straight lines; ok is false where the line does not reach
// (a shorter trace) or has no point.
func (c *Ranks) At(k int, x float64) (v float64, ok bool) {
	xs, pts := c.xs[k], c.Lines[k].Points
	if len(pts) == 0 || x < xs[0]-1e-9 || x > xs[len(xs)-1]+1e-9 {
		return 0, false
	}
	j := 0
	for j+1 < len(xs) && xs[j+1] < x {
		j++
	}
	if j+1 >= len(xs) || xs[j+1] <= xs[j] {
		return float64(c.value(pts[j])), true
	}
	f := (x - xs[j]) / (xs[j+1] - xs[j])
	a, b := float64(c.value(pts[j])), float64(c.value(pts[j+1]))
	return a + f*(b-a), true
}

// Nearest returns the line closest to the point (x, y), both fractions of
// the chart's width and height from its top left: the line whose value
// at x is nearest to y, outliers first on a tie; -1 if no line reaches x.
func (c *Ranks) Nearest(x, y float64) int {
	best, bestD := -1, math.Inf(1)
	want := (1 - y) * float64(c.Top)
	for k := range c.Lines {
		v, ok := c.At(k, x)
		if !ok {
			continue
		}
		d := math.Abs(v - want)
		if d < bestD || d == bestD && c.Lines[k].Outlier && !c.Lines[best].Outlier {
			best, bestD = k, d
		}
	}
	return best
}

// draw renders the chart: the plot with its grid, band, median and lines
// (outliers last, so on top), then the axes' labels. Like the timeline's,
// it appends with strconv: it runs on the page's main thread.
func (c *Ranks) draw() string {
	n := 0
	for _, l := range c.Lines {
		n += len(l.Points)
	}
	b := make([]byte, 0, 1024+14*n+80*len(c.Lines))
	num := strconv.AppendInt
	yi := func(v int64) int64 { return int64(math.Round(math.Max(0, math.Min(1, c.Y(v))) * svgH)) }
	b = append(b, `<div class="snap-rk"><div class="snap-chart snap-rk-plot"><svg class="snap-chart-svg" viewBox="0 0 10000 3000" preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg" aria-hidden="true">`...)
	b = appendGrid(b, c.Ticks, c.Top, yi)
	if c.opt.BandHi > 0 {
		hi, lo := yi(c.opt.BandHi), yi(max(0, c.opt.BandLo))
		b = append(b, `<rect class="snap-rk-band" x="0" width="10000" y="`...)
		b = num(b, hi, 10)
		b = append(b, `" height="`...)
		b = num(b, lo-hi, 10)
		b = append(b, `"/>`...)
		y := yi(c.opt.Median)
		b = append(b, `<line class="snap-rk-median" x1="0" x2="10000" y1="`...)
		b = num(b, y, 10)
		b = append(b, `" y2="`...)
		b = num(b, y, 10)
		b = append(b, `" vector-effect="non-scaling-stroke"/>`...)
	}
	for _, outliers := range []bool{false, true} {
		for k, l := range c.Lines {
			if l.Outlier != outliers || len(l.Points) == 0 {
				continue
			}
			b = append(b, `<path class="snap-rk-line`...)
			if l.Outlier {
				b = append(b, ` snap-rk-outlier`...)
			}
			b = append(b, `" data-line="`...)
			b = num(b, int64(k), 10)
			b = append(b, `" vector-effect="non-scaling-stroke" d="`...)
			for j, p := range l.Points {
				cmd := byte('L')
				if j == 0 {
					cmd = 'M'
				}
				b = append(b, cmd)
				b = num(b, int64(math.Round(c.xs[k][j]*svgW)), 10)
				b = append(b, ' ')
				b = num(b, yi(c.value(p)), 10)
			}
			if len(l.Points) == 1 { // a dot's worth of line
				b = append(b, 'h', '1')
			}
			b = append(b, `"><title>`...)
			b = append(b, untrusted.HTML(l.Label)...)
			b = append(b, `</title></path>`...)
		}
	}
	b = append(b, `<path class="snap-rk-hl" vector-effect="non-scaling-stroke" d=""/></svg>`...)
	for _, tk := range c.Ticks {
		b = append(b, `<span class="snap-ytick" style="top:`...)
		b = append(b, Percent(tk.Y)...)
		b = append(b, `">`...)
		b = append(b, tk.Label...)
		b = append(b, `</span>`...)
	}
	b = append(b, `</div><div class="snap-rk-xaxis">`...)
	for _, tk := range c.XTicks {
		b = append(b, `<span style="left:`...)
		b = append(b, Percent(tk.X)...)
		b = append(b, `">`...)
		b = append(b, tk.Label...)
		b = append(b, `</span>`...)
	}
	return string(append(b, `</div></div>`...))
}
