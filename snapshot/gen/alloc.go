package gen

import (
	"errors"
	"slices"

	"oomscope/snapshot"
)

// Caching-allocator constants (c10/cuda/CUDACachingAllocator.cpp).
const (
	minBlock     = 512
	smallSize    = 1 << 20  // allocations up to 1 MiB use the small pool
	smallBuffer  = 2 << 20  // small-pool segment size
	largeBuffer  = 20 << 20 // segment size for 1-10 MiB allocations
	minLargeSize = 10 << 20
	roundLarge   = 2 << 20 // large segments and expandable pages round to 2 MiB
)

// errOOM is returned by malloc when the device capacity is exhausted.
var errOOM = errors.New("out of memory")

// block is one simulated allocator block.
type block struct {
	addr      uint64
	size      int64
	requested int64
	active    bool
	pending   bool // freed by the caller, free_completed not yet recorded
	stack     snapshot.StackID
	seg       *segment
}

// segment is one simulated cudaMalloc'd range (or, for expandable
// segments, the mapped prefix of one reserved virtual range).
type segment struct {
	addr       uint64
	size       int64
	stream     uint64
	small      bool
	expandable bool
	pool       snapshot.PoolID
	stack      snapshot.StackID
	blocks     []*block // address order, tiling [addr, addr+size)
}

// allocator simulates one device's caching allocator and records trace
// entries through emit.
type allocator struct {
	device     int
	capacity   int64
	expandable bool
	nextAddr   uint64
	segs       []*segment
	reserved   int64
	emit       func(snapshot.TraceEntry)
	// expSeg is the expandable large-pool segment per stream.
	expSeg map[uint64]*segment
	// pool is the memory pool allocations go to ((0,0) is the default;
	// anything else is a private pool, as CUDA graphs use).
	pool snapshot.PoolID
}

func newAllocator(device int, capacity int64, expandable bool, emit func(snapshot.TraceEntry)) *allocator {
	return &allocator{
		device: device, capacity: capacity, expandable: expandable, emit: emit,
		nextAddr: 0x7f0000000000 + uint64(device)<<36,
		expSeg:   map[uint64]*segment{},
	}
}

func roundSize(n int64) int64 {
	if n < minBlock {
		return minBlock
	}
	return (n + minBlock - 1) / minBlock * minBlock
}

func segmentSize(n int64) int64 {
	switch {
	case n <= smallSize:
		return smallBuffer
	case n < minLargeSize:
		return largeBuffer
	}
	return (n + roundLarge - 1) / roundLarge * roundLarge
}

// malloc allocates requested bytes on stream; stack is the allocation
// stack recorded on the alloc entry and the block.
func (a *allocator) malloc(requested int64, stream uint64, stack snapshot.StackID) (*block, error) {
	size := roundSize(requested)
	small := size <= smallSize
	b := a.findFree(size, small, stream)
	if b == nil {
		var err error
		if b, err = a.grow(size, small, stream, stack); err != nil {
			return nil, err
		}
	}
	a.split(b, size, small)
	b.active = true
	b.requested = requested
	b.stack = stack
	a.emit(snapshot.TraceEntry{Action: snapshot.ActionAlloc, Addr: b.addr, Size: requested, Stream: stream, Frames: stack})
	return b, nil
}

// findFree returns the best-fitting inactive block of the pool and stream.
func (a *allocator) findFree(size int64, small bool, stream uint64) *block {
	var best *block
	for _, s := range a.segs {
		if s.small != small || s.stream != stream || s.pool != a.pool {
			continue
		}
		for _, b := range s.blocks {
			if !b.active && b.size >= size && (best == nil || b.size < best.size) {
				best = b
			}
		}
	}
	return best
}

