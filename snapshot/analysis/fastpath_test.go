package analysis

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// TestRunAtHint checks the classifier's run lookup (two hints, then
// bisection) against a linear search for the last run starting at or
// before i, on random runs and queries in trace order, shuffled, and
// alternating between starts and ends as traceRule asks.
func TestRunAtHint(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		var runs []phaseRun
		next := int32(rng.IntN(5))
		for range rng.IntN(40) {
			runs = append(runs, phaseRun{start: next})
			next += 1 + int32(rng.IntN(6))
		}
		want := func(i int32) int {
			k := -1
			for j, r := range runs {
				if r.start <= i {
					k = j
				}
			}
			return k
		}
		c := &classifier{runs: runs}
		queries := make([]int32, 200)
		for q := range queries {
			queries[q] = int32(rng.IntN(int(next)+10)) - 3
		}
		if trial%3 == 0 {
			for q := 1; q < len(queries); q++ {
				queries[q] = max(queries[q-1], queries[q]-int32(rng.IntN(3)))
			}
		}
		for q, i := range queries {
			hint := &c.runHint
			if q%2 == 1 {
				hint = &c.endHint
			}
			if got, w := c.runAtHint(i, hint), want(i); got != w {
				t.Fatalf("trial %d: run at %d = %d, want %d (runs %v)", trial, i, got, w, runs)
			}
		}
	}
}

