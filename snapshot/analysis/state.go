package analysis

import (
	"fmt"
	"slices"
	"strconv"

	"oomscope/snapshot"
)

// FragmentationRule explains the fragmentation numbers.
const FragmentationRule = "free = reserved − allocated (requested bytes); internal free = block size − requested size " +
	"summed over live blocks (rounding waste); external free = reserved bytes outside any live block; largest free " +
	"block = the longest run of external free bytes in one segment, the biggest request that fits without a new " +
	"cudaMalloc. Block sizes come from the segments for blocks still alive at the end; for earlier blocks they are " +
	"the request rounded up to 512 B, a lower bound (large blocks can keep an unsplit tail of up to 1 MiB)."

// Fragmentation describes how the reserved memory is used at one moment.
type Fragmentation struct {
	// Index is the trace index of the state (-1: before the first entry).
	Index int `json:"index"`
	// AllocatedBytes is the sum of requested bytes of live allocations.
	AllocatedBytes int64 `json:"allocated_bytes"`
	// ReservedBytes is the sum of segment sizes.
	ReservedBytes int64 `json:"reserved_bytes"`
	// FreeBytes is ReservedBytes − AllocatedBytes, or 0 when the trace and
	// the segments disagree and more is allocated than reserved.
	FreeBytes int64 `json:"free_bytes"`
	// InternalFreeBytes is rounding waste inside live blocks.
	InternalFreeBytes int64 `json:"internal_free_bytes"`
	// ExternalFreeBytes is reserved memory outside live blocks.
	ExternalFreeBytes int64 `json:"external_free_bytes"`
	// LargestFreeBlockBytes is the largest contiguous external free range.
	LargestFreeBlockBytes int64 `json:"largest_free_block_bytes"`
	// Segments is the number of reserved ranges.
	Segments int `json:"segments"`
	// EstimatedBlocks counts live blocks whose size was estimated.
	EstimatedBlocks int `json:"estimated_blocks"`
	// OutsideSegments counts live allocations that lie in no segment (trace
	// and segments disagree).
	OutsideSegments int `json:"outside_segments,omitempty"`
	// Rule explains the numbers.
	Rule string `json:"rule"`
}

// SegmentState is one reserved range at a moment.
type SegmentState struct {
	// Address is the base address in hex ("0x7f…"): addresses exceed 2^53.
	Address string `json:"address"`
	// Size is the range's bytes.
	Size int64 `json:"size"`
	// Stream is the stream pointer in hex ("0x0": default stream).
	Stream string `json:"stream"`
	// Expandable is true for mapped runs of expandable segments.
	Expandable bool `json:"expandable,omitempty"`
	// Pool is "small" (2 MiB segments, requests ≤ 1 MiB) or "large".
	Pool string `json:"pool"`
	// AllocatedBytes is the requested bytes of live blocks in it.
	AllocatedBytes int64 `json:"allocated_bytes"`
	// InternalFreeBytes is rounding waste in its live blocks.
	InternalFreeBytes int64 `json:"internal_free_bytes"`
	// ExternalFreeBytes is its bytes outside live blocks.
	ExternalFreeBytes int64 `json:"external_free_bytes"`
	// LargestFreeBytes is its longest free run.
	LargestFreeBytes int64 `json:"largest_free_bytes"`
	// Blocks are its live blocks in address order.
	Blocks []BlockView `json:"blocks"`
}

// BlockView is a live block inside a SegmentState.
type BlockView struct {
	// Offset is the block's offset from the segment base.
	Offset int64 `json:"offset"`
	// Size is the block's size (exact or estimated, see Exact).
	Size int64 `json:"size"`
	// Requested is the requested bytes.
	Requested int64 `json:"requested"`
	// Exact is true when Size comes from the segments.
	Exact bool `json:"exact"`
	// Alloc is the allocation's number (for AllocationView).
	Alloc int32 `json:"alloc"`
	// Site indexes Analysis.Sites.
	Site int32 `json:"site"`
	// Category is the block's category name.
	Category string `json:"category"`
	// Pending is true for active_pending_free blocks.
	Pending bool `json:"pending,omitempty"`
}

