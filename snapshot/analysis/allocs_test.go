package analysis

import (
	"testing"

	"oomscope/snapshot"
)

// allocations lists every allocation of d (Device.Allocation in order).
func allocations(d *Device) []Allocation {
	out := make([]Allocation, d.NumAllocs())
	for k := range out {
		out[k] = d.Allocation(k)
	}
	return out
}

// aliveAfter reports whether al is live in the state after entry i (-1:
// before the first entry), by the pairing rule.
func aliveAfter(al Allocation, i int) bool { return int(al.Start) <= i && i < int(al.End) }

// TestAllocationColumns checks every field of every allocation on a trace
// with each origin, a double alloc, a pending block, a stackless alloc
// entry whose block has a stack, an open allocation that the segments do
// not show and an impossible size (counted as 0): what the columns and the trace give back must be
// what the pairing rule says (worked out by hand below).
func TestAllocationColumns(t *testing.T) {
	b := newBuilder()
	sa := b.stack(py("train.py", 10, "forward"))
	sb := b.stack(py("train.py", 20, "forward"))
	sh := b.stack(py("model.py", 30, "init"))
	sg := b.stack(py("model.py", 40, "ghost"))
	b.ev(snapshot.ActionFreeCompleted, 0x20000, 3000, sb)      // 0: k=0, pre-trace freed
	b.ev(snapshot.ActionAlloc, 0x10000, 1000, sa)              // 1: k=1, live to the end (block 1024)
	b.ev(snapshot.ActionAlloc, 0x10400, 500, snapshot.NoStack) // 2: k=2, stackless: the block's stack
	b.ev(snapshot.ActionAlloc, 0x30000, 700, sa)               // 3: k=3, ended by the double alloc at 5
	b.ev(snapshot.ActionFreeRequested, 0x10000, 1000, sa)      // 4: k=1's free_requested
	b.ev(snapshot.ActionAlloc, 0x30000, 800, sb)               // 5: k=4, open, in no segment
	b.ev(snapshot.ActionAlloc, 0x40000, -5, sb)                // 6: k=5, negative: 0 B
	b.seg(0x10000, false, blk{1024, 1000, snapshot.StateActivePendingFree, sa}, live(512, 500, sh),
		live(2048, 2000, sg), free(1024))
	d := Analyze(b.s, Options{}).Devices[0]
	n := int32(7)
	want := []Allocation{
		{Addr: 0x20000, Size: 3000, Start: -1, End: 0, FreeRequested: -1, Stack: sb, Origin: PreTraceFreed},
		{Addr: 0x10000, Size: 1000, BlockSize: 1024, Start: 1, End: n, FreeRequested: 4, Stack: sa, Pending: true},
		{Addr: 0x10400, Size: 500, BlockSize: 512, Start: 2, End: n, FreeRequested: -1, Stack: sh},
		{Addr: 0x30000, Size: 700, Start: 3, End: 5, FreeRequested: -1, Stack: sa},
		{Addr: 0x30000, Size: 800, Start: 5, End: n, FreeRequested: -1, Stack: sb},
		{Addr: 0x40000, Size: 0, Start: 6, End: n, FreeRequested: -1, Stack: sb},
		{Addr: 0x10600, Size: 2000, BlockSize: 2048, Start: -1, End: n, FreeRequested: -1, Stack: sg, Origin: PreTraceLive},
	}
	got := allocations(d)
	if len(got) != len(want) {
		t.Fatalf("%d allocations, want %d: %+v", len(got), len(want), got)
	}
	for k, w := range want {
		g := got[k]
		// Site, category and rule come from the classification, tested
		// elsewhere; they must be those of the stack's site.
		if g.Site != d.a.siteOf(w.Stack) {
			t.Errorf("allocation %d: site %d, want %d (its stack's)", k, g.Site, d.a.siteOf(w.Stack))
		}
		g.Site, g.Category, g.Rule = 0, 0, 0
		if g != w {
			t.Errorf("allocation %d:\n got %+v\nwant %+v", k, g, w)
		}
	}
	if v := d.AllocationView(6); v.Address != "0x10600" || v.Bytes != 2000 || v.BlockBytes != 2048 || v.Origin != "pre_trace_live" || v.FreeIndex != 7 {
		t.Errorf("view of the ghost: %+v", v)
	}
}

