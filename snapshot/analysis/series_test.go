package analysis

import (
	"slices"
	"testing"
)

func TestSeries(t *testing.T) {
	s := loadReal(t, "pt26_cs336_ctx128_fullstep.pickle")
	a := Analyze(s, Options{TimelinePoints: 300, SeriesSites: 5})
	d := a.Devices[0]
	r := d.Report()
	full := d.Series(-1, d.Trace.Len()-1, 300, 5)
	if !slices.Equal(full.Points, r.Timeline) {
		t.Errorf("Series over the whole trace differs from the report's timeline")
	}
	// A zoomed range: every point is the exact state, and the range's
	// highest state (found by brute force) is among the points.
	from, to := 19200, 19341
	z := d.Series(to, from, 30, 5) // reversed on purpose
	if z.From != from || z.To != to {
		t.Fatalf("range = %d..%d, want %d..%d", z.From, z.To, from, to)
	}
	var best int64 = -1
	bestAt := 0
	for i := from; i <= to; i++ {
		if v := d.StateAt(i, 0, 0).AllocatedBytes; v > best {
			best, bestAt = v, i
		}
	}
	found := false
	for j, p := range z.Points {
		st := d.StateAt(p.Index, 0, 0)
		if p.Allocated != st.AllocatedBytes || p.Reserved != st.ReservedBytes {
			t.Errorf("point %+v, state %d/%d", p, st.AllocatedBytes, st.ReservedBytes)
		}
		var col int64
		for _, row := range z.Sites.Values {
			col += row[j]
		}
		if col != p.Allocated {
			t.Errorf("site bands at %d sum to %d, want %d", p.Index, col, p.Allocated)
		}
		found = found || (p.Index == bestAt && p.Allocated == best)
	}
	if !found || len(z.Points) > 30 {
		t.Errorf("%d points; range maximum %d at %d found: %v", len(z.Points), best, bestAt, found)
	}
	// Out-of-range and degenerate requests are clamped, not refused.
	if e := d.Series(-50, -50, 0, 0); e.From != -1 || e.To != -1 || len(e.Points) != 1 {
		t.Errorf("degenerate series = %+v", e)
	}
}