// State is the allocator state after one trace entry.
type State struct {
	// Index is the trace index (-1: before the first entry).
	Index int `json:"index"`
	// TimeUS is the entry's time_us (for -1, the first entry's; 0 if none).
	TimeUS int64 `json:"time_us"`
	// Action is the entry's action ("" for -1).
	Action string `json:"action"`
	// AllocatedBytes is the sum of requested bytes of live allocations.
	AllocatedBytes int64 `json:"allocated_bytes"`
	// ReservedBytes is the sum of reserved ranges.
	ReservedBytes int64 `json:"reserved_bytes"`
	// LiveAllocations counts live allocations.
	LiveAllocations int `json:"live_allocations"`
	// Categories splits AllocatedBytes by category.
	Categories CategoryBytes `json:"categories"`
	// TopSites are the sites holding the most live bytes.
	TopSites []SiteBytes `json:"top_sites"`
	// Fragmentation sums up the segments.
	Fragmentation Fragmentation `json:"fragmentation"`
	// Segments are the reserved ranges with their blocks (only when asked):
	// all in address order, or the largest ones, biggest first.
	Segments []SegmentState `json:"segments,omitempty"`
	// OmittedSegments and OmittedBytes count the smaller segments left out.
	OmittedSegments int `json:"omitted_segments,omitempty"`
	// OmittedBytes is the reserved bytes of the omitted segments.
	OmittedBytes int64 `json:"omitted_bytes,omitempty"`
	// SiteLabels names the sites of the blocks in Segments, by site index.
	SiteLabels map[int32]string `json:"site_labels,omitempty"`
}

// clampIndex limits i to the states of the trace, -1 … len-1.
func (d *Device) clampIndex(i int) int {
	return max(-1, min(i, d.Trace.Len()-1))
}

// timeAt returns the time of the state after entry i.
func (d *Device) timeAt(i int) int64 {
	if d.Trace.Len() == 0 {
		return 0
	}
	return d.Trace.TimeUS(max(i, 0))
}

// StateAt rebuilds the allocator state after trace entry i (-1: before the
// first entry), with the topSites biggest sites and a segment layout: none
// when segments is 0, every segment in address order when it is negative,
// else the segments largest segments, biggest first. It costs one scan of
// the allocations and one replay of the segment events.
func (d *Device) StateAt(i int, segments int, topSites int) State {
	i = d.clampIndex(i)
	return d.stateAt(i, d.liveAt(i), segments, topSites, nil)
}

// stateAt is StateAt for a state i within the trace whose live
// allocations are live (liveAt(i), which it only reads); sizes, if not
// nil, are every allocation's size (allocTable.sizeIn).
func (d *Device) stateAt(i int, live []int32, segments int, topSites int, sizes []int64) State {
	st := State{Index: i, TimeUS: d.timeAt(i)}
	if i >= 0 {
		st.Action = string(d.Trace.Action(i))
	}
	st.LiveAllocations = len(live)
	t := &d.allocs
	for _, k := range live {
		size := t.sizeIn(sizes, int(k))
		st.AllocatedBytes += size
		st.Categories.Add(t.cat[k], size)
	}
	st.TopSites = d.siteTotals(live, topSites, sizes)
	segs := d.segmentsAt(i)
	st.ReservedBytes = segs.total()
	st.Fragmentation, st.Segments = d.layout(i, live, segs, segments != 0, sizes)
	if segments > 0 && len(st.Segments) > 0 {
		slices.SortStableFunc(st.Segments, func(x, y SegmentState) int { return compareInt64(y.Size, x.Size) })
		if len(st.Segments) > segments {
			for _, ss := range st.Segments[segments:] {
				st.OmittedSegments++
				st.OmittedBytes += ss.Size
			}
			st.Segments = st.Segments[:segments]
		}
	}
	if len(st.Segments) > 0 {
		st.SiteLabels = map[int32]string{}
		for _, ss := range st.Segments {
			for _, b := range ss.Blocks {
				st.SiteLabels[b.Site] = d.a.Sites[b.Site].Label
			}
		}
	}
	st.Fragmentation.AllocatedBytes = st.AllocatedBytes
	// More allocated than reserved means the trace and the segments
	// disagree (replay warns); free memory is never negative.
	st.Fragmentation.FreeBytes = max(0, st.ReservedBytes-st.AllocatedBytes)
	return st
}

