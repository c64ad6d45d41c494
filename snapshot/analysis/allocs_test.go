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
