package analysis

import (
	"math"

	"oomscope/snapshot"
)

// moment is the live memory after one entry, split the ways the fixes
// and the setup inference need: by category, and the parts one fix acts on.
type moment struct {
	// index is the entry (-1: before the first); phase its phase.
	index int
	phase Phase
	// allocated is the live requested bytes; cats splits them.
	allocated int64
	cats      CategoryBytes
	// logits is the live bytes of loss-sized blocks (allocated under a
	// cross-entropy, log-softmax or lm_head frame).
	logits int64
	// leaked is the live bytes of blocks the leaking sites kept.
	leaked int64
	// pending is the live bytes of blocks freed by the user but waiting on
	// stream work (free_requested, no free_completed).
	pending int64
	// layers is how often the most repeated allocation stack recurs among
	// the live activations: the number of layers (0: no repeats).
	layers int
	// params maps the size of each live parameter block to the bytes of
	// such blocks: the tensor shapes that tell a dtype and a model.
	params map[int64]int64
}

// momentSet is a few moments measured in one pass over the allocations.
type momentSet []moment

// measureMoments measures the live memory after each of the given entries
// (duplicates allowed), collects the survivors (with survivors set: the
// numbers of the allocations made in the trace and alive at its end, never
// freed by the program, what a leak is made of) and feeds the candidate
// allocations to the anomaly collector, in one pass over the allocations.
// Leaked bytes are filled in later (addLeaked).
func measureMoments(src source, idx []int, phases []Phase, col *anomalyCollector, survivors bool) (momentSet, []int32) {
	ms := make(momentSet, len(idx))
	for j, i := range idx {
		ms[j] = moment{index: i, phase: phases[j]}
	}
	n := src.entries()
	// Layers are counted once, at the moment holding the most activations
	// (known after the pass): keep per-moment counts of activation stacks.
	repeats := make([]map[snapshot.StackID]int, len(idx))
	// byIndex are the moments by entry (stable: duplicates in the given
	// order), so that an allocation's moments are a run of it, found
	// without a comparison with each moment.
	type at struct{ index, j int }
	byIndex := make([]at, len(ms))
	for j := range ms {
		x := at{ms[j].index, j}
		p := j
		for p > 0 && byIndex[p-1].index > x.index {
			byIndex[p] = byIndex[p-1]
			p--
		}
		byIndex[p] = x
	}
	var surv []int32
	starts, ends, freeReqs, stacks, sizes := src.allocColumns()
	// An allocation is alive at a moment when its start is at or before
	// the moment's entry and its end after it: with the moments by entry,
	// at the first moment at or after its start (next, at byIndex[p]) if
	// any. Allocations come mostly by start, so p only moves forward (it
	// moves at most len(byIndex) times) but where a start goes back (the
	// blocks made before the trace): most allocations then cost two
	// comparisons, not a loop over the moments. Each block starts again
	// from the first moment (a captured variable would be written to
	// memory at each change).
	first := math.MaxInt
	if len(byIndex) > 0 {
		first = byIndex[0].index
	}
	// Most allocations are none of these: momentsSkip passes over them.
	skip := momentSkip{starts: starts, ends: ends[:len(starts)], freeReqs: freeReqs[:len(starts)], sizes: sizes[:len(starts)],
		n: n, cn: col.n, big: col.big, survivors: survivors}
	inBlocks(src.numAllocs(), func(blo, bhi int) {
		p, last, next := 0, math.MinInt, first
		for k := blo; k < bhi; k++ {
			if k, last = skip.skip(k, bhi, last, next); k == bhi {
				break
			}
			// The fields every allocation needs, read one by one; the whole
			// live range only for the few that are candidates or survivors.
			start, end, freeReq := int(starts[k]), int(ends[k]), freeReqs[k]
			size := sizes[k]
			if col.candidate(int32(end), freeReq, size) {
				l := src.live(k)
				col.add(&l)
			}
			if survivors && end == n && freeReq < 0 && start >= 0 {
				surv = append(surv, int32(k))
			}
			if start > next || start < last {
				if start < last {
					p = 0
				}
				for p < len(byIndex) && byIndex[p].index < start {
					p++
				}
				next = math.MaxInt
				if p < len(byIndex) {
					next = byIndex[p].index
				}
			}
			last = start
			if next >= end {
				continue // alive at no moment
			}
			stack := stacks[k]
			isLogits, cat := src.stackLoss(stack), src.allocCategory(k)
			for _, x := range byIndex[p:] {
				if x.index >= end {
					break
				}
				j := x.j
				m := &ms[j]
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

// momentSkip is what measureMoments's fast path (skip) reads: the
// allocations' columns, the trace length n, the anomaly collector's
// (col.n, col.big) and whether survivors are collected.
type momentSkip struct {
	starts, ends, freeReqs []int32
	sizes                  []int64
	n, cn                  int
	big                    int64
	survivors              bool
}

// skip returns the first of allocations k to hi-1 that measureMoments must
// look at (hi: none), and last, the start of the allocation before it:
// an anomaly candidate (anomalyCollector.candidate), a survivor, one alive
// at a moment or one whose start is outside [last, next], next being the
// first moment's entry at or after last (the moment cursor must move). It
// is a loop of its own over few variables, which the WebAssembly compiler
// keeps in locals, with no call: most allocations are none of these.
//
//go:noinline
func (m *momentSkip) skip(k, hi, last, next int) (int, int) {
	starts := m.starts
	ends, freeReqs, sizes := m.ends[:len(starts)], m.freeReqs[:len(starts)], m.sizes[:len(starts)]
	n, cn, big, survivors := m.n, m.cn, m.big, m.survivors
	if hi > len(starts) || k < 0 {
		return k, last
	}
	for ; k < hi; k++ {
		start, end, freeReq := int(starts[k]), int(ends[k]), int(freeReqs[k])
		// (A start after next is an allocation alive at next, or the
		// cursor's to move: next < end says both.)
		if start < last || next < end || sizes[k] >= big || freeReq >= 0 && end >= cn ||
			survivors && end == n && freeReq < 0 && start >= 0 {
			return k, last
		}
		last = start
	}
	return k, last
}

// addLeaked sets each moment's leaked bytes: the survivors (allocation
// numbers) of the leaking sites born by then.
func (ms momentSet) addLeaked(src source, surv []int32, sites map[int32]bool) {
	for _, k := range surv {
		if !sites[src.allocSite(int(k))] {
			continue
		}
		start, _, _ := src.allocSpan(int(k))
		size := src.allocSize(int(k))
		for j := range ms {
			if int(start) <= ms[j].index {
				ms[j].leaked += size
			}
		}
	}
}

// modeCount returns the most common repeat count (≥ 2) of the stacks,
// the larger one on ties; 0 when no stack repeats.
func modeCount(m map[snapshot.StackID]int) int {
	freq := map[int]int{}
	for _, c := range m {
		if c >= 2 {
			freq[c]++
		}
	}
	best, bestN := 0, 0
	for c, f := range freq {
		if f > bestN || f == bestN && c > best {
			best, bestN = c, f
		}
	}
	return best
}

// peak returns the moment with the most allocated memory.
func (ms momentSet) peak() moment {
	var best moment
	for j, m := range ms {
		if j == 0 || m.allocated > best.allocated {
			best = m
		}
	}
	return best
}

// maxOf returns the largest value of f over the moments.
func (ms momentSet) maxOf(f func(m *moment) int64) int64 {
	var v int64
	for j := range ms {
		v = max(v, f(&ms[j]))
	}
	return v
}