// traceSizes works out each allocation's size from the trace and the
// segments alone, as the pairing rule gives it (docs/snapshot.md): the
// size of its alloc entry, or of its free for an allocation made before
// the trace, or the requested size of its live block for one alive for
// the whole trace; an impossible size (Analysis.sane) counts as 0.
func traceSizes(d *Device) []int64 {
	out := make([]int64, d.NumAllocs())
	for k := range out {
		al := d.Allocation(k)
		var v int64
		switch al.Origin {
		case FromTrace:
			v = d.Trace.Size(int(al.Start))
		case PreTraceFreed:
			v = d.Trace.Size(int(al.End))
		default:
			for _, si := range d.segments {
				for _, b := range d.a.Snap.Segments[si].Blocks {
					if b.Address == al.Addr && (b.State == snapshot.StateActiveAllocated || b.State == snapshot.StateActivePendingFree) {
						v = b.RequestedSize
					}
				}
			}
		}
		if v < 0 || v > d.a.maxSize {
			v = 0
		}
		out[k] = v
	}
	return out
}

// TestReplaySizes checks the allocations' sizes the replay adds to the
// allocation table (takeSizes), on one goroutine and as a pipeline, on
// every file of numbersCases, against traceSizes: taken once they are the
// replay's, taken again worked out anew, equal both times; where the
// early diagnosis took them (a second core), its sizes are.
func TestReplaySizes(t *testing.T) {
	// Each origin, a ghost whose requested size is not its block's, a
	// double alloc, a pending block and a negative size (as in
	// TestAllocationColumns).
	built := func(*testing.T) *snapshot.Snapshot {
		b := newBuilder()
		sa, sg := b.stack(py("train.py", 10, "forward")), b.stack(py("model.py", 40, "ghost"))
		b.ev(snapshot.ActionFreeCompleted, 0x20000, 3000, sa)
		b.ev(snapshot.ActionAlloc, 0x10000, 1000, sa)
		b.ev(snapshot.ActionAlloc, 0x30000, 700, sa)
		b.ev(snapshot.ActionFreeRequested, 0x10000, 1000, sa)
		b.ev(snapshot.ActionAlloc, 0x30000, 800, sa)
		b.ev(snapshot.ActionAlloc, 0x40000, -5, sa)
		b.seg(0x10000, false, blk{1024, 1000, snapshot.StateActivePendingFree, sa}, live(2048, 2000, sg), free(1024))
		return b.s
	}
	for _, c := range append(numbersCases(t), numbersCase{name: "built", snap: built}) {
		t.Run(c.name, func(t *testing.T) {
			load := func() *snapshot.Snapshot {
				if c.snap != nil {
					return c.snap(t)
				}
				b := c.data(t)
				s, err := snapshot.DecodeBytes(b, nil)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			sequentialOnly.Store(true)
			seq := Analyze(load(), Options{})
			sequentialOnly.Store(false)
			for _, d := range seq.Devices {
				want := traceSizes(d)
				if len(d.allocs.sizeCol) != len(want) {
					t.Fatalf("device %d: the replay added %d sizes, want %d", d.ID, len(d.allocs.sizeCol), len(want))
				}
				for i, get := range []string{"taken", "taken again"} {
					got := d.allocs.takeSizes()
					if k := firstDiff(got, want); k >= 0 {
						t.Fatalf("device %d, sizes %s: allocation %d of %d: %d, want %d", d.ID, get, k, len(want), at(got, k), want[k])
					}
					if i == 0 && d.allocs.sizeCol != nil {
						t.Fatalf("device %d: the table holds its sizes once taken", d.ID)
					}
				}
			}
			if !snapshot.Concurrent() {
				return
			}
			var par *Analysis
			withPipeline(t, func() { par = Analyze(load(), Options{}) })
			for _, d := range par.Devices {
				got, want := d.early.allocSizes(), traceSizes(d)
				if k := firstDiff(got, want); k >= 0 {
					t.Fatalf("device %d, pipeline: allocation %d of %d: size %d, want %d", d.ID, k, len(want), at(got, k), want[k])
				}
			}
		})
	}
}

// firstDiff returns the first index where got and want differ (one being
// shorter counts), -1 if they are equal.
func firstDiff(got, want []int64) int {
	for k := range want {
		if k >= len(got) || got[k] != want[k] {
			return k
		}
	}
	if len(got) != len(want) {
		return len(want)
	}
	return -1
}

// at returns s[k], -1 past its end.
func at(s []int64, k int) int64 {
	if k < len(s) {
		return s[k]
	}
	return -1
}