// fastpathSnapshots are the snapshots the fast paths are checked on: the
// real files present, a generated training run with two streams, and a
// small file of each bench family (repeated and distinct stacks).
func fastpathSnapshots(t *testing.T) map[string]*snapshot.Snapshot {
	t.Helper()
	out := map[string]*snapshot.Snapshot{}
	names, _ := filepath.Glob(filepath.Join(realDir, "*.pickle"))
	for _, p := range names {
		out[filepath.Base(p)] = loadReal(t, filepath.Base(p))
	}
	data, _, err := gen.Bytes(gen.Options{Seed: 7, Layers: 4, TwoStreams: true, TargetBytes: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if out["gen"], err = snapshot.DecodeBytes(data, nil); err != nil {
		t.Fatal(err)
	}
	for _, fam := range []gen.Family{gen.RealStacks, gen.DistinctStacks} {
		var b bytes.Buffer
		if _, err := gen.WriteFamily(&b, gen.FamilyOptions{Family: fam, TargetBytes: 3 << 20}); err != nil {
			t.Fatal(err)
		}
		s, err := snapshot.DecodeBytes(b.Bytes(), nil)
		if err != nil {
			t.Fatal(err)
		}
		out[string(fam)] = s
	}
	out["edges"] = edgeSnapshot()
	return out
}

// edgeSnapshot has each kind of allocation: freed in the trace after its
// free_requested, freed without an alloc (made before the trace), with and
// without a free_requested, a free_requested followed by another block's
// free_completed, an address allocated twice, alive at the end as a live
// block with frames or without (the block's stack counts), and a live block
// without an alloc.
func edgeSnapshot() *snapshot.Snapshot {
	b := newBuilder()
	sa := b.stack(py("train.py", 10, "forward"))
	sb := b.stack(py("train.py", 20, "backward"))
	sc := b.stack(py("model.py", 5, "__init__"))
	sd := b.stack(py("optim.py", 7, "step"))
	b.ev(snapshot.ActionFreeCompleted, 0x9000, 1024, sb)
	b.ev(snapshot.ActionAlloc, 0x1000, 512, sa)
	b.ev(snapshot.ActionAlloc, 0x10000, 512, snapshot.EmptyStack)
	b.ev(snapshot.ActionFreeRequested, 0x1000, 512, sa)
	b.ev(snapshot.ActionFreeCompleted, 0x1000, 512, sa)
	b.ev(snapshot.ActionAlloc, 0x10200, 512, sa)
	b.ev(snapshot.ActionAlloc, 0x7000, 2048, sd)
	b.ev(snapshot.ActionAlloc, 0x7000, 4096, sd)
	b.ev(snapshot.ActionFreeCompleted, 0x7000, 4096, sd)
	b.ev(snapshot.ActionFreeCompleted, 0x9200, 256, snapshot.EmptyStack)
	// A free_requested followed by another block's free_completed, and
	// by its own but without an alloc.
	b.ev(snapshot.ActionAlloc, 0x2000, 512, sa)
	b.ev(snapshot.ActionAlloc, 0x2200, 512, sb)
	b.ev(snapshot.ActionFreeRequested, 0x2000, 512, sa)
	b.ev(snapshot.ActionFreeCompleted, 0x2200, 512, sb)
	b.ev(snapshot.ActionFreeCompleted, 0x2000, 512, sa)
	b.ev(snapshot.ActionFreeRequested, 0x9400, 512, sa)
	b.ev(snapshot.ActionFreeCompleted, 0x9400, 512, sa)
	b.seg(0x10000, false, live(512, 512, sc), live(512, 512, sb), live(512, 500, sd), free(512))
	return b.s
}

// TestAllocStacks checks the allocations' stack column against their
// definition: the alloc entry's stack, the free's for an allocation made
// before the trace, and for a live block at the end the block's history
// stack when there is no alloc entry or the entry has no frames.
func TestAllocStacks(t *testing.T) {
	for name, s := range fastpathSnapshots(t) {
		a := Analyze(s, Options{})
		for _, d := range a.Devices {
			tab := &d.allocs
			blocks := map[uint64]snapshot.StackID{}
			for _, si := range d.segments {
				for _, b := range s.Segments[si].Blocks {
					blocks[b.Address] = b.AllocStack()
				}
			}
			for k := range tab.len() {
				var want snapshot.StackID
				start, end := tab.start[k], tab.end[k]
				switch {
				case start >= 0:
					want = d.Trace.Frames(int(start))
					if _, live := tab.atEnd[int32(k)]; live && end == tab.n && s.Stacks.Depth(want) == 0 {
						want = blocks[d.Trace.Addr(int(start))]
					}
				case end < tab.n:
					want = d.Trace.Frames(int(end))
				default:
					want = blocks[tab.atEnd[int32(k)].addr]
				}
				if got := tab.stack(k); got != want {
					t.Fatalf("%s device %d: allocation %d (entries %d…%d) has stack %d, want %d", name, d.ID, k, start, end, got, want)
				}
			}
		}
	}
}

// TestPointFinder checks the timeline's point lookup against a bisection
// of all the points, for every index around them, on points spread
// evenly, in clusters, and few over a long range.
func TestPointFinder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 400 {
		var pts []Point
		i := rng.IntN(5) - 1
		for range rng.IntN(60) {
			pts = append(pts, Point{Index: i})
			switch trial % 3 {
			case 0:
				i += 1 + rng.IntN(4)
			case 1:
				i += 1 + rng.IntN(2)*rng.IntN(500)
			default:
				i += 1 + rng.IntN(100000)
			}
		}
		f := newPointFinder(pts)
		hi := 10
		if len(pts) > 0 {
			hi = pts[len(pts)-1].Index + 3
		}
		for idx := -3; idx <= hi; idx += 1 + rng.IntN(1+hi/2000) {
			want := sort.Search(len(pts), func(j int) bool { return pts[j].Index >= idx })
			if got := f.first(idx); got != want {
				t.Fatalf("trial %d: first(%d) = %d, want %d (%d points)", trial, idx, got, want, len(pts))
			}
		}
	}
}

// TestLargest checks the selection of the largest live allocations
// against a sort of all of them (biggest first, then by number), at four
// states of every test snapshot (sizes repeat in all of them).
func TestLargest(t *testing.T) {
	want := func(d *Device, live []int32, n int) []int32 {
		v := slices.Clone(live)
		slices.SortStableFunc(v, func(x, y int32) int {
			if c := cmp.Compare(d.allocs.size(int(y)), d.allocs.size(int(x))); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		return v[:min(n, len(v))]
	}
	for name, s := range fastpathSnapshots(t) {
		for _, d := range Analyze(s, Options{}).Devices {
			for _, i := range []int{d.peakIndex, -1, d.Trace.Len() / 3, d.Trace.Len() - 1} {
				live := d.liveAt(i)
				for _, n := range []int{0, 1, 3, 20, len(live), len(live) + 5} {
					if n > len(live)+5 {
						continue
					}
					got := []int32{}
					for _, v := range d.largest(live, n, nil) {
						got = append(got, v.Alloc)
					}
					if w := want(d, live, n); !slices.Equal(got, w) && !(len(got) == 0 && len(w) == 0) {
						t.Fatalf("%s device %d state %d: largest %d = %v, want %v", name, d.ID, i, n, got, w)
					}
				}
			}
		}
	}
}

// TestReplayTimeline checks the replay's timeline, whose buckets are
// filled inline (a bucket pointer kept until the next bucket's first
// entry), against Series over the whole trace, which records every state
// through buckets.record; and the streams and mapping the replay notes
// against a scan of the trace.
func TestReplayTimeline(t *testing.T) {
	for name, s := range fastpathSnapshots(t) {
		for _, points := range []int{5, 7, 64, 800, 3000} {
			for _, d := range Analyze(s, Options{TimelinePoints: points}).Devices {
				n := d.Trace.Len()
				if n == 0 {
					continue
				}
				got, want := d.Timeline(), d.Series(-1, n-1, points, 1).Points
				if !slices.Equal(got, want) {
					t.Fatalf("%s device %d, %d points: timeline %v, want %v", name, d.ID, points, got, want)
				}
				streams, mapped := map[uint64]bool{}, false
				for i := range n {
					streams[d.Trace.Stream(i)] = true
					mapped = mapped || d.Trace.Kind(i) == snapshot.KindSegmentMap || d.Trace.Kind(i) == snapshot.KindSegmentUnmap
				}
				if len(streams) != len(d.traceStreams) || mapped != d.mapped {
					t.Fatalf("%s device %d: streams %v mapped %v, want %v %v", name, d.ID, d.traceStreams, d.mapped, streams, mapped)
				}
				for _, st := range d.traceStreams {
					if !streams[st] {
						t.Fatalf("%s device %d: stream %#x is in no entry", name, d.ID, st)
					}
				}
			}
		}
	}
}

// TestBucketAt checks buckets.at against record's bucket formula: the
// bucket of entry i, and that every entry up to the next bucket's first
// is in it and that one is not.
func TestBucketAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		count := 1 + rng.IntN(5000)
		points := 5 + rng.IntN(3000)
		from := rng.IntN(10) - 1
		bs := newBuckets(points, from, count)
		bucketOf := func(i int) int { return int(int64(i-from) * int64(len(bs.b)) / int64(bs.count)) }
		for i := from; i < from+count; {
			b, end := bs.at(i)
			if want := &bs.b[bucketOf(i)]; b != want {
				t.Fatalf("count %d, %d buckets: at(%d) is bucket %d", count, len(bs.b), i, bucketOf(i))
			}
			if end <= i || (end < from+count && bucketOf(end) == bucketOf(i)) || bucketOf(end-1) != bucketOf(i) {
				t.Fatalf("count %d, %d buckets: at(%d) ends at %d", count, len(bs.b), i, end)
			}
			i = end
		}
	}
}

// TestDoubledTrimmed checks that doubled and trimmed keep a slice's
// elements, that appending through doubled gives what append gives, and
// the room each leaves.
func TestDoubledTrimmed(t *testing.T) {
	var got, want []int
	for i := range 5000 {
		got = append(doubled(got), i)
		want = append(want, i)
		if !slices.Equal(got, want) || cap(got) > max(64, 2*len(got)) {
			t.Fatalf("after %d appends: %d elements, room %d, or not those of append", i+1, len(got), cap(got))
		}
		if tr := trimmed(got); !slices.Equal(tr, want) || cap(tr)-len(tr) > len(tr)/4 {
			t.Fatalf("trimmed after %d appends: %d elements, room %d, or not those of append", i+1, len(tr), cap(tr))
		}
	}
}

// TestFreeRequested checks each allocation's free_requested entry against
// its definition: the last free_requested of its address while it is open
// (after its alloc entry, before its end); none for allocations made before
// the trace. The replay finds most of them at the free_completed that
// follows.
func TestFreeRequested(t *testing.T) {
	for name, s := range fastpathSnapshots(t) {
		for _, d := range Analyze(s, Options{}).Devices {
			tab := &d.allocs
			if d.Actions[string(snapshot.ActionFreeCompleted)]+d.Actions["free"] == 0 {
				continue // allocations end at free_requested
			}
			byAddr := map[uint64][]int{}
			for k := range tab.len() {
				if tab.start[k] >= 0 {
					byAddr[d.Trace.Addr(int(tab.start[k]))] = append(byAddr[d.Trace.Addr(int(tab.start[k]))], k)
				}
			}
			want := make([]int32, tab.len())
			for k := range want {
				want[k] = -1
			}
			found := 0
			for i := range d.Trace.Len() {
				if d.Trace.Kind(i) != snapshot.KindFreeRequested {
					continue
				}
				for _, k := range byAddr[d.Trace.Addr(i)] {
					if int(tab.start[k]) < i && i < int(tab.end[k]) {
						want[k] = int32(i)
						found++
					}
				}
			}
			if !slices.Equal(tab.freeReq, want) {
				for k := range want {
					if tab.freeReq[k] != want[k] {
						t.Fatalf("%s device %d: allocation %d (entries %d…%d) has free_requested %d, want %d",
							name, d.ID, k, tab.start[k], tab.end[k], tab.freeReq[k], want[k])
					}
				}
			}
			if name == string(gen.DistinctStacks) && found == 0 {
				t.Fatalf("%s: no free_requested found", name)
			}
		}
	}
}

// TestSortByAddr checks the radix sort of live blocks, as layout uses it
// (sorted again by sortByAddrCmp when refused), against slices.SortFunc by
// address on the same input: distinct addresses spread over few or many
// bytes (never refused), and inputs with shared addresses (which must come
// out in SortFunc's order), small and large.
func TestSortByAddr(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 300 {
		n := rng.IntN(3000)
		v := make([]liveBlock, n)
		seen := map[uint64]bool{}
		for j := range v {
			var a uint64
			for {
				switch trial % 3 {
				case 0:
					a = 0x7f0000000000 + uint64(rng.IntN(1<<20))*512
				case 1:
					a = rng.Uint64()
				default:
					a = uint64(rng.IntN(1 << 12))
				}
				if trial%5 == 4 || !seen[a] {
					break // every fifth input may repeat addresses
				}
			}
			seen[a] = true
			v[j] = liveBlock{addr: a, k: int32(j)}
		}
		want := slices.Clone(v)
		slices.SortFunc(want, func(x, y liveBlock) int { return cmp.Compare(x.addr, y.addr) })
		// As layout: sorted again from the first order when refused.
		first := slices.Clone(v)
		if !sortByAddr(v) {
			if len(seen) == n {
				t.Fatalf("trial %d (%d blocks): refused distinct addresses", trial, n)
			}
			copy(v, first)
			sortByAddrCmp(v)
		}
		if !slices.Equal(v, want) {
			t.Fatalf("trial %d (%d blocks): sorted differently from SortFunc", trial, n)
		}
	}
}

// TestAllocSizes checks the sizes column the report reads (allocTable.sizes,
// read from the trace a page at a time) against each allocation's size read
// one by one (Allocation), and against the entry's size for the
// allocations from the trace (sane, as the replay counts it).
func TestAllocSizes(t *testing.T) {
	snaps := fastpathSnapshots(t)
	// Impossible sizes (negative, beyond any sum) count as 0.
	b := newBuilder()
	sa := b.stack(py("train.py", 10, "forward"))
	b.ev(snapshot.ActionAlloc, 0x1000, 512, sa)
	b.ev(snapshot.ActionAlloc, 0x2000, 1<<62, sa)
	b.ev(snapshot.ActionAlloc, 0x3000, -5, sa)
	b.ev(snapshot.ActionFreeCompleted, 0x2000, 1<<62, sa)
	snaps["impossible"] = b.s
	for name, s := range snaps {
		a := Analyze(s, Options{})
		for _, d := range a.Devices {
			sizes := d.allocs.sizes()
			if len(sizes) != d.NumAllocs() {
				t.Fatalf("%s device %d: %d sizes for %d allocations", name, d.ID, len(sizes), d.NumAllocs())
			}
			for k, got := range sizes {
				want := d.Allocation(k).Size
				if st := d.allocs.start[k]; st >= 0 {
					want, _ = a.sane(d.Trace.Size(int(st)))
				}
				if got != want || got != d.Allocation(k).Size {
					t.Fatalf("%s device %d allocation %d: size %d, want %d (Allocation: %d)", name, d.ID, k, got, want, d.Allocation(k).Size)
				}
			}
		}
	}
}

// TestSiteSeries checks the site series (a difference array per band,
// points found by the point finder inlined) against its definition: at
// each point, the sizes of the allocations alive then, summed per band.
func TestSiteSeries(t *testing.T) {
	for name, s := range fastpathSnapshots(t) {
		a := Analyze(s, Options{TimelinePoints: 300})
		r := a.Report()
		for i, d := range a.Devices {
			dr := &r.Devices[i]
			ss := dr.SiteSeries
			if ss == nil {
				continue
			}
			band := map[int32]int{}
			for b, si := range ss.SiteIndex {
				if si >= 0 {
					band[si] = b
				}
			}
			other := len(ss.Sites) - 1
			for j, p := range dr.Timeline {
				want := make([]int64, len(ss.Sites))
				for k := range d.NumAllocs() {
					if d.allocs.aliveAt(k, p.Index) {
						b, ok := band[d.allocs.site[k]]
						if !ok {
							b = other
						}
						want[b] += d.allocs.size(k)
					}
				}
				for b := range want {
					if ss.Values[b][j] != want[b] {
						t.Fatalf("%s device %d: band %d (%s) at point %d (entry %d) is %d, want %d",
							name, d.ID, b, ss.Sites[b], j, p.Index, ss.Values[b][j], want[b])
					}
				}
			}
		}
	}
}

// TestSizesInHand: the state, rule totals and largest allocations at four
// states of every test snapshot are the same whether the allocations'
// sizes come from the slice reportFirst holds (the replay's sizes,
// takeSizes) or from the trace's pages (sizes nil: allocTable.size), and
// that slice holds allocTable.size of every allocation.
func TestSizesInHand(t *testing.T) {
	for name, s := range fastpathSnapshots(t) {
		for _, d := range AnalyzeSummary(s, Options{}, nil).Devices {
			var sizes []int64
			if e := d.early; e != nil {
				// The early diagnosis took them on its goroutine.
				sizes = e.allocSizes()
			} else {
				sizes = d.allocs.takeSizes()
			}
			for k := range d.allocs.len() {
				if want := d.allocs.size(k); sizes[k] != want {
					t.Fatalf("%s device %d: allocation %d has size %d in hand, %d in the trace", name, d.ID, k, sizes[k], want)
				}
			}
			for _, i := range []int{d.peakIndex, -1, d.Trace.Len() / 3, d.Trace.Len() - 1} {
				i = d.clampIndex(i)
				live := d.liveAt(i)
				for _, segments := range []int{0, -1, 2} {
					got, want := d.stateAt(i, live, segments, 5, sizes), d.stateAt(i, live, segments, 5, nil)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%s device %d state %d (%d segments): with sizes in hand %+v, from the trace %+v", name, d.ID, i, segments, got, want)
					}
				}
				if got, want := d.ruleTotals(live, sizes), d.ruleTotals(live, nil); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s device %d state %d: rule totals %+v, from the trace %+v", name, d.ID, i, got, want)
				}
				if got, want := d.largest(live, 7, sizes), d.largest(live, 7, nil); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s device %d state %d: largest %+v, from the trace %+v", name, d.ID, i, got, want)
				}
			}
		}
	}
}
