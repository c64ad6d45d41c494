package analysis

import (
	"slices"

	"oomscope/snapshot"
)

// Leak is memory that grows from step to step because allocations born in
// every step are never freed.
type Leak struct {
	// BytesPerStep is what the leaking sites keep per step (the sum of
	// their medians).
	BytesPerStep int64 `json:"bytes_per_step"`
	// Steps is the number of steps the verdict rests on: complete steps
	// followed by another step, so that what they kept had a chance to be
	// freed.
	Steps int `json:"steps"`
	// Confidence is high, medium or low (see LeakRule).
	Confidence string `json:"confidence"`
	// Sites are the leaking allocation sites, most bytes first.
	Sites []LeakSite `json:"sites"`
	// GrowthPerStep is the median growth of step-end memory between
	// consecutive complete steps: an independent measure of the same leak.
	GrowthPerStep int64 `json:"growth_per_step"`
	// HeldBytes is what the leaking sites' kept blocks hold at the end of
	// the trace.
	HeldBytes int64 `json:"held_bytes"`
	// Kind is LeakGraph when each step keeps many forward activations (a
	// retained autograd graph) and LeakTensors otherwise (stored outputs).
	Kind LeakKind `json:"kind"`
	// Why explains the verdict with its numbers.
	Why Text `json:"why"`
}

// LeakKind says what a leak keeps (docs/snapshot.md#leaks).
type LeakKind string

// Leak kinds.
const (
	// LeakGraph: each step keeps many forward activations, a retained
	// autograd graph (e.g. a loss summed for logging without .item()).
	LeakGraph LeakKind = "graph"
	// LeakTensors: each step keeps tensors it stored (outputs, caches).
	LeakTensors LeakKind = "tensors"
)

// LeakSite is one site whose blocks are born in each step and never freed.
type LeakSite struct {
	// Site is the allocation site (first user frame).
	Site string `json:"site"`
	// SiteIndex indexes Analysis.Sites.
	SiteIndex int32 `json:"site_index"`
	// BytesPerStep and Blocks are the medians, over the steps the verdict
	// rests on, of the bytes and blocks born in a step and alive at the end.
	BytesPerStep int64 `json:"bytes_per_step"`
	Blocks       int   `json:"blocks"`
	// Steps is in how many of those steps the site kept blocks.
	Steps int `json:"steps"`
	// Stack is the full stack of its largest kept block.
	Stack []string `json:"stack"`
}

// LeakRule states how a leak is found and how sure the verdict is.
const LeakRule = "a leak is a site whose allocations are born in a step and still alive at the end of the trace, in at least " +
	"60 % (and at least 2) of the complete steps that another step follows; first-step optimizer state (born once), cache " +
	"growth (reserved, not allocated), a window that starts mid-step (partial steps are left out) and step-to-step jitter " +
	"(nothing survives) do not qualify. Confidence is high with ≥ 3 such steps, the site(s) in every one and step-end memory " +
	"growing by 0.5–1.5 × the kept bytes per step; medium with ≥ 2 steps and that growth, or ≥ 3 steps in every one; low otherwise"

// leakResult is the leak and what the fixes need of it.
type leakResult struct {
	leak *Leak
	// sites marks the leaking sites.
	sites map[int32]bool
}

// leakSteps returns the indices of the steps a leak verdict can rest on:
// the complete ones, the last excepted. With fewer than two there is no
// verdict, and no survivor need be collected.
func leakSteps(steps []Step) []int {
	eligible := make([]int, 0, len(steps))
	for k, s := range steps {
		if !s.Partial && k < len(steps)-1 {
			eligible = append(eligible, k)
		}
	}
	return eligible
}

