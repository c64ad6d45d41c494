package analysis

import (
	"math"
	"reflect"
	"testing"

	"oomscope/snapshot"
)

// TestMeasureMoments checks measureMoments (columns in locals, an
// allocation's moments found as a run of the moments by entry) against the
// pass it replaced (measureMomentsRef: each moment compared with each
// allocation), on the fast path snapshots, with moments unsorted and
// repeated, before the first entry and at the last: the moments, the
// survivors and what the anomaly collector was fed.
func TestMeasureMoments(t *testing.T) {
	for name, s := range fastpathSnapshots(t) {
		a := Analyze(s, Options{})
		r := a.Report()
		for i, d := range a.Devices {
			n := d.Trace.Len()
			dr := &r.Devices[i]
			idx := []int{dr.PeakIndex, n / 2, 0, n / 2, n - 1, -1, n / 3}
			phases := []Phase{PhaseOther, PhaseForward, PhaseBackward, PhaseOptimizer, PhaseForward, PhaseBackward, PhaseOther}
			src := newSource(d)
			got, want := newAnomalyCollector(src, dr.Steps, dr.PeakAllocatedBytes), newAnomalyCollector(src, dr.Steps, dr.PeakAllocatedBytes)
			ms, surv := measureMoments(src, idx, phases, got, true)
			wms, wsurv := measureMomentsRef(src, idx, phases, want, true)
			if !reflect.DeepEqual(ms, wms) {
				for j := range ms {
					if !reflect.DeepEqual(ms[j], wms[j]) {
						t.Fatalf("%s device %d: moment %d (entry %d) is %+v, want %+v", name, d.ID, j, idx[j], ms[j], wms[j])
					}
				}
			}
			if !reflect.DeepEqual(surv, wsurv) || !reflect.DeepEqual(got, want) {
				t.Fatalf("%s device %d: %d survivors, want %d; or the collectors differ", name, d.ID, len(surv), len(wsurv))
			}
		}
	}
}

// measureMomentsRef is measureMoments as it was.
func measureMomentsRef(src source, idx []int, phases []Phase, col *anomalyCollector, survivors bool) (momentSet, []int32) {
	ms := make(momentSet, len(idx))
	lo, hi := math.MaxInt, -1
	for j, i := range idx {
		ms[j] = moment{index: i, phase: phases[j]}
		lo, hi = min(lo, i), max(hi, i)
	}
	n := src.entries()
	// Layers are counted once, at the moment holding the most activations
	// (known after the pass): keep per-moment counts of activation stacks.
	repeats := make([]map[snapshot.StackID]int, len(idx))
	var surv []int32
	inBlocks(src.numAllocs(), func(blo, bhi int) {
		for k := blo; k < bhi; k++ {
			// The fields every allocation needs, read one by one; the whole
			// live range only for the few that are candidates or survivors.
			start, end, freeReq := src.allocSpan(k)
			size, stack := src.allocSize(k), src.allocStack(k)
			if col.candidate(end, freeReq, size) {
				l := src.live(k)
				col.add(&l)
			}
			if survivors && int(end) == n && freeReq < 0 && start >= 0 {
				surv = append(surv, int32(k))
			}
			if int(start) > hi || int(end) <= lo {
				continue // alive at no moment
			}
			checked, isLogits := false, false
			var cat Category
			for j := range ms {
				m := &ms[j]
				if int(start) > m.index || m.index >= int(end) {
					continue
				}
				if !checked {
					checked, isLogits, cat = true, src.stackLoss(stack), src.allocCategory(k)
				}
				m.allocated += size
				m.cats.Add(cat, size)
				if cat == Parameter {
					if m.params == nil {
						m.params = map[int64]int64{}
					}
					m.params[size] += size
				}
				if isLogits {
					m.logits += size
				}
				if freeReq >= 0 && int(freeReq) <= m.index {
					m.pending += size
				}
				if cat == Activation && src.hasFrames(stack) {
					if repeats[j] == nil {
						repeats[j] = map[snapshot.StackID]int{}
					}
					repeats[j][stack]++
				}
			}
		}
	})
	for j := range ms {
		ms[j].layers = modeCount(repeats[j])
	}
	return ms, surv
}
