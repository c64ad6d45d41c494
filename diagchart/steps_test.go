package diagchart

import (
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"

	"oomscope/bytesize"
	"oomscope/internal/goldenfile"
)

// TestLayout checks the geometry against the numbers: bar heights are
// proportional to the values, bars stay inside the viewBox, the end mark
// sits at the end value, and the leak line rises by the leak per step.
func TestLayout(t *testing.T) {
	const mib = 1 << 20
	in := Input{Steps: []Step{{Peak: 120 * mib, End: 40 * mib, Partial: true}, {Peak: 150 * mib, End: 50 * mib}, {Peak: 160 * mib, End: 60 * mib}, {Peak: 170 * mib, End: 70 * mib}},
		LeakPerStep: 10 * mib, LeakFrom: 1, Unit: bytesize.Binary}
	c := Layout(in)
	if len(c.Bars) != 4 || c.Max < 170*mib {
		t.Fatalf("bars %d, max %d", len(c.Bars), c.Max)
	}
	scale := (c.Base - padTop) / float64(c.Max)
	for i, b := range c.Bars {
		s := in.Steps[i]
		if d := (c.Base - b.YPeak) - scale*float64(s.Peak); d > 1e-9 || d < -1e-9 {
			t.Errorf("bar %d height off by %g", i, d)
		}
		if d := (c.Base - b.YEnd) - scale*float64(s.End); d > 1e-9 || d < -1e-9 {
			t.Errorf("bar %d end mark off by %g", i, d)
		}
		if b.X < padLeft || b.X+b.W > Width || b.YPeak < 0 || b.Partial != s.Partial {
			t.Errorf("bar %d outside the chart or partial wrong: %+v", i, b)
		}
	}
	tr := c.Trend
	if tr == nil || (tr.Y1-tr.Y2)-scale*float64(20*mib) > 1e-9 || (tr.Y1-tr.Y2)-scale*float64(20*mib) < -1e-9 {
		t.Errorf("trend %+v, want a 20 MiB rise over 2 steps", tr)
	}
	if len(c.Ticks) != 5 || c.Ticks[0].Label != "0 B" || c.Ticks[4].Y != padTop {
		t.Errorf("ticks %+v", c.Ticks)
	}
}

// TestGrouping checks that many steps become at most MaxBars bars, each
// with its group's highest peak and its last end.
func TestGrouping(t *testing.T) {
	var in Input
	for k := range 1000 {
		in.Steps = append(in.Steps, Step{Peak: int64(k%7) * 100, End: int64(k)})
	}
	c := Layout(in)
	if len(c.Bars) > MaxBars || c.Bars[len(c.Bars)-1].Last != 999 {
		t.Fatalf("%d bars, last covers up to %d", len(c.Bars), c.Bars[len(c.Bars)-1].Last)
	}
	for _, b := range c.Bars {
		var peak int64
		for k := b.First; k <= b.Last; k++ {
			peak = max(peak, in.Steps[k].Peak)
		}
		if b.Peak != peak || b.End != in.Steps[b.Last].End {
			t.Errorf("bar %d–%d: peak %d end %d, want %d %d", b.First, b.Last, b.Peak, b.End, peak, in.Steps[b.Last].End)
		}
	}
	if c := Layout(Input{}); len(c.Bars) != 0 || c.Trend != nil {
		t.Errorf("empty input drew %+v", c)
	}
}

// TestSVGGolden compares the SVG with testdata and checks it is
// well-formed XML.
func TestSVGGolden(t *testing.T) {
	const mib = 1 << 20
	svg := Layout(Input{Steps: []Step{{Peak: 120 * mib, End: 40 * mib, Partial: true}, {Peak: 150 * mib, End: 50 * mib}, {Peak: 160 * mib, End: 60 * mib}},
		LeakPerStep: 10 * mib, LeakFrom: 1, Unit: bytesize.Binary}).SVG()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := d.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed: %v", err)
			}
			break
		}
	}
	goldenfile.Check(t, filepath.Join("testdata", "leak.svg"), []byte(svg))
}