// findLeak looks for sites whose blocks are born in step after step and
// never freed, from the survivors (the numbers of the allocations alive at
// the end of the trace that the program never freed).
func findLeak(src source, steps []Step, surv []int32) leakResult {
	eligible := leakSteps(steps)
	if len(eligible) < 2 {
		return leakResult{}
	}
	slot := make([]int, len(steps)) // step index → position in eligible (-1: not eligible)
	for k := range slot {
		slot[k] = -1
	}
	for e, k := range eligible {
		slot[k] = e
	}
	// Per site, the bytes and blocks born in each eligible step, kept
	// sparse (a run of cells, merged while consecutive survivors share a
	// step): a dense array per site would take sites × steps, gigabytes
	// for a long trace of distinct stacks. The sites are found by index
	// (at[site] is the place of its accumulator + 1), and the step of a
	// survivor by a cursor: survivors come in allocation order, their
	// alloc entries in trace order.
	accs, at := []leakAcc{}, make([]int32, src.numSites())
	step := -1 // the last step starting at or before the survivor's alloc
	inSmallBlocks(len(surv), func(lo, hi int) {
		for _, k := range surv[lo:hi] {
			site, size := src.allocSite(int(k)), src.allocSize(int(k))
			if at[site] == 0 {
				accs = append(accs, leakAcc{site: site, exampleStack: snapshot.NoStack})
				at[site] = int32(len(accs))
			}
			a := &accs[at[site]-1]
			a.held += size
			if src.allocRule(int(k)) == RuleForwardSurvives {
				a.fwd += size
			}
			start, _, _ := src.allocSpan(int(k))
			i := int(start)
			if step >= 0 && i < steps[step].FirstEntry {
				step = -1 // out of order: search again from the first step
			}
			for step+1 < len(steps) && steps[step+1].FirstEntry <= i {
				step++
			}
			if step < 0 || i > steps[step].LastEntry || slot[step] < 0 {
				continue
			}
			e := slot[step]
			if n := len(a.cells); n > 0 && a.cells[n-1].e == int32(e) {
				a.cells[n-1].bytes += size
				a.cells[n-1].blocks++
			} else {
				a.cells = append(doubled(a.cells), leakCell{e: int32(e), bytes: size, blocks: 1})
			}
			if size > a.largest {
				a.largest, a.exampleStack = size, src.allocStack(int(k))
			}
		}
	})
	need := max(2, (6*len(eligible)+9)/10)
	bytesOf, blocksOf, counted := make([]int64, len(eligible)), make([]int, len(eligible)), make([]bool, len(eligible))
	res := leakResult{sites: map[int32]bool{}}
	lk := &Leak{Steps: len(eligible), Sites: []LeakSite{}}
	every := true
	var fwd int64
	blocks := 0
	for ai := range accs {
		a, si := &accs[ai], accs[ai].site
		// Spread the cells over the dense per-step arrays, count the
		// steps with bytes, and clear what was touched afterwards.
		for _, c := range a.cells {
			bytesOf[c.e] += c.bytes
			blocksOf[c.e] += int(c.blocks)
		}
		seen := 0
		for _, c := range a.cells {
			if !counted[c.e] {
				counted[c.e] = true
				if bytesOf[c.e] > 0 {
					seen++
				}
			}
		}
		var perStep int64
		var perStepBlocks int
		if seen >= need {
			perStep, perStepBlocks = median(bytesOf), int(median(intsToInt64(blocksOf)))
		}
		for _, c := range a.cells {
			bytesOf[c.e], blocksOf[c.e], counted[c.e] = 0, 0, false
		}
		if seen < need {
			continue
		}
		every = every && seen == len(eligible)
		res.sites[si] = true
		ls := LeakSite{Site: src.site(si).Label, SiteIndex: si, BytesPerStep: perStep,
			Blocks: perStepBlocks, Steps: seen, Stack: src.displayStack(a.exampleStack)}
		lk.Sites = append(lk.Sites, ls)
		lk.BytesPerStep += ls.BytesPerStep
		lk.HeldBytes += a.held
		fwd += a.fwd
		blocks += ls.Blocks
	}
	if len(lk.Sites) == 0 || lk.BytesPerStep <= 0 {
		return leakResult{}
	}
	slices.SortStableFunc(lk.Sites, func(x, y LeakSite) int { return compareInt64(y.BytesPerStep, x.BytesPerStep) })
	// Each step keeping several blocks that outlived their forward pass
	// (saved activations) is a retained graph; else stored tensors.
	lk.Kind = LeakTensors
	if blocks >= 3 && 2*fwd >= lk.HeldBytes {
		lk.Kind = LeakGraph
	}
	var diffs []int64
	for k := 1; k < len(steps); k++ {
		if !steps[k].Partial && !steps[k-1].Partial {
			diffs = append(diffs, steps[k].EndAllocatedBytes-steps[k-1].EndAllocatedBytes)
		}
	}
	if len(diffs) > 0 {
		lk.GrowthPerStep = median(diffs)
	}
	consistent := lk.GrowthPerStep*2 >= lk.BytesPerStep && lk.GrowthPerStep*2 <= 3*lk.BytesPerStep
	switch {
	case len(eligible) >= 3 && every && consistent:
		lk.Confidence = "high"
	case consistent || len(eligible) >= 3 && every:
		lk.Confidence = "medium"
	default:
		lk.Confidence = "low"
	}
	top := lk.Sites[0]
	lk.Why = textf("%s of allocations born in each step are never freed (%d site(s); the largest, %s, keeps %d block(s) of %s per step, "+
		"in %d of %d steps); step-end memory grows by a median %s per step over %d complete steps; the kept blocks hold %s at the end of the trace",
		sz(lk.BytesPerStep), len(lk.Sites), top.Site, top.Blocks, sz(top.BytesPerStep), top.Steps, len(eligible),
		szSigned(lk.GrowthPerStep), len(diffs)+1, sz(lk.HeldBytes))
	res.leak = lk
	return res
}

// leakCell is what one site's survivors born in one eligible step (e)
// hold; leakAcc is one site's survivors (findLeak).
type leakCell struct {
	e, blocks int32
	bytes     int64
}
type leakAcc struct {
	site         int32
	cells        []leakCell
	held, fwd    int64
	largest      int64
	exampleStack snapshot.StackID
}

// median returns the median of v (the lower middle value for even
// lengths), without changing v.
func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func intsToInt64(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}
