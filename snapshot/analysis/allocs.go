package analysis

import "oomscope/snapshot"

// Origin tells where an allocation's live range comes from.
type Origin uint8

// Allocation origins.
const (
	// FromTrace: its alloc entry is in the trace.
	FromTrace Origin = iota
	// PreTraceFreed: only its free is in the trace; it was allocated before
	// the trace window (late recording or ring-buffer wrap).
	PreTraceFreed
	// PreTraceLive: a live block in the segments with no alloc in the trace;
	// alive for the whole trace window (a "ghost").
	PreTraceLive
)

// String returns the origin's JSON name, e.g. "pre_trace_live".
func (o Origin) String() string {
	return [...]string{"trace", "pre_trace_freed", "pre_trace_live"}[o]
}

// Allocation is one live range of a block, from its alloc to its
// free_completed (docs/snapshot.md#pairing-rule), as Device.Allocation
// assembles it from the device's columns.
type Allocation struct {
	// Addr is the block address.
	Addr uint64
	// Size is the requested bytes (what alloc/free entries and
	// requested_size carry).
	Size int64
	// BlockSize is the block's rounded size when the segments show it (the
	// allocation is still alive at the end), 0 otherwise.
	BlockSize int64
	// Start is the index of the alloc entry; -1 when it predates the trace.
	Start int32
	// End is the index of the free_completed entry; the trace length when it
	// is still alive at the end.
	End int32
	// FreeRequested is the index of its free_requested entry, -1 if none.
	FreeRequested int32
	// Stack is the allocation stack; for PreTraceFreed the free's stack.
	Stack snapshot.StackID
	// Site indexes Analysis.Sites.
	Site int32
	// Origin tells where the live range comes from.
	Origin Origin
	// Category and Rule are the bucket and the rule that chose it.
	Category Category
	// Rule is the classification rule that fired.
	Rule Rule
	// Pending is true when the segments show the block as
	// active_pending_free (freed but waiting for other streams).
	Pending bool
}

// allocTable holds a device's allocations as columns indexed by allocation
// number: those whose alloc is in the trace in trace order, pre-trace ones
// freed in the trace at their free, then the pre-trace blocks still alive at
// the end. What the trace holds is not copied: an allocation's address,
// size and stack are those of its entry (the alloc; the free for
// PreTraceFreed), and only the allocations alive at the end that the
// segments show as live blocks keep more (atEnd). The stack is kept too
// (stacks), as every pass reads it: one load instead of a lookup through
// the trace's pages. That is 22 bytes per allocation, and each scan reads
// only the columns it needs.
type allocTable struct {
	tr snapshot.Trace
	n  int32 // tr.Len(): the end of the allocations alive at the end
	a  *Analysis
	// start is the alloc entry (-1: before the trace), end the
	// free_completed entry (n: alive at the end; ^i during the replay,
	// see splitEnds), freeReq the free_requested entry (-1: none).
	start, end, freeReq []int32
	// stacks is each allocation's stack: its alloc entry's (for
	// PreTraceFreed its free's), or for a live block at the end the
	// block's stack (atEnd).
	stacks []snapshot.StackID
	// site indexes Analysis.Sites; cat and rule are the classification.
	site []int32
	cat  []Category
	rule []Rule
	// atEnd holds, for each allocation alive at the end that is a live
	// block of the segments, that block.
	atEnd map[int32]endBlock
	// sizeCol is each allocation's size (size) as the replay added it,
	// until taken (takeSizes): the replay has it in hand, where sizes
	// reads the trace's pages again.
	sizeCol []int64
}

// endBlock is the live block of the segments that an allocation alive at
// the end of the trace is.
type endBlock struct {
	addr uint64
	// size is the block's rounded size; req its requested size, the
	// allocation's size when it has no entry (PreTraceLive).
	size, req int64
	pending   bool
}

// newAllocTable returns an empty table for trace tr of a's snapshot with
// room for capacity allocations.
func newAllocTable(a *Analysis, tr snapshot.Trace, capacity int) allocTable {
	return allocTable{
		tr: tr, n: int32(tr.Len()), a: a,
		start: make([]int32, 0, capacity), end: make([]int32, 0, capacity), freeReq: make([]int32, 0, capacity),
		stacks: make([]snapshot.StackID, 0, capacity), sizeCol: make([]int64, 0, capacity),
		atEnd: map[int32]endBlock{},
	}
}

// add appends an allocation live from entry start to entry end with stack
// stack and size bytes (size: its entry's as the replay counts it, or its
// block's) and returns its number; it has no free_requested entry yet.
func (t *allocTable) add(start, end int32, stack snapshot.StackID, size int64) int32 {
	k := int32(len(t.start))
	t.start = append(t.start, start)
	t.end = append(t.end, end)
	t.freeReq = append(t.freeReq, -1)
	t.stacks = append(t.stacks, stack)
	t.sizeCol = append(t.sizeCol, size)
	return k
}

// takeSizes returns sizes: the first time the sizes the replay added, which
// the table then no longer holds (whoever takes them keeps them as long as
// needed, and no longer), later a new slice.
func (t *allocTable) takeSizes() []int64 {
	s := t.sizeCol
	t.sizeCol = nil
	if s == nil || len(s) != len(t.start) {
		return t.sizes()
	}
	return s
}