// liveAt returns the numbers of the allocations live after entry i.
func (d *Device) liveAt(i int) []int32 {
	var out []int32
	t := &d.allocs
	starts := t.start
	ends := t.end[:len(starts)]
	inBlocksOf(t.len(), passBlock, func(blo, bhi int) {
		// t.aliveAt, with the columns and the list in locals (a
		// variable the closure changes lives in memory).
		o := out
		for k := blo; k < bhi; k++ {
			if int(starts[k]) <= i && i < int(ends[k]) {
				o = append(o, int32(k))
			}
		}
		out = o
	})
	return out
}

// initialSegments rebuilds the reserved ranges before the first entry by
// undoing the segment events, newest first, on the final segments.
func (d *Device) initialSegments() *segSet {
	if d.initSegs != nil {
		return d.initSegs
	}
	s := d.a.Snap
	set := &segSet{}
	for _, si := range d.segments {
		seg := &s.Segments[si]
		size, _ := d.a.sane(seg.TotalSize)
		set.add(segRange{addr: seg.Address, size: size, stream: seg.Stream, pool: seg.PoolID,
			expandable: seg.IsExpandable, small: seg.SegmentType == "small"}, false)
	}
	for k := len(d.segEvents) - 1; k >= 0; k-- {
		e := d.segEvent(d.segEvents[k])
		r := eventRange(e)
		switch e.Action {
		case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentMap:
			set.remove(e.Addr, e.Size)
		case snapshot.ActionSegmentFree:
			set.add(r, false)
		case snapshot.ActionSegmentUnmap:
			set.add(r, true)
		}
	}
	if set.inconsistent > 0 {
		d.warn(fmt.Sprintf("%d segment events do not match the segments when replayed backwards", set.inconsistent))
		set.inconsistent = 0
	}
	d.initSegs = set
	return set
}

// segEvent returns the segment event at trace index i.
func (d *Device) segEvent(i int32) *snapshot.TraceEntry {
	tr := d.Trace
	size, _ := d.a.sane(tr.Size(int(i)))
	return &snapshot.TraceEntry{Action: tr.Action(int(i)), Addr: tr.Addr(int(i)), Size: size, Stream: tr.Stream(int(i))}
}

// eventRange is the reserved range a segment event names.
func eventRange(e *snapshot.TraceEntry) segRange {
	exp := e.Action == snapshot.ActionSegmentMap || e.Action == snapshot.ActionSegmentUnmap
	return segRange{addr: e.Addr, size: e.Size, stream: e.Stream, expandable: exp, small: !exp && e.Size == 2<<20}
}

// segmentsAt replays the segment events up to entry i on the initial set.
func (d *Device) segmentsAt(i int) segSet {
	set := d.initialSegments().clone()
	for _, k := range d.segEvents {
		if int(k) > i {
			break
		}
		e := d.segEvent(k)
		switch e.Action {
		case snapshot.ActionSegmentAlloc:
			set.add(eventRange(e), false)
		case snapshot.ActionSegmentMap:
			set.add(eventRange(e), true)
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			set.remove(e.Addr, e.Size)
		}
	}
	return set
}

// roundBlock is the caching allocator's minimum rounding: 512 B units.
func roundBlock(n int64) int64 {
	if n < 512 {
		return 512
	}
	return (n + 511) &^ 511
}

