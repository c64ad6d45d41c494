package load

import (
	"bytes"
	"errors"
	"testing"

	"oomscope/snapshot"
)

// TestWarmUpInputs: the warm-up's inputs reach the paths a user's file of
// either family takes: stacks that repeat (a few hundred distinct ones,
// none lazy), and distinct stacks that, past the first ones, stay in the
// file (lazy), with a timeline.
func TestWarmUpInputs(t *testing.T) {
	real, err := warmLoad(false, func() bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if st := real.Stats(); st.Entries < 10000 || st.Stacks > 500 || st.LazyStacks != 0 {
		t.Errorf("real stacks' warm-up: %+v, want ≥ 10,000 entries and ≤ 500 stacks, none lazy", st)
	}
	dist, err := warmLoad(true, func() bool { return false })
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
	// Each family's input is written, then decoded: a yield per warmSlice
	// bytes, twice.
	var want int64
	for _, distinct := range []bool{false, true} {
		n := len(warmFile(distinct, map[bool]int{false: WarmSteps.Real, true: WarmSteps.Distinct}[distinct], func() bool { return false }, nil))
		want += 2 * (int64(n)/warmSlice - 1)
	}
	if int64(yields) < want {
		t.Errorf("%d yields, want ≥ %d (one per %d bytes written or decoded)", yields, want, warmSlice)
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

// TestWarmFile: warmFile's pickle decodes (snapshot.Decode, as any file)
// to the entries it says it wrote, stacks included, for both families.
func TestWarmFile(t *testing.T) {
	for _, distinct := range []bool{false, true} {
		var want []warmEntry
		b := warmFile(distinct, 3000, func() bool { return false }, func(e warmEntry) { want = append(want, e) })
		s, err := snapshot.Decode(bytes.NewReader(b), int64(len(b)), nil)
		if err != nil {
			t.Fatalf("distinct %v: %v", distinct, err)
		}
		if len(s.DeviceTraces) != 1 || s.DeviceTraces[0].Len() != len(want) || len(want) < 4000 {
			t.Fatalf("distinct %v: %d traces, want 1 of the %d entries written (≥ 4000)", distinct, len(s.DeviceTraces), len(want))
		}
		tr := s.DeviceTraces[0]
		stacks := map[snapshot.StackID]bool{}
		for i, w := range want {
			e := tr.Entry(i)
			if string(e.Action) != w.action || e.Addr != w.addr || e.Size != w.size || e.TimeUS != w.time || e.Stream != 0 {
				t.Fatalf("distinct %v: entry %d = %v %#x %d %d, want %s %#x %d %d", distinct, i, e.Action, e.Addr, e.Size, e.TimeUS, w.action, w.addr, w.size, w.time)
			}
			st, err := s.Stack(e.Frames)
			if err != nil || len(st) != len(w.frames) {
				t.Fatalf("distinct %v: entry %d has %d frames (%v), want %d", distinct, i, len(st), err, len(w.frames))
			}
			// Frame IDs number the frames in their first use; the
			// frames themselves are the writer's.
			for k, id := range st {
				if f := s.Frame(id); f.Line < 1 || f.Line > 900 || f.Name == "" || f.Filename == "" {
					t.Fatalf("distinct %v: entry %d frame %d = %+v", distinct, i, k, f)
				}
			}
			stacks[e.Frames] = true
		}
		if distinct && len(stacks) < len(want)*9/10 || !distinct && len(stacks) > 300 {
			t.Errorf("distinct %v: %d distinct stacks among %d entries", distinct, len(stacks), len(want))
		}
	}
}
