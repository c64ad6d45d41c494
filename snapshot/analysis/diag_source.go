package analysis

import "oomscope/snapshot"

// source is everything the diagnosis (steps, phases, leaks, anomalies,
// fixes) reads of one replayed device. The diagnosis goes through these
// accessors only, never through the engine's fields, so that the engine can
// store the trace and the live ranges as it likes: pointing the accessors
// at another representation is the whole port.
type source struct{ d *Device }

// entries is the trace length.
func (s source) entries() int { return len(s.d.Trace) }

// timeUS reads trace entry i's time_us.
func (s source) timeUS(i int) int64 { return s.d.Trace[i].TimeUS }

// numAllocs is the number of allocations; allocOrigin says where
// allocation k's live range comes from.
func (s source) numAllocs() int           { return len(s.d.Allocs) }
func (s source) allocOrigin(k int) Origin { return s.d.Allocs[k].Origin }

// entryKind is what a trace entry does, as the diagnosis needs it.
type entryKind uint8

const (
	kindOther    entryKind = iota
	kindAlloc              // alloc
	kindFreeReq            // free_requested
	kindFreeDone           // free_completed (or torch 1.x "free")
	kindGrowth             // segment_alloc or segment_map: room made for the next alloc
)

// entry reads trace entry i: what it does, its size, time_us and stack.
func (s source) entry(i int) (entryKind, int64, int64, snapshot.StackID) {
	e := &s.d.Trace[i]
	k := kindOther
	// By length first: one comparison of a few bytes per entry.
	switch a := e.Action; len(a) {
	case len(snapshot.ActionAlloc):
		if a == snapshot.ActionAlloc {
			k = kindAlloc
		}
	case len(snapshot.ActionFreeCompleted): // = len(ActionFreeRequested)
		switch a {
		case snapshot.ActionFreeCompleted:
			k = kindFreeDone
		case snapshot.ActionFreeRequested:
			k = kindFreeReq
		}
	case len("free"):
		if a == "free" {
			k = kindFreeDone
		}
	case len(snapshot.ActionSegmentAlloc):
		if a == snapshot.ActionSegmentAlloc {
			k = kindGrowth
		}
	case len(snapshot.ActionSegmentMap):
		if a == snapshot.ActionSegmentMap {
			k = kindGrowth
		}
	}
	return k, e.Size, e.TimeUS, e.Frames
}

// endsOnRequested reports whether live ranges end at free_requested (the
// trace has no free_completed: skip_actions), as the replay decides.
func (s source) endsOnRequested() bool {
	nComp := s.d.Actions[string(snapshot.ActionFreeCompleted)] + s.d.Actions["free"]
	return nComp == 0 && s.d.Actions[string(snapshot.ActionFreeRequested)] > s.d.pendingBlocks()
}

// liveRange is one allocation's live range as the diagnosis sees it.
type liveRange struct {
	// start is its alloc entry (-1: before the trace), end its
	// free_completed entry (the trace length: alive at the end), freeReq
	// its free_requested entry (-1: none).
	start, end, freeReq int32
	size                int64
	stack               snapshot.StackID
	site                int32
	cat                 Category
	rule                Rule
	origin              Origin
	// pending: the segments show it as active_pending_free.
	pending bool
}

// allocSpan returns allocation k's alloc, free_completed and
// free_requested entries (see liveRange), the cheap part of live.
func (s source) allocSpan(k int) (start, end, freeReq int32) {
	a := &s.d.Allocs[k]
	return a.Start, a.End, a.FreeRequested
}

// allocSize returns allocation k's requested bytes.
func (s source) allocSize(k int) int64 { return s.d.Allocs[k].Size }

// allocStack returns allocation k's stack.
func (s source) allocStack(k int) snapshot.StackID { return s.d.Allocs[k].Stack }

// live returns allocation k's live range.
func (s source) live(k int) liveRange {
	a := &s.d.Allocs[k]
	return liveRange{start: a.Start, end: a.End, freeReq: a.FreeRequested, size: a.Size, stack: a.Stack,
		site: a.Site, cat: a.Category, rule: a.Rule, origin: a.Origin, pending: a.Pending}
}

// stackFrames returns the frame ids of a stack, innermost first (nil for
// none), and frame returns one frame; numFrames bounds the ids.
func (s source) stackFrames(id snapshot.StackID) snapshot.Stack { return s.d.a.Snap.Stack(id) }
func (s source) frame(id snapshot.FrameID) *snapshot.Frame      { return &s.d.a.Snap.Frames[id] }
func (s source) numFrames() int                                 { return len(s.d.a.Snap.Frames) }

// numStacks bounds the stack ids, for per-stack caches.
func (s source) numStacks() int { return len(s.d.a.Snap.Stacks) }

// anyCppFrame reports whether the snapshot holds any C++ frame (it was
// recorded with stacks="all").
func (s source) anyCppFrame() bool {
	for i := range s.d.a.Snap.Frames {
		if !isPython(&s.d.a.Snap.Frames[i]) {
			return true
		}
	}
	return false
}

// stackLen is the number of frames of a stack (0 for none).
func (s source) stackLen(id snapshot.StackID) int { return len(s.d.a.Snap.Stack(id)) }

// stackPhase is the phase a stack's frames point to (the engine's stack
// rule, notes §6), cached per stack.
func (s source) stackPhase(id snapshot.StackID) phase { return s.d.a.phaseOf(id) }

// displayStack renders a stack for display (see DisplayStack).
func (s source) displayStack(id snapshot.StackID) []string {
	st := DisplayStack(s.d.a.Snap, id)
	if st == nil {
		st = []string{}
	}
	return st
}

// site returns allocation site idx.
func (s source) site(idx int32) Site { return s.d.a.Sites[idx] }

// annotations returns this device's record_function markers.
func (s source) annotations() []snapshot.Annotation {
	var out []snapshot.Annotation
	for _, an := range s.d.a.Snap.ExternalAnnotations {
		if an.Device == s.d.ID {
			out = append(out, an)
		}
	}
	return out
}

// expandable reports whether the allocator ran with expandable segments.
func (s source) expandable(r *DeviceReport) bool {
	if st := s.d.a.Snap.AllocatorSettings; st != nil && st.ExpandableSegments {
		return true
	}
	return r.Expandable
}