// layout places the live allocations in the segments and measures free
// space. With keep, it also returns the per-segment views.
func (d *Device) layout(i int, live []int32, segs segSet, keep bool, sizes []int64) (Fragmentation, []SegmentState) {
	f := Fragmentation{Index: i, Segments: len(segs.r), Rule: FragmentationRule}
	for _, r := range segs.r {
		f.ReservedBytes += r.size
	}
	t := &d.allocs
	// The live allocations by address (the same sort of the same
	// comparisons as by number with the address read each time).
	byAddr := make([]liveBlock, len(live))
	fill := func() {
		for j, k := range live {
			byAddr[j] = liveBlock{addr: t.addr(int(k)), k: k}
		}
	}
	if fill(); !sortByAddr(byAddr) {
		fill()
		sortByAddrCmp(byAddr)
	}
	var out []SegmentState
	k := 0
	for _, r := range segs.r {
		for k < len(byAddr) && byAddr[k].addr < r.addr {
			f.OutsideSegments++
			k++
		}
		ss := SegmentState{Address: hex(r.addr), Size: r.size, Stream: hex(r.stream), Expandable: r.expandable, Pool: "large"}
		if r.small {
			ss.Pool = "small"
		}
		cursor := r.addr
		for k < len(byAddr) && byAddr[k].addr < r.end() {
			ai, addr := byAddr[k].k, byAddr[k].addr
			req := t.sizeIn(sizes, int(ai))
			k++
			if addr < cursor {
				// Overlaps the previous block: inconsistent data; count it as
				// allocated but give it no extent.
				ss.AllocatedBytes += req
				continue
			}
			b, _ := t.block(int(ai))
			size, exact := b.size, b.size > 0
			if !exact {
				size = roundBlock(req)
				f.EstimatedBlocks++
			}
			limit := r.end()
			if k < len(byAddr) && byAddr[k].addr < limit {
				limit = byAddr[k].addr
			}
			size = min(size, int64(limit-addr))
			if gap := int64(addr - cursor); gap > 0 {
				ss.ExternalFreeBytes += gap
				ss.LargestFreeBytes = max(ss.LargestFreeBytes, gap)
			}
			ss.AllocatedBytes += req
			ss.InternalFreeBytes += max(0, size-req)
			if keep {
				ss.Blocks = append(ss.Blocks, BlockView{Offset: int64(addr - r.addr), Size: size, Requested: req,
					Exact: exact, Alloc: ai, Site: t.site[ai], Category: t.cat[ai].String(), Pending: b.pending})
			}
			cursor = addr + uint64(size)
		}
		if gap := int64(r.end() - cursor); gap > 0 {
			ss.ExternalFreeBytes += gap
			ss.LargestFreeBytes = max(ss.LargestFreeBytes, gap)
		}
		f.InternalFreeBytes += ss.InternalFreeBytes
		f.ExternalFreeBytes += ss.ExternalFreeBytes
		f.LargestFreeBlockBytes = max(f.LargestFreeBlockBytes, ss.LargestFreeBytes)
		if keep {
			if ss.Blocks == nil {
				ss.Blocks = []BlockView{}
			}
			out = append(out, ss)
		}
	}
	f.OutsideSegments += len(byAddr) - k
	return f, out
}

// sortByAddr sorts live blocks by address as slices.SortFunc comparing
// addresses does, and reports whether it did: above a few hundred blocks
// it sorts by radix (a byte of the address per pass, over the bytes that
// differ), which is exact when no two blocks share an address, as in every
// consistent trace: the order is then the only one. When blocks share an
// address (a trace and segments that disagree) it returns false, and the
// caller sorts its blocks again from their first order with sortByAddrCmp,
// so that equal addresses come out as they always did. (The state at the
// peak of a 1 GiB file of distinct stacks has over a million live blocks;
// their sort took a quarter of a second of the worker's time.)
func sortByAddr(v []liveBlock) bool {
	if len(v) < 512 {
		sortByAddrCmp(v)
		return true
	}
	var diff uint64
	for _, b := range v {
		diff |= b.addr ^ v[0].addr
	}
	tmp := make([]liveBlock, len(v))
	src, dst := v, tmp
	for shift := uint(0); shift < 64; shift += 8 {
		if (diff>>shift)&0xff == 0 {
			continue // the same byte in every address
		}
		var count [257]int
		for _, b := range src {
			count[(b.addr>>shift)&0xff+1]++
		}
		for i := 1; i < 257; i++ {
			count[i] += count[i-1]
		}
		for _, b := range src {
			c := (b.addr >> shift) & 0xff
			dst[count[c]] = b
			count[c]++
		}
		src, dst = dst, src
	}
	if &src[0] != &v[0] {
		copy(v, src)
	}
	for i := 1; i < len(v); i++ {
		if v[i].addr == v[i-1].addr {
			return false
		}
	}
	return true
}

// sortByAddrCmp sorts live blocks by address with slices.SortFunc.
func sortByAddrCmp(v []liveBlock) {
	slices.SortFunc(v, func(x, y liveBlock) int {
		switch {
		case x.addr < y.addr:
			return -1
		case x.addr > y.addr:
			return 1
		}
		return 0
	})
}

// liveBlock is a live allocation's address and number.
type liveBlock struct {
	addr uint64
	k    int32
}

func hex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }
