package analysis

import (
	"math/rand/v2"
	"testing"

	"oomscope/snapshot"
)

// TestReplayTable replays random traces of 40 000 entries (three chunks)
// over a pool of 300 addresses and, rarely, address 0, with a few segment,
// oom and unknown entries among them, on one goroutine (replayer.chunk:
// allocsRun, and entry where it stops) and,
// where there is a second core, as a pipeline, and checks every
// allocation and the peak against a replay written here from the pairing
// rule (docs/snapshot.md) with a Go map: allocs that reuse an open
// address, free_requested with and without their free_completed right
// after, frees of addresses not open (allocations made before the trace,
// more than the room the replay makes for them), and sizes of 4 GiB and
// more (openAlloc.size bigOpen). The open allocations' map is the
// replay's (uintMap: take, swap, get) at every free and alloc.
func TestReplayTable(t *testing.T) {
	for seed := range uint64(3) {
		b := newBuilder()
		stacks := []snapshot.StackID{b.stack(py("a.py", 1, "f")), b.stack(py("b.py", 2, "g"))}
		rng := rand.New(rand.NewPCG(seed, 9))
		addr := func() uint64 {
			if rng.IntN(500) == 0 {
				return 0 // uintMap's key 0, kept aside
			}
			return 0x100000 + uint64(rng.IntN(300))*512
		}
		size := func() int64 {
			if rng.IntN(50) == 0 {
				return 5<<30 + rng.Int64N(1<<20)
			}
			return 1 + rng.Int64N(1<<20)
		}
		for b.s.DeviceTraces[0].Len() < 40000 {
			st := stacks[rng.IntN(2)]
			switch op := rng.IntN(10); {
			case rng.IntN(200) == 0:
				// Entries the replay's fast loop leaves to entry.
				switch rng.IntN(3) {
				case 0:
					b.ev(snapshot.ActionSegmentAlloc, addr(), size(), st)
				case 1:
					b.ev(snapshot.ActionOOM, 0, size(), st)
				default:
					b.ev("some_new_action", addr(), size(), st)
				}
			case op < 4:
				b.ev(snapshot.ActionAlloc, addr(), size(), st)
			case op < 6:
				a, s := addr(), size()
				b.ev(snapshot.ActionFreeRequested, a, s, st)
				if op == 4 {
					b.ev(snapshot.ActionFreeCompleted, a, s, st)
				}
			default:
				b.ev(snapshot.ActionFreeCompleted, addr(), size(), st)
			}
		}
		want, _, _, _ := referenceReplay(b.s.DeviceTraces[0])
		nAlloc, preFreed := 0, 0
		for _, w := range want {
			if w.Start >= 0 {
				nAlloc++
			} else {
				preFreed++
			}
		}
		if preFreed <= nAlloc/16+64 {
			t.Fatalf("seed %d: %d frees before the trace, too few for the table to grow", seed, preFreed)
		}
		checkReplayTable(t, b)
	}
}

// checkReplayTable replays device 0 of b's snapshot on one goroutine and,
// where there is a second core, as a pipeline, and checks every
// allocation, the peak and the end against referenceReplay's.
func checkReplayTable(t *testing.T, b *builder) {
	t.Helper()
	want, peak, peakIndex, final := referenceReplay(b.s.DeviceTraces[0])
	check := func(t *testing.T) {
		sequential := !concurrent()
		a := Analyze(b.s, Options{TimelinePoints: 100})
		// The replay again, its device as it leaves it (the
		// pipeline's scan not yet taken by the early diagnosis).
		d := a.replay(0, a.Devices[0].segments)
		d.allocs.splitEnds() // as AnalyzeSummary does before classify
		if sequential != (d.scan == nil) {
			t.Fatalf("the replay ran as a pipeline: %v, want %v", d.scan != nil, !sequential)
		}
		if d.NumAllocs() != len(want) {
			t.Fatalf("%d allocations, want %d", d.NumAllocs(), len(want))
		}
		tab := &d.allocs
		if tab.sizeCol == nil {
			t.Fatal("the replay's sizes were taken")
		}
		for k, w := range want {
			g := Allocation{Start: tab.start[k], End: tab.end[k], FreeRequested: tab.freeReq[k], Size: tab.size(k), Stack: tab.stack(k)}
			if tab.sizeCol[k] != g.Size {
				t.Fatalf("allocation %d: size %d added, %d in the trace", k, tab.sizeCol[k], g.Size)
			}
			if g.Start != w.Start || g.End != w.End || g.FreeRequested != w.FreeRequested || g.Size != w.Size || g.Stack != w.Stack {
				t.Fatalf("allocation %d: start %d end %d free_requested %d size %d stack %d, want %d %d %d %d %d",
					k, g.Start, g.End, g.FreeRequested, g.Size, g.Stack, w.Start, w.End, w.FreeRequested, w.Size, w.Stack)
			}
		}
		if d.peakRel != peak || d.peakIndex != peakIndex || d.endRel != final {
			t.Errorf("peak %d at %d, end %d; want %d at %d, end %d", d.peakRel, d.peakIndex, d.endRel, peak, peakIndex, final)
		}
	}
	t.Run("sequential", func(t *testing.T) {
		sequentialOnly.Store(true)
		defer sequentialOnly.Store(false)
		check(t)
	})
	t.Run("pipeline", func(t *testing.T) { withPipeline(t, func() { check(t) }) })
}

// TestReplayFastGrowth replays a trace whose allocs and frees all take
// the replay's fast loop (allocsRun: no call, no growth) after frees of
// allocations made before the trace, taken by entry, that fill the room
// the table makes for the allocations: the fast loop's reserve grows the
// columns, and the open allocations' map from its first 64 slots to room
// for 10 000 (neither grows anywhere else here).
func TestReplayFastGrowth(t *testing.T) {
	b := newBuilder()
	st := b.stack(py("a.py", 1, "f"))
	const nAlloc = 20000
	for i := range nAlloc / 4 {
		b.ev(snapshot.ActionFreeCompleted, 0x7000000000+uint64(i)*512, 100, st)
	}
	for round := range 2 {
		for i := range nAlloc / 2 {
			b.ev(snapshot.ActionAlloc, 0x100000+uint64(round*nAlloc+i)*512, int64(1000+i+round), st)
		}
		for i := range nAlloc / 2 {
			if i%3 != 0 {
				a := 0x100000 + uint64(round*nAlloc+i)*512
				b.ev(snapshot.ActionFreeRequested, a, int64(1000+i+round), st)
				b.ev(snapshot.ActionFreeCompleted, a, int64(1000+i+round), st)
			}
		}
	}
	checkReplayTable(t, b)
}

// referenceReplay replays tr by the pairing rule with a Go map: each alloc
// opens an allocation at its address (ending the one open there), a
// free_completed ends the one open at its address (or is one made before
// the trace, freed there), a free_requested marks the one open. It returns
// the allocations in the table's order and the highest allocated bytes
// (relative to the start, the first entry after which they are reached,
// -1 for the start) and the allocated bytes at the end.
func referenceReplay(tr snapshot.Trace) (allocs []Allocation, peak int64, peakIndex int, final int64) {
	n := int32(tr.Len())
	open := map[uint64]int{}
	peakIndex = -1
	var cur int64
	for i := range tr.Len() {
		a, size := tr.Addr(i), tr.Size(i)
		switch tr.Kind(i) {
		case snapshot.KindAlloc:
			if k, ok := open[a]; ok {
				allocs[k].End = int32(i)
				cur -= allocs[k].Size
			}
			open[a] = len(allocs)
			allocs = append(allocs, Allocation{Start: int32(i), End: n, FreeRequested: -1, Size: size, Stack: tr.Frames(i)})
			cur += size
		case snapshot.KindFreeRequested:
			if k, ok := open[a]; ok {
				allocs[k].FreeRequested = int32(i)
			}
		case snapshot.KindFreeCompleted:
			if k, ok := open[a]; ok {
				allocs[k].End = int32(i)
				cur -= allocs[k].Size
				delete(open, a)
			} else {
				allocs = append(allocs, Allocation{Start: -1, End: int32(i), FreeRequested: -1, Size: size, Stack: tr.Frames(i)})
				cur -= size
			}
		}
		if cur > peak {
			peak, peakIndex = cur, i
		}
	}
	return allocs, peak, peakIndex, cur
}

// TestCountKinds compares countKinds with a count entry by entry, on
// random action codes (known kinds and others) of every length up to 40
// and a long run, added to counts already there.
func TestCountKinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 42 {
		if n == 41 {
			n = 16384 + 3
		}
		actions := make([]uint8, n)
		for j := range actions {
			if rng.IntN(4) == 0 {
				actions[j] = uint8(rng.IntN(256))
			} else {
				actions[j] = uint8(rng.IntN(int(snapshot.KindOther)))
			}
		}
		var got, want [snapshot.KindOther + 1]int
		for k := range got {
			got[k], want[k] = k, k
		}
		countKinds(&got, actions)
		for _, a := range actions {
			if snapshot.ActionKind(a) >= snapshot.KindOther {
				want[snapshot.KindOther]++
			} else {
				want[a]++
			}
		}
		if got != want {
			t.Fatalf("%d entries: counted %v, want %v", n, got, want)
		}
	}
}

// TestExtremes compares extremes with a running sum entry by entry (the
// lowest and highest values and the first entry that reached each) on
// random changes with many ties, every length up to 40.
func TestExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 41 {
		for range 20 {
			ds := make([]int64, n)
			for x := range ds {
				ds[x] = int64(rng.IntN(5)) - 2
			}
			cur0, j0 := int64(rng.IntN(7)-3), rng.IntN(100)
			cur, lo, loJ, hi, hiJ := cur0, cur0, j0, cur0, j0
			for x, d := range ds {
				cur += d
				if cur < lo {
					lo, loJ = cur, j0+1+x
				}
				if cur > hi {
					hi, hiJ = cur, j0+1+x
				}
			}
			e, l, lj, h, hj := extremes(ds, cur0, j0)
			if e != cur || l != lo || lj != loJ || h != hi || hj != hiJ {
				t.Fatalf("extremes(%v, %d, %d) = %d %d@%d %d@%d, want %d %d@%d %d@%d", ds, cur0, j0, e, l, lj, h, hj, cur, lo, loJ, hi, hiJ)
			}
		}
	}
}
