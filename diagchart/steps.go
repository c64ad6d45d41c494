// Package diagchart lays out the snapshot diagnosis charts: the per-step
// growth chart (for each training step a bar up to its peak allocated
// memory with a mark at the memory left at its end, and, when a leak was
// found, the growth it predicts) and the byte-time icicle of the
// allocation stacks. It is pure geometry, and SVG text where no text comes
// from the file, with golden tests; the page only places the result.
package diagchart

import (
	"fmt"
	"math"
	"strings"

	"oomscope/bytesize"
)

// Step is one step's numbers.
type Step struct {
	// Peak and End are the step's peak allocated memory and the memory
	// after its last entry.
	Peak, End int64
	// Partial marks a step the trace window cuts.
	Partial bool
}

// Input is what the chart shows.
type Input struct {
	Steps []Step
	// LeakPerStep, when > 0, draws the leak's growth: a line from the
	// first judged step's end rising by that much per step.
	LeakPerStep int64
	// LeakFrom is the step the leak line starts at.
	LeakFrom int
	// Unit renders the axis labels.
	Unit bytesize.Unit
}

// Geometry of the chart, in viewBox units.
const (
	Width   = 640.0
	Height  = 160.0
	padLeft = 64.0
	padTop  = 8.0
	padBot  = 18.0
	// MaxBars is the most bars drawn; more steps are grouped, each bar
	// then showing its group's highest peak and its last step's end.
	MaxBars = 120
)

// Bar is one drawn bar.
type Bar struct {
	// First and Last are the steps it stands for.
	First, Last int
	// X and W place it; YPeak and YEnd are the tops of the peak bar and
	// of the end mark (y grows downwards; the baseline is at Base).
	X, W, YPeak, YEnd float64
	Peak, End         int64
	Partial           bool
}

// Tick is one y-axis label.
type Tick struct {
	Y     float64
	Label string
}

// Line is a straight segment.
type Line struct{ X1, Y1, X2, Y2 float64 }

// Chart is the laid-out chart.
type Chart struct {
	Bars  []Bar
	Ticks []Tick
	// Trend is the leak's predicted growth (nil without a leak).
	Trend *Line
	// Base is the y of the zero line; Max the value at the top.
	Base float64
	Max  int64
}

// Layout places the steps; with no steps the chart is empty.
func Layout(in Input) Chart {
	c := Chart{Base: Height - padBot}
	n := len(in.Steps)
	if n == 0 {
		return c
	}
	group := (n + MaxBars - 1) / MaxBars
	for first := 0; first < n; first += group {
		last := min(first+group, n) - 1
		b := Bar{First: first, Last: last, End: in.Steps[last].End}
		for k := first; k <= last; k++ {
			b.Peak = max(b.Peak, in.Steps[k].Peak)
			b.Partial = b.Partial || in.Steps[k].Partial
		}
		c.Bars = append(c.Bars, b)
		c.Max = max(c.Max, b.Peak, b.End)
	}
	if in.LeakPerStep > 0 && in.LeakFrom >= 0 && in.LeakFrom < n {
		c.Max = max(c.Max, in.Steps[in.LeakFrom].End+in.LeakPerStep*int64(n-1-in.LeakFrom))
	}
	top := niceCeil(c.Max, in.Unit)
	c.Max = top
	plotW, plotH := Width-padLeft-4, c.Base-padTop
	y := func(v int64) float64 {
		if top <= 0 {
			return c.Base
		}
		return c.Base - plotH*float64(v)/float64(top)
	}
	slot := plotW / float64(len(c.Bars))
	for i := range c.Bars {
		b := &c.Bars[i]
		b.X = padLeft + float64(i)*slot + slot*0.15
		b.W = slot * 0.7
		b.YPeak, b.YEnd = y(b.Peak), y(b.End)
	}
	for i := 0; i <= 4; i++ {
		v := top * int64(i) / 4
		c.Ticks = append(c.Ticks, Tick{Y: y(v), Label: bytesize.Format(v, in.Unit)})
	}
	if in.LeakPerStep > 0 && in.LeakFrom >= 0 && in.LeakFrom < n {
		x := func(step int) float64 { return padLeft + (float64(step/group)+0.5)*slot }
		start := in.Steps[in.LeakFrom].End
		c.Trend = &Line{X1: x(in.LeakFrom), Y1: y(start), X2: x(n - 1), Y2: y(start + in.LeakPerStep*int64(n-1-in.LeakFrom))}
	}
	return c
}

// niceCeil rounds v up to 1, 2 or 5 × a power of ten of the unit the axis
// shows (KiB, MiB, GiB for Binary; kB, MB, GB for Decimal), so that the
// quarter ticks read as round numbers.
func niceCeil(v int64, u bytesize.Unit) int64 {
	if v <= 1 {
		return 1
	}
	step := 1024.0
	if u == bytesize.Decimal {
		step = 1000
	}
	base := 1.0
	for float64(v) >= base*step {
		base *= step
	}
	x := float64(v) / base
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 4, 5, 8, 10} {
		if m*p >= x {
			return int64(math.Ceil(m * p * base))
		}
	}
	return v
}

// SVG renders the chart as a standalone <svg> element (viewBox Width ×
// Height) with a title per bar. Its only text is numbers and fixed words.
func (c Chart) SVG() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="step-chart" viewBox="0 0 %g %g" role="img" aria-label="Allocated memory per step: peak and end">`, Width, Height)
	for _, t := range c.Ticks {
		fmt.Fprintf(&b, `<line class="step-grid" x1="%g" y1="%.2f" x2="%g" y2="%.2f"/>`, padLeft, t.Y, Width-4, t.Y)
		fmt.Fprintf(&b, `<text class="step-tick" x="%g" y="%.2f">%s</text>`, padLeft-4, t.Y+3, t.Label)
	}
	for _, bar := range c.Bars {
		cls := "step-peak"
		if bar.Partial {
			cls += " step-partial"
		}
		steps := fmt.Sprintf("step %d", bar.First)
		if bar.Last > bar.First {
			steps = fmt.Sprintf("steps %d–%d", bar.First, bar.Last)
		}
		fmt.Fprintf(&b, `<g><title>%s: peak %s, end %s</title>`, steps, bytesize.Commas(bar.Peak)+" B", bytesize.Commas(bar.End)+" B")
		fmt.Fprintf(&b, `<rect class="%s" x="%.2f" y="%.2f" width="%.2f" height="%.2f"/>`, cls, bar.X, bar.YPeak, bar.W, c.Base-bar.YPeak)
		fmt.Fprintf(&b, `<rect class="step-end" x="%.2f" y="%.2f" width="%.2f" height="2"/></g>`, bar.X, bar.YEnd-1, bar.W)
	}
	if t := c.Trend; t != nil {
		fmt.Fprintf(&b, `<line class="step-trend" x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f"/>`, t.X1, t.Y1, t.X2, t.Y2)
	}
	fmt.Fprintf(&b, `<line class="step-axis" x1="%g" y1="%g" x2="%g" y2="%g"/>`, padLeft, c.Base, Width-4, c.Base)
	b.WriteString(`</svg>`)
	return b.String()
}
