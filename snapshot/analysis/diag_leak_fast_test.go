package analysis

import (
	"reflect"
	"slices"
	"sort"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// TestFindLeakFast checks findLeak (sites by index, steps by cursor)
// against the straightforward pass it replaced (findLeakRef: a map of
// sites, a bisection per survivor), on every generator scenario (two of
// them leak) and the fast path snapshots, with the survivors in
// allocation order and reversed.
func TestFindLeakFast(t *testing.T) {
	snaps := fastpathSnapshots(t)
	for _, name := range gen.Scenarios() {
		data, _, err := gen.Bytes(gen.Scenario(name))
		if err != nil {
			t.Fatal(err)
		}
		if snaps[name], err = snapshot.DecodeBytes(data, nil); err != nil {
			t.Fatal(err)
		}
	}
	leaks := 0
	for name, s := range snaps {
		a := Analyze(s, Options{})
		r := a.Report()
		for i, d := range a.Devices {
			src := newSource(d)
			var surv []int32
			n := d.Trace.Len()
			for k := range d.NumAllocs() {
				al := d.Allocation(k)
				if int(al.End) == n && al.FreeRequested < 0 && al.Start >= 0 {
					surv = append(surv, int32(k))
				}
			}
			steps := r.Devices[i].Steps
			for _, order := range []string{"allocation order", "reversed"} {
				if order == "reversed" {
					surv = slices.Clone(surv)
					slices.Reverse(surv)
				}
				got, want := findLeak(src, steps, surv), findLeakRef(src, steps, surv)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s device %d, survivors in %s: leak %+v %v, want %+v %v", name, d.ID, order, got.leak, got.sites, want.leak, want.sites)
				}
				if got.leak != nil {
					leaks++
				}
			}
		}
	}
	if leaks < 4 {
		t.Errorf("%d leaks found: the test checks little", leaks)
	}
}

// findLeakRef is findLeak as it was: the survivors' sites in a map, each
// survivor's step by bisection.
func findLeakRef(src source, steps []Step, surv []int32) leakResult {
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
	firsts := make([]int, len(steps))
	for k, s := range steps {
		firsts[k] = s.FirstEntry
	}
	stepOf := func(i int) int {
		k := sort.SearchInts(firsts, i+1) - 1
		if k < 0 || i > steps[k].LastEntry {
			return -1
		}
		return k
	}
	// Per site, the bytes and blocks born in each eligible step, kept
	// sparse (a run of cells, merged while consecutive survivors share a
	// step): a dense array per site would take sites × steps, gigabytes
	// for a long trace of distinct stacks.
	type cell struct {
		e      int32
		bytes  int64
		blocks int
	}
	type acc struct {
		cells        []cell
		held, fwd    int64
		largest      int64
		exampleStack snapshot.StackID
	}
	sites := map[int32]*acc{}
	var order []int32
	for _, k := range surv {
		site, size := src.allocSite(int(k)), src.allocSize(int(k))
		a, ok := sites[site]
		if !ok {
			a = &acc{exampleStack: snapshot.NoStack}
			sites[site] = a
			order = append(order, site)
		}
		a.held += size
		if src.allocRule(int(k)) == RuleForwardSurvives {
			a.fwd += size
		}
		start, _, _ := src.allocSpan(int(k))
		step := stepOf(int(start))
		if step < 0 || slot[step] < 0 {
			continue
		}
		e := slot[step]
		if n := len(a.cells); n > 0 && a.cells[n-1].e == int32(e) {
			a.cells[n-1].bytes += size
			a.cells[n-1].blocks++
		} else {
			a.cells = append(doubled(a.cells), cell{e: int32(e), bytes: size, blocks: 1})
		}
		if size > a.largest {
			a.largest, a.exampleStack = size, src.allocStack(int(k))
		}
	}
	need := max(2, (6*len(eligible)+9)/10)
	bytesOf, blocksOf, counted := make([]int64, len(eligible)), make([]int, len(eligible)), make([]bool, len(eligible))
	res := leakResult{sites: map[int32]bool{}}
	lk := &Leak{Steps: len(eligible), Sites: []LeakSite{}}
	every := true
	var fwd int64
	blocks := 0
	for _, si := range order {
		a := sites[si]
		// Spread the cells over the dense per-step arrays, count the
		// steps with bytes, and clear what was touched afterwards.
		for _, c := range a.cells {
			bytesOf[c.e] += c.bytes
			blocksOf[c.e] += c.blocks
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