// splitEnds sets the end and free_requested entries of the allocations
// the replay ended with end ^i: a free_completed at i right after their
// free_requested. Most frees are such pairs, and an allocation freed long
// after its alloc has its end and freeReq far from the replay's other
// writes: a cache miss each, where this pass reads and writes in order.
func (t *allocTable) splitEnds() {
	for k, e := range t.end {
		if e < 0 {
			t.end[k], t.freeReq[k] = ^e, ^e-1
		}
	}
}

// len returns the number of allocations.
func (t *allocTable) len() int { return len(t.start) }

// aliveAt reports whether allocation k is live in the state after entry i
// (i = -1 is the state before the first entry).
func (t *allocTable) aliveAt(k int, i int) bool {
	return int(t.start[k]) <= i && i < int(t.end[k])
}

// origin says where allocation k's live range comes from.
func (t *allocTable) origin(k int) Origin {
	switch {
	case t.start[k] >= 0:
		return FromTrace
	case t.end[k] < t.n:
		return PreTraceFreed
	}
	return PreTraceLive
}

// block returns the live block allocation k is at the end, if any.
func (t *allocTable) block(k int) (endBlock, bool) {
	if t.end[k] != t.n {
		return endBlock{}, false
	}
	b, ok := t.atEnd[int32(k)]
	return b, ok
}

// entry is the trace entry that describes allocation k: its alloc, or its
// free for PreTraceFreed; -1 for PreTraceLive.
func (t *allocTable) entry(k int) int {
	if s := t.start[k]; s >= 0 {
		return int(s)
	}
	if e := t.end[k]; e < t.n {
		return int(e)
	}
	return -1
}

// addr returns allocation k's block address.
func (t *allocTable) addr(k int) uint64 {
	if i := t.entry(k); i >= 0 {
		return t.tr.Addr(i)
	}
	return t.atEnd[int32(k)].addr
}

// size returns allocation k's requested bytes as the replay counts them
// (Analysis.sane). The common case, an allocation whose alloc is in the
// trace, is inlined; the rest is sizeAt.
func (t *allocTable) size(k int) int64 {
	if s := t.start[k]; s >= 0 {
		if v := t.tr.Size(int(s)); v >= 0 && v <= t.a.maxSize {
			return v
		}
		return 0
	}
	return t.sizeAt(k)
}

// sizeIn is allocation k's size: sizes[k] where the caller holds every
// allocation's size (sizes, as reportFirst does), a slice read; else
// (sizes nil) size, which reads the trace's pages.
func (t *allocTable) sizeIn(sizes []int64, k int) int64 {
	if sizes != nil {
		return sizes[k]
	}
	return t.size(k)
}

// bigSize is size for an open allocation of bigOpen bytes or more
// (openAlloc.bytes), not inlined there: rare.
//
//go:noinline
func (t *allocTable) bigSize(k int32) int64 { return t.size(int(k)) }

// sizes returns every allocation's size (size), for the report's passes
// over all allocations: a slice read, where size reads the trace's pages.
//
// The allocations from the trace are listed first, their alloc entries in
// trace order: their sizes are read from the trace's pages one chunk
// (snapshot.Trace.Chunk) at a time; the rest through size.
func (t *allocTable) sizes() []int64 {
	out := make([]int64, t.len())
	var ch snapshot.Values[int64] // the sizes of entries base, base+1, …
	base := 0
	maxSize, starts := t.a.maxSize, t.start[:len(out)]
	inBlocks(len(out), func(lo, hi int) {
		for k := lo; k < hi; k++ {
			i := int(starts[k])
			if i < 0 {
				out[k] = t.size(k)
				continue
			}
			if i-base >= ch.Len() || i < base {
				ch, base = t.tr.Chunk(i).Sizes, i
			}
			if v := ch.At(i - base); v >= 0 && v <= maxSize {
				out[k] = v
			}
		}
	})
	return out
}

// sizeAt is size for the allocations made before the trace.
func (t *allocTable) sizeAt(k int) int64 {
	if i := t.entry(k); i >= 0 {
		v, _ := t.a.sane(t.tr.Size(i))
		return v
	}
	return t.atEnd[int32(k)].req
}

// stack returns allocation k's stack (for PreTraceFreed the free's; for a
// live block at the end, see matchSegments).
func (t *allocTable) stack(k int) snapshot.StackID { return t.stacks[k] }

// NumAllocs returns the number of allocations (see Allocation).
func (d *Device) NumAllocs() int { return d.allocs.len() }

// Allocation returns allocation k, 0 ≤ k < NumAllocs(): those whose alloc
// is in the trace in trace order, pre-trace ones freed in the trace at their
// free, then the pre-trace blocks still alive at the end.
func (d *Device) Allocation(k int) Allocation {
	t := &d.allocs
	b, _ := t.block(k)
	return Allocation{
		Addr: t.addr(k), Size: t.size(k), BlockSize: b.size, Start: t.start[k], End: t.end[k], FreeRequested: t.freeReq[k],
		Stack: t.stack(k), Site: t.site[k], Origin: t.origin(k), Category: t.cat[k], Rule: t.rule[k], Pending: b.pending,
	}
}
