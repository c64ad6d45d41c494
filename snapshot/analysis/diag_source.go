package analysis

import "oomscope/snapshot"

// source is everything the diagnosis (steps, phases, leaks, anomalies,
// fixes) reads of one replayed device. The diagnosis goes through these
// accessors only, never through the engine's fields, so that the engine can
// store the trace and the live ranges as it likes: pointing the accessors
// at another representation is the whole port.
type source struct{ d *Device }

// entries is the trace length.
func (s source) entries() int { return s.d.Trace.Len() }

// timeUS reads trace entry i's time_us.
func (s source) timeUS(i int) int64 { return s.d.Trace.TimeUS(i) }

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

// kindOf maps the engine's action kinds to the diagnosis's.
var kindOf = [snapshot.KindOther + 1]entryKind{
	snapshot.KindAlloc:         kindAlloc,
	snapshot.KindFreeRequested: kindFreeReq,
	snapshot.KindFreeCompleted: kindFreeDone,
	snapshot.KindSegmentAlloc:  kindGrowth,
	snapshot.KindSegmentMap:    kindGrowth,
}

// entry reads trace entry i: what it does, its size, time_us and stack.
func (s source) entry(i int) (entryKind, int64, int64, snapshot.StackID) {
	t := &s.d.Trace
	ak := t.Kind(i)
	k := kindOf[ak]
	if ak == snapshot.KindOther && t.Action(i) == "free" {
		k = kindFreeDone // torch 1.x
	}
	return k, t.Size(i), t.TimeUS(i), t.Frames(i)
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
// none or for a lazy stack that cannot be read again), and frame returns one
// frame; numFrames bounds the ids. Stacks may be lazy (read again from the
// file): read their frames only for the few stacks shown, never per entry.
func (s source) stackFrames(id snapshot.StackID) snapshot.Stack {
	st, err := s.d.a.Snap.Stacks.Frames(id)
	if err != nil {
		return nil
	}
	return st
}
func (s source) frame(id snapshot.FrameID) *snapshot.Frame { return &s.d.a.Snap.Frames[id] }
func (s source) numFrames() int                            { return len(s.d.a.Snap.Frames) }

// numStacks bounds the stack ids, for per-stack caches.
func (s source) numStacks() int { return s.d.a.Snap.Stacks.Len() }

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
func (s source) stackLen(id snapshot.StackID) int { return s.d.a.Snap.Stacks.Depth(id) }

// stackZeroGrad reports whether a stack is inside Optimizer.zero_grad, and
// stackLoss whether it allocates loss-sized tensors (a cross-entropy,
// log-softmax, NLL loss or lm_head frame): both from the stack summary.
func (s source) stackZeroGrad(id snapshot.StackID) bool {
	return summaryZeroGrad(s.d.a.Snap.Stacks.Summary(id))
}
func (s source) stackLoss(id snapshot.StackID) bool {
	return summaryLoss(s.d.a.Snap.Stacks.Summary(id))
}

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