// grow reserves memory for a block of size bytes: a new segment, or more
// mapped pages of the stream's expandable segment. On failure it releases
// every fully free segment (segment_free), retries, and reports errOOM.
func (a *allocator) grow(size int64, small bool, stream uint64, stack snapshot.StackID) (*block, error) {
	for attempt := 0; attempt < 2; attempt++ {
		if a.expandable && !small && a.pool == (snapshot.PoolID{}) {
			if b := a.growExpandable(size, stream); b != nil {
				return b, nil
			}
		} else if segSize := segmentSize(size); a.reserved+segSize <= a.capacity {
			s := &segment{addr: a.nextAddr, size: segSize, stream: stream, small: small, stack: stack, pool: a.pool}
			a.nextAddr += uint64(segSize) + roundLarge
			s.blocks = []*block{{addr: s.addr, size: segSize, seg: s, stack: snapshot.EmptyStack}}
			a.insertSeg(s)
			a.reserved += segSize
			a.emit(snapshot.TraceEntry{Action: snapshot.ActionSegmentAlloc, Addr: s.addr, Size: segSize, Stream: stream, Frames: stack})
			return s.blocks[0], nil
		}
		if attempt == 0 {
			a.releaseCached()
		}
	}
	return nil, errOOM
}

// growExpandable maps pages at the end of the stream's expandable segment
// so that its last block can hold size bytes; nil if over capacity.
func (a *allocator) growExpandable(size int64, stream uint64) *block {
	s := a.expSeg[stream]
	var tail int64
	if s != nil {
		if last := s.blocks[len(s.blocks)-1]; !last.active {
			tail = last.size
		}
	}
	need := (size - tail + roundLarge - 1) / roundLarge * roundLarge
	if a.reserved+need > a.capacity {
		return nil
	}
	if s == nil {
		s = &segment{addr: a.nextAddr, stream: stream, expandable: true, stack: snapshot.EmptyStack}
		a.nextAddr += 1 << 36 // the reserved virtual range
		a.expSeg[stream] = s
		a.insertSeg(s)
	}
	a.emit(snapshot.TraceEntry{Action: snapshot.ActionSegmentMap, Addr: s.addr + uint64(s.size), Size: need, Stream: stream, Frames: snapshot.EmptyStack})
	if tail > 0 {
		s.blocks[len(s.blocks)-1].size += need
	} else {
		s.blocks = append(s.blocks, &block{addr: s.addr + uint64(s.size), size: need, seg: s, stack: snapshot.EmptyStack})
	}
	s.size += need
	a.reserved += need
	return s.blocks[len(s.blocks)-1]
}

// unmapTails unmaps the whole 2 MiB pages of free memory at the end of each
// expandable segment (what empty_cache does with expandable segments).
func (a *allocator) unmapTails() {
	for _, stream := range sortedKeys(a.expSeg) {
		s := a.expSeg[stream]
		last := s.blocks[len(s.blocks)-1]
		if last.active {
			continue
		}
		n := last.size / roundLarge * roundLarge
		if n == 0 {
			continue
		}
		last.size -= n
		s.size -= n
		a.reserved -= n
		a.emit(snapshot.TraceEntry{Action: snapshot.ActionSegmentUnmap, Addr: s.addr + uint64(s.size), Size: n, Stream: stream, Frames: snapshot.EmptyStack})
		if last.size == 0 {
			s.blocks = s.blocks[:len(s.blocks)-1]
		}
		if len(s.blocks) == 0 {
			a.removeSeg(s)
			delete(a.expSeg, stream)
		}
	}
}

