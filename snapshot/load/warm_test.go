package load

import (
	"errors"
	"testing"

	"oomscope/snapshot/gen"
)

// TestWarmUpInputs: the warm-up's inputs reach the paths a user's file of
// either family takes: stacks that repeat (a few hundred distinct ones,
// none lazy), and distinct stacks that, past the first ones, stay in the
// file (lazy), with a timeline.
func TestWarmUpInputs(t *testing.T) {
	real, err := warmLoad(gen.RealStacks, func() bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if st := real.Stats(); st.Entries < 10000 || st.Stacks > 500 || st.LazyStacks != 0 {
		t.Errorf("real stacks' warm-up: %+v, want ≥ 10,000 entries and ≤ 500 stacks, none lazy", st)
	}
	dist, err := warmLoad(gen.DistinctStacks, func() bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if st := dist.Stats(); st.Entries < 20000 || st.LazyStacks < st.Stacks/2 {
		t.Errorf("distinct stacks' warm-up: %+v, want ≥ 20,000 entries, most stacks lazy", st)
	}
	for _, f := range []*File{real, dist} {
		if d := f.Report.Devices[f.Report.Busiest()]; len(d.Timeline) == 0 {
			t.Errorf("%s: no timeline", f.Name)
		}
	}
}

// TestWarmUpYields: WarmUp lets its caller in at least every warmSlice
// bytes it generates or decodes, and once stop says true it returns
// ErrWarmUpStopped without calling yield again.
func TestWarmUpYields(t *testing.T) {
	yields := 0
	if err := WarmUp(nil, func() { yields++ }); err != nil {
		t.Fatal(err)
	}
	// Each family's input is generated (the encoder writes frames of
	// 64 KiB: at least a yield per frame), then decoded (a yield per
	// warmSlice bytes).
	var want int64
	for _, fam := range []gen.Family{gen.RealStacks, gen.DistinctStacks} {
		w := &warmWriter{pause: func() bool { return false }}
		if _, err := gen.WriteFamily(w, gen.FamilyOptions{Family: fam, Iterations: WarmSteps[fam]}); err != nil {
			t.Fatal(err)
		}
		want += int64(w.b.Len())/(64<<10) + int64(w.b.Len())/warmSlice
	}
	if int64(yields) < want {
		t.Errorf("%d yields, want ≥ %d (one per 64 KiB generated and per %d bytes decoded)", yields, want, warmSlice)
	}
	for _, after := range []int{1, 3, yields / 3, yields / 2, yields - 1} {
		n, stops := 0, 0
		err := WarmUp(func() bool { stops++; return n >= after }, func() { n++ })
		if !errors.Is(err, ErrWarmUpStopped) {
			t.Errorf("stop after %d yields: %v, want ErrWarmUpStopped", after, err)
		}
		if n != after || stops != after {
			t.Errorf("stop after %d yields: %d yields and %d stop calls, want %d each", after, n, stops, after)
		}
	}
}
