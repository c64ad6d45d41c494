package snapshot

import "unsafe"

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
	key := unsafe.String((*byte)(unsafe.Pointer(&ids[0])), len(ids)*4)
	if id, ok := in.stacks[key]; ok {
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
	return id
}