func sortedKeys(m map[uint64]*segment) []uint64 {
	keys := make([]uint64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// releaseCached frees every non-expandable segment with no active block.
func (a *allocator) releaseCached() {
	for _, s := range slices.Clone(a.segs) {
		if s.expandable || len(s.blocks) != 1 || s.blocks[0].active {
			continue
		}
		a.removeSeg(s)
		a.reserved -= s.size
		a.emit(snapshot.TraceEntry{Action: snapshot.ActionSegmentFree, Addr: s.addr, Size: s.size, Stream: s.stream, Frames: snapshot.EmptyStack})
	}
	a.unmapTails()
}

func (a *allocator) insertSeg(s *segment) {
	i, _ := slices.BinarySearchFunc(a.segs, s.addr, func(x *segment, addr uint64) int {
		switch {
		case x.addr < addr:
			return -1
		case x.addr > addr:
			return 1
		}
		return 0
	})
	a.segs = slices.Insert(a.segs, i, s)
}

func (a *allocator) removeSeg(s *segment) {
	a.segs = slices.DeleteFunc(a.segs, func(x *segment) bool { return x == s })
}

// split carves size bytes off the front of free block b when the rest is
// worth keeping (CUDACachingAllocator's shouldSplit).
func (a *allocator) split(b *block, size int64, small bool) {
	rest := b.size - size
	if (small && rest < minBlock) || (!small && rest <= smallSize) {
		return
	}
	s := b.seg
	i := slices.Index(s.blocks, b)
	nb := &block{addr: b.addr + uint64(size), size: rest, seg: s, stack: snapshot.EmptyStack}
	b.size = size
	s.blocks = slices.Insert(s.blocks, i+1, nb)
}

// free records free_requested and, unless delayed, free_completed, and
// returns the block to the pool.
func (a *allocator) free(b *block, stack snapshot.StackID, delayed bool) {
	a.emit(snapshot.TraceEntry{Action: snapshot.ActionFreeRequested, Addr: b.addr, Size: b.requested, Stream: b.seg.stream, Frames: stack})
	b.pending = true
	if !delayed {
		a.complete(b, stack)
	}
}

// complete records free_completed and merges the block with free
// neighbours.
func (a *allocator) complete(b *block, stack snapshot.StackID) {
	a.emit(snapshot.TraceEntry{Action: snapshot.ActionFreeCompleted, Addr: b.addr, Size: b.requested, Stream: b.seg.stream, Frames: stack})
	b.active = false
	b.pending = false
	s := b.seg
	i := slices.Index(s.blocks, b)
	if i+1 < len(s.blocks) && !s.blocks[i+1].active {
		b.size += s.blocks[i+1].size
		s.blocks = slices.Delete(s.blocks, i+1, i+2)
	}
	if i > 0 && !s.blocks[i-1].active {
		s.blocks[i-1].size += b.size
		s.blocks = slices.Delete(s.blocks, i, i+1)
	}
}

// oom records an oom entry for a failed request.
func (a *allocator) oom(requested int64, stream uint64, stack snapshot.StackID) {
	a.emit(snapshot.TraceEntry{Action: snapshot.ActionOOM, Size: requested, Stream: stream, DeviceFree: a.capacity - a.reserved, Frames: stack})
}

// segments returns the allocator state as snapshot segments.
func (a *allocator) segments() []snapshot.Segment {
	out := make([]snapshot.Segment, 0, len(a.segs))
	for _, s := range a.segs {
		seg := snapshot.Segment{
			Device: a.device, Address: s.addr, TotalSize: s.size, Stream: s.stream,
			SegmentType: "large", PoolID: s.pool, HasPoolID: true, IsExpandable: s.expandable, Frames: s.stack,
		}
		if s.small {
			seg.SegmentType = "small"
		}
		for _, b := range s.blocks {
			sb := snapshot.Block{Address: b.addr, Size: b.size, RequestedSize: b.requested, State: snapshot.StateInactive, Frames: snapshot.EmptyStack}
			if b.active {
				sb.State = snapshot.StateActiveAllocated
				sb.Frames = b.stack
				seg.ActiveSize += b.size
				seg.RequestedSize += b.requested
				if b.pending {
					sb.State = snapshot.StateActivePendingFree
				} else {
					seg.AllocatedSize += b.size
				}
			} else if b.requested == 0 {
				sb.RequestedSize = b.size
			}
			seg.Blocks = append(seg.Blocks, sb)
		}
		out = append(out, seg)
	}
	return out
}
