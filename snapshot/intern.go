package snapshot

import (
	"slices"
	"unsafe"
)

// stackChunk is how many FrameIDs the interner allocates at once for stacks.
const stackChunk = 1 << 14

// interner builds Snapshot.Frames and Snapshot.Stacks, storing each distinct
// frame and each distinct frame list once. Both decoders use it, so equal
// input yields equal IDs.
type interner struct {
	snap   *Snapshot
	frames map[Frame]FrameID
	stacks map[string]StackID
	// backing is the current chunk that stacks are carved from.
	backing []FrameID
	// recent is a small direct-mapped cache in front of stacks.
	recent [64]StackID
}

func newInterner(s *Snapshot) *interner {
	in := &interner{
		snap:   s,
		frames: make(map[Frame]FrameID),
		stacks: make(map[string]StackID),
	}
	s.Frames = s.Frames[:0]
	s.Stacks = append(s.Stacks[:0], Stack{})
	in.stacks[""] = EmptyStack
	return in
}

// frame returns the ID of f, adding it to the table the first time.
func (in *interner) frame(f Frame) FrameID {
	if id, ok := in.frames[f]; ok {
		return id
	}
	id := FrameID(len(in.snap.Frames))
	in.snap.Frames = append(in.snap.Frames, f)
	in.frames[f] = id
	return id
}

// stack returns the ID of the frame list ids, adding a copy of it to the
// table the first time. ids is not retained.
func (in *interner) stack(ids []FrameID) StackID {
	if len(ids) == 0 {
		return EmptyStack
	}
	slot := (uint(len(ids)) ^ uint(ids[0])*31 ^ uint(ids[len(ids)-1])*17 ^ uint(ids[len(ids)/2])*7) & 63
	if id := in.recent[slot]; id > 0 && slices.Equal(in.snap.Stacks[id], ids) {
		return id
	}
	key := unsafe.String((*byte)(unsafe.Pointer(&ids[0])), len(ids)*4)
	if id, ok := in.stacks[key]; ok {
		in.recent[slot] = id
		return id
	}
	if cap(in.backing)-len(in.backing) < len(ids) {
		in.backing = make([]FrameID, 0, max(stackChunk, len(ids)))
	}
	start := len(in.backing)
	in.backing = append(in.backing, ids...)
	st := Stack(in.backing[start:len(in.backing):len(in.backing)])
	id := StackID(len(in.snap.Stacks))
	in.snap.Stacks = append(in.snap.Stacks, st)
	in.stacks[unsafe.String((*byte)(unsafe.Pointer(&st[0])), len(st)*4)] = id
	in.recent[slot] = id
	return id
}

// canonicalize renumbers s.Frames and s.Stacks in order of first use
// (segments with their blocks, block history and segment frames, then
// device traces, host segments, host traces) and drops entries nothing
// refers to, so that IDs do not depend on the order a decoder met them.
func canonicalize(s *Snapshot) {
	stackMap := make([]StackID, len(s.Stacks))
	for i := range stackMap {
		stackMap[i] = NoStack
	}
	frameMap := make([]FrameID, len(s.Frames))
	for i := range frameMap {
		frameMap[i] = -1
	}
	var frames []Frame
	stacks := []Stack{{}}
	stackMap[EmptyStack] = EmptyStack
	total := 0
	for _, st := range s.Stacks {
		total += len(st)
	}
	backing := make([]FrameID, 0, total)
	remap := func(id *StackID) {
		if *id < 0 || int(*id) >= len(stackMap) {
			return
		}
		if n := stackMap[*id]; n != NoStack {
			*id = n
			return
		}
		start := len(backing)
		for _, f := range s.Stacks[*id] {
			n := frameMap[f]
			if n < 0 {
				n = FrameID(len(frames))
				frames = append(frames, s.Frames[f])
				frameMap[f] = n
			}
			backing = append(backing, n)
		}
		n := StackID(len(stacks))
		stacks = append(stacks, backing[start:len(backing):len(backing)])
		stackMap[*id] = n
		*id = n
	}
	segs := func(list []Segment) {
		for i := range list {
			g := &list[i]
			for j := range g.Blocks {
				b := &g.Blocks[j]
				remap(&b.Frames)
				for k := range b.History {
					remap(&b.History[k].Frames)
				}
			}
			remap(&g.Frames)
		}
	}
	traces := func(list [][]TraceEntry) {
		for _, tr := range list {
			for i := range tr {
				remap(&tr[i].Frames)
			}
		}
	}
	segs(s.Segments)
	traces(s.DeviceTraces)
	segs(s.HostSegments)
	traces(s.HostTraces)
	if frames == nil {
		frames = []Frame{}
	}
	s.Frames, s.Stacks = frames, stacks
}
