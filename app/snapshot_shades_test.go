package app

import (
	"fmt"
	"math/rand"
	"testing"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/chart"
)

// TestPhaseShades checks each span's band, class and tooltip against its
// phase and step, with phases in every order and a number that is no
// phase (a class of nothing then).
func TestPhaseShades(t *testing.T) {
	names := map[analysis.Phase]string{analysis.PhaseForward: "forward", analysis.PhaseBackward: "backward",
		analysis.PhaseOptimizer: "optimizer", analysis.PhaseOther: "other"}
	phases := []analysis.Phase{analysis.PhaseForward, analysis.PhaseBackward, analysis.PhaseForward, analysis.PhaseOptimizer,
		analysis.PhaseOther, 9, analysis.PhaseOptimizer, analysis.PhaseBackward}
	d := &analysis.DeviceReport{}
	for k, ph := range phases {
		d.PhaseSpans = append(d.PhaseSpans, analysis.PhaseSpan{Step: k / 3, Phase: ph, FirstEntry: 10 * k, LastEntry: 10*k + 9})
	}
	got, class, label, hidden := phaseShades(d, 0, 10*len(phases)-1)
	if len(got) != len(phases) || hidden != 0 {
		t.Fatalf("%d shades (%d hidden) for %d spans", len(got), hidden, len(phases))
	}
	for k, ph := range phases {
		want := ""
		if n, ok := names[ph]; ok {
			want = fmt.Sprintf("shade-%s shade-step-%d", n, (k/3)%2)
			if l, w := label(k), fmt.Sprintf("step %d: %s (entries %d–%d)", k/3, n, 10*k, 10*k+9); l != w {
				t.Errorf("span %d: tooltip %q, want %q", k, l, w)
			}
		}
		if s := got[k]; class(k) != want || s.From != 10*k || s.To != 10*k+9 {
			t.Errorf("span %d: %+v class %q, want class %q over %d–%d", k, s, class(k), want, 10*k, 10*k+9)
		}
	}
}

// TestDeviceChartShadesAsChart checks that the timeline of a device, whose
// spans too narrow to draw are left out before the chart sees them
// (phaseShades), drawn at once or with its shades added later
// (withPhaseShades), is the one the chart draws from all the spans, with the
// same count of hidden bands: over the whole trace and zoomed ranges,
// spans of every width around the chart's narrowest drawn band, some out
// of range.
func TestDeviceChartShadesAsChart(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{10, 997, 10000, 123457} {
		d := &analysis.DeviceReport{}
		phases := []analysis.Phase{analysis.PhaseForward, analysis.PhaseBackward, analysis.PhaseOptimizer}
		names := []string{"forward", "backward", "optimizer"}
		for e, k := 0, 0; e < n; k++ {
			w := rng.Intn(max(2, n/1000)) // around 5 units of 10,000
			if rng.Intn(20) == 0 {
				w = rng.Intn(n/5 + 1)
			}
			d.PhaseSpans = append(d.PhaseSpans, analysis.PhaseSpan{Step: k / 3, Phase: phases[k%3], FirstEntry: e, LastEntry: e + w})
			e += w + rng.Intn(2)
		}
		for _, r := range [][2]int{{0, n - 1}, {n / 3, n / 3}, {n / 3, n/3 + 1}, {n / 7, n / 2}, {n / 2, n/2 + 2000}} {
			var pts []analysis.Point
			for i := r[0]; i <= r[1]; i += max(1, (r[1]-r[0])/50) {
				pts = append(pts, analysis.Point{Index: i, Allocated: int64(i % 977), Reserved: 1000})
			}
			if pts[len(pts)-1].Index != r[1] {
				pts = append(pts, analysis.Point{Index: r[1], Allocated: 5, Reserved: 1000})
			}
			bands := &analysis.SiteSeries{Sites: []string{"other sites"}, SiteIndex: []int32{-1}, Values: [][]int64{make([]int64, len(pts))}}
			got := deviceChart(d, pts, bands, bytesize.Binary)
			// All the spans, as the chart draws them (an independent
			// reading of the band classes and labels).
			all := make([]chart.Shade, len(d.PhaseSpans))
			for k, sp := range d.PhaseSpans {
				all[k] = chart.Shade{From: sp.FirstEntry, To: sp.LastEntry}
			}
			want := chart.NewTimeline(pts, bands, chart.Options{Unit: bytesize.Binary, Peak: d.PeakIndex, Shades: all,
				ShadeClass: func(k int) string {
					return fmt.Sprintf("shade-%s shade-step-%d", names[k%3], d.PhaseSpans[k].Step%2)
				},
				ShadeLabel: func(k int) string {
					sp := d.PhaseSpans[k]
					return fmt.Sprintf("step %d: %s (entries %d–%d)", sp.Step, names[k%3], sp.FirstEntry, sp.LastEntry)
				}})
			if got.SVG != want.SVG || got.ShadesSVG != want.ShadesSVG || got.HiddenShades != want.HiddenShades {
				t.Errorf("%d entries, range %v: hidden %d, want %d; SVG equal %v, shades equal %v", n, r, got.HiddenShades, want.HiddenShades, got.SVG == want.SVG, got.ShadesSVG == want.ShadesSVG)
			}
			// The shades added to the timeline drawn without them, as the
			// page adds them with the diagnosis (withPhaseShades).
			added := withPhaseShades(chart.NewTimeline(pts, bands, chart.Options{Unit: bytesize.Binary, Peak: d.PeakIndex}), d)
			if added.SVG != want.SVG || added.ShadesSVG != want.ShadesSVG || added.HiddenShades != want.HiddenShades {
				t.Errorf("%d entries, range %v: shades added later: hidden %d, want %d; SVG equal %v, shades equal %v", n, r,
					added.HiddenShades, want.HiddenShades, added.SVG == want.SVG, added.ShadesSVG == want.ShadesSVG)
			}
			if n == 123457 && r[0] == 0 && (want.HiddenShades == 0 || want.HiddenShades == len(all)) {
				t.Errorf("the whole trace hides %d of %d bands: the test misses the boundary", want.HiddenShades, len(all))
			}
		}
	}
}
