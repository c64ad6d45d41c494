package analysis

import "oomscope/snapshot"

// source is everything the diagnosis (steps, phases, leaks, anomalies,
// fixes) reads of one replayed device. The diagnosis goes through these
// accessors only, never through the engine's fields, so that the engine can
// store the trace and the live ranges as it likes: pointing the accessors
// at another representation is the whole port.
type source struct {
	d  *Device
	tr snapshot.Trace // d.Trace, one indirection nearer
	// sizes is each allocation's size (allocTable.sizes).
	sizes []int64
	// info is one byte per stack of what the diagnosis reads per entry
	// (stackInfo), so that the scans read a dense array, not the table's
	// paged columns. Where a stack may be inside Optimizer.zero_grad it is
	// built in one sequential pass over the stack table (zeroGrad: one
	// is); elsewhere each stack's byte is made the first time it is read
	// (fillInfo): the diagnosis then reads the stacks of the allocations
	// and a few frees, a third of the stacks of a file whose every entry
	// has its own. Only the goroutine that finds the steps makes bytes
	// while other parts of the report run.
	info     []stackInfo
	zeroGrad bool
	// eager: info was built in one pass, and backward says whether some
	// stack's phase is backward (else anyBackwardStack finds out).
	eager, backward bool
	// legacyFree: the trace has torch 1.x "free" entries (KindOther).
	legacyFree bool
}

// stackInfo packs a stack's phase (bits 0-3), whether it has frames, is
// inside Optimizer.zero_grad, or allocates loss-sized tensors, and whether
// the byte is made (infoKnown: 0 is a byte not made yet).
type stackInfo uint8

const (
	infoFrames stackInfo = 1 << (4 + iota)
	infoZeroGrad
	infoLoss
	infoKnown
)

// newSource returns the diagnosis's view of device d, once d's early
// diagnosis (if any) has taken the allocations' sizes from the table on
// its goroutine (tests ask for a source while it may run).
func newSource(d *Device) source {
	if e := d.early; e != nil {
		e.wait()
	}
	return newSourceSized(d, nil)
}

// newSourceSized is newSource with the allocations' sizes
// (allocTable.sizes) when the caller has them; nil: it finds them.
func newSourceSized(d *Device, sizes []int64) source {
	if sizes == nil {
		sizes = d.allocs.takeSizes()
	}
	return newSourceFree(d, sizes, d.Actions["free"] > 0)
}

// newSourceFree is newSourceSized with legacyFree given: it reads nothing
// that the replay writes (sizes nil: the source has no sizes yet), so the
// steps' scan can begin during the replay (earlyScan).
func newSourceFree(d *Device, sizes []int64, legacyFree bool) source {
	st := &d.a.Snap.Stacks
	// The bytes classify made of the allocations' stacks, if it did
	// (taken once: a later source makes its own).
	info := d.info
	d.info = nil
	if len(info) != st.Len() {
		info = make([]stackInfo, st.Len())
	}
	src := source{d: d, tr: d.Trace, sizes: sizes, info: info, legacyFree: legacyFree}
	if frames := d.a.Snap.Frames; lazyInfo(frames, len(info)) && !mayZeroGrad(frames) {
		// No stack is inside zero_grad: the bytes are made when read.
		return src
	}
	zeroGrad, backward := false, false
	inBlocks(len(info), func(blo, bhi int) {
		for id := blo; id < bhi; id++ {
			sum := st.Summary(snapshot.StackID(id))
			if summaryPhase(sum) == phaseBackward {
				backward = true
			}
			if summaryZeroGrad(sum) {
				zeroGrad = true
			}
			info[id] = infoOf(sum, st.Depth(snapshot.StackID(id)))
		}
	})
	src.zeroGrad, src.eager, src.backward = zeroGrad, true, backward
	return src
}

// lazyInfoAlways makes newSource look at the frames whatever their number
// (tests).
var lazyInfoAlways = false

// lazyInfo reports whether a source over frames and stacks stacks makes
// its stack bytes when read, if no frame is inside zero_grad
// (mayZeroGrad): where the frames are far fewer than the stacks, the
// stacks are many and most are never read.
func lazyInfo(frames []snapshot.Frame, stacks int) bool {
	return len(frames) <= stacks/8 || lazyInfoAlways
}

// mayZeroGrad reports whether a stack over frames may be inside
// Optimizer.zero_grad: a stack's summary says so when one of its frames
// does (flagsOf), so no stack is when no frame is. newSource asks when the
// frames are far fewer than the stacks.
func mayZeroGrad(frames []snapshot.Frame) bool {
	for i := range frames {
		if flagsOf(&frames[i])&fZeroGrad != 0 {
			return true
		}
	}
	return false
}

// stackInfo returns the byte of stack id (0 for NoStack: no frames, phase
// unknown).
func (s *source) stackInfo(id snapshot.StackID) stackInfo {
	if uint(id) < uint(len(s.info)) {
		if v := s.info[id]; v&infoKnown != 0 {
			return v
		}
		return s.fillInfo(id)
	}
	return 0
}

// fillInfo makes and returns the byte of stack id, a stack of the table,
// from its summary and depth.
func (s *source) fillInfo(id snapshot.StackID) stackInfo {
	st := &s.d.a.Snap.Stacks
	v := infoOf(st.Summary(id), st.Depth(id))
	s.info[id] = v
	return v
}

// infoOf is the byte (stackInfo) of a stack of summary sum and depth
// frames.
func infoOf(sum snapshot.StackSummary, depth int) stackInfo {
	v := stackInfo(summaryPhase(sum))&15 | infoKnown
	if depth > 0 {
		v |= infoFrames
	}
	if summaryZeroGrad(sum) {
		v |= infoZeroGrad
	}
	if summaryLoss(sum) {
		v |= infoLoss
	}
	return v
}

// entries is the trace length.
func (s *source) entries() int { return s.tr.Len() }

// timeUS reads trace entry i's time_us.
func (s *source) timeUS(i int) int64 { return s.tr.TimeUS(i) }

// numAllocs is the number of allocations; allocOrigin says where
// allocation k's live range comes from.
func (s *source) numAllocs() int           { return s.d.allocs.len() }
func (s *source) allocOrigin(k int) Origin { return s.d.allocs.origin(k) }

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

// kind reads what trace entry i does (the scan reads whole pages through
// chunk; kind, timeUS and stack serve the few entries read one by one).
// It is small enough to inline: it returns kindOther for any action torch
// 2 does not write; where legacyFree is set, the caller asks otherKind
// about those.
func (s *source) kind(i int) entryKind { return kindOf[s.tr.Kind(i)] }

// otherKind is the kind of an entry kind called kindOther: a torch 1.x
// "free" is a kindFreeDone.
func (s *source) otherKind(i int) entryKind {
	if s.tr.Action(i) == "free" {
		return kindFreeDone
	}
	return kindOther
}

// entryChunk is a run of consecutive entries as slices (see
// snapshot.Trace.Chunk): the scan reads the trace page by page, not by a
// column lookup per entry and field. codes are action codes: codeKind
// maps them to kinds.
type entryChunk struct {
	codes  []uint8
	sizes  []int64
	stacks []snapshot.StackID
}

// chunk returns entries i, i+1, … (at least one, while i < entries()),
// their sizes decoded into *buf's array where the page is narrow
// (snapshot.Values.Plain: the scan's loop reads a plain slice), valid
// until the next call with buf.
func (s *source) chunk(i int, buf *[]int64) entryChunk {
	c := s.tr.Chunk(i)
	return entryChunk{codes: c.Actions, sizes: c.Sizes.Plain(buf), stacks: c.Stacks}
}

// kindOfCode maps every action code to its kind (kindOther from
// snapshot.KindOther on, as kind does).
var kindOfCode = func() (t [256]entryKind) {
	for c := range t {
		t[c] = kindOf[min(snapshot.ActionKind(c), snapshot.KindOther)]
	}
	return t
}()

// kindAt is kind with otherKind's answer.
func (s *source) kindAt(i int) entryKind {
	if k := s.kind(i); k != kindOther || !s.legacyFree {
		return k
	}
	return s.otherKind(i)
}

// stack reads trace entry i's stack.
func (s *source) stack(i int) snapshot.StackID { return s.tr.Frames(i) }

// replayEnd is the allocated memory after the last entry as the replay
// counted it, and replayBadSizes the sizes it counted as 0 (impossible
// ones): with them, the scan can tell whether summing the entries' sizes
// follows the replay.
func (s *source) replayEnd() int64    { return s.d.initialAllocated + s.d.endRel }
func (s *source) replayBadSizes() int { return s.d.badSizes }

// endsOnRequested reports whether live ranges end at free_requested (the
// trace has no free_completed: skip_actions), as the replay decides.
func (s *source) endsOnRequested() bool {
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
func (s *source) allocSpan(k int) (start, end, freeReq int32) {
	t := &s.d.allocs
	return t.start[k], t.end[k], t.freeReq[k]
}

// allocColumns returns the allocations' columns, indexed by allocation
// number: their alloc, free_completed and free_requested entries (as
// allocSpan), stacks and sizes, for the loops over every allocation to
// keep in locals (each accessor call loads them again through the device).
func (s *source) allocColumns() (start, end, freeReq []int32, stacks []snapshot.StackID, sizes []int64) {
	t := &s.d.allocs
	n := len(t.start)
	return t.start, t.end[:n], t.freeReq[:n], t.stacks[:n], s.sizes[:n]
}

// allocSize returns allocation k's requested bytes.
func (s *source) allocSize(k int) int64 { return s.sizes[k] }

// allocSite, allocRule and allocCategory return allocation k's site,
// classification rule and category.
func (s *source) allocSite(k int) int32        { return s.d.allocs.site[k] }
func (s *source) allocRule(k int) Rule         { return s.d.allocs.rule[k] }
func (s *source) allocCategory(k int) Category { return s.d.allocs.cat[k] }

// allocStack returns allocation k's stack.
func (s *source) allocStack(k int) snapshot.StackID { return s.d.allocs.stack(k) }

// live returns allocation k's live range.
func (s *source) live(k int) liveRange {
	t := &s.d.allocs
	b, _ := t.block(k)
	return liveRange{start: t.start[k], end: t.end[k], freeReq: t.freeReq[k], size: s.sizes[k], stack: t.stack(k),
		site: t.site[k], cat: t.cat[k], rule: t.rule[k], origin: t.origin(k), pending: b.pending}
}

// stackFrames returns the frame ids of a stack, innermost first (nil for
// none or for a lazy stack that cannot be read again), and frame returns one
// frame; numFrames bounds the ids. Stacks may be lazy (read again from the
// file): read their frames only for the few stacks shown, never per entry.
func (s *source) stackFrames(id snapshot.StackID) snapshot.Stack {
	st, err := s.d.a.Snap.Stacks.Frames(id)
	if err != nil {
		return nil
	}
	return st
}
func (s *source) frame(id snapshot.FrameID) *snapshot.Frame { return &s.d.a.Snap.Frames[id] }
func (s *source) numFrames() int                            { return len(s.d.a.Snap.Frames) }

// numStacks bounds the stack ids, for per-stack caches.
func (s *source) numStacks() int { return s.d.a.Snap.Stacks.Len() }

// anyCppFrame reports whether the snapshot holds any C++ frame (it was
// recorded with stacks="all").
func (s *source) anyCppFrame() bool {
	for i := range s.d.a.Snap.Frames {
		if !isPython(&s.d.a.Snap.Frames[i]) {
			return true
		}
	}
	return false
}

// hasFrames reports whether a stack has any frame.
func (s *source) hasFrames(id snapshot.StackID) bool { return s.stackInfo(id)&infoFrames != 0 }

// stackZeroGrad reports whether a stack is inside Optimizer.zero_grad, and
// stackLoss whether it allocates loss-sized tensors (a cross-entropy,
// log-softmax, NLL loss or lm_head frame): both from the stack summary.
func (s *source) stackZeroGrad(id snapshot.StackID) bool { return s.stackInfo(id)&infoZeroGrad != 0 }

// anyBackwardStack reports whether any stack's phase is backward (where
// info is made when read, by a pass over the summaries: the question is
// rare, see firstPartial).
func (s *source) anyBackwardStack() bool {
	if s.eager {
		return s.backward
	}
	st := &s.d.a.Snap.Stacks
	for id := range st.Len() {
		if summaryPhase(st.Summary(snapshot.StackID(id))) == phaseBackward {
			return true
		}
	}
	return false
}

// anyZeroGrad reports whether any stack is inside Optimizer.zero_grad.
func (s *source) anyZeroGrad() bool                  { return s.zeroGrad }
func (s *source) stackLoss(id snapshot.StackID) bool { return s.stackInfo(id)&infoLoss != 0 }

// stackPhase is the phase a stack's frames point to (the engine's stack
// rule, docs/snapshot.md#phases-from-stacks).
func (s *source) stackPhase(id snapshot.StackID) phase { return phase(s.stackInfo(id) & 15) }

// displayStack renders a stack for display (see DisplayStack).
func (s *source) displayStack(id snapshot.StackID) []string {
	st := DisplayStack(s.d.a.Snap, id)
	if st == nil {
		st = []string{}
	}
	return st
}

// numSites bounds the site indices.
func (s *source) numSites() int { return len(s.d.a.Sites) }

// site returns allocation site idx.
func (s *source) site(idx int32) Site { return s.d.a.Sites[idx] }

// annotations returns this device's record_function markers.
func (s *source) annotations() []snapshot.Annotation {
	var out []snapshot.Annotation
	for _, an := range s.d.a.Snap.ExternalAnnotations {
		if an.Device == s.d.ID {
			out = append(out, an)
		}
	}
	return out
}

// expandable reports whether the allocator ran with expandable segments.
func (s *source) expandable(r *DeviceReport) bool {
	if st := s.d.a.Snap.AllocatorSettings; st != nil && st.ExpandableSegments {
		return true
	}
	return r.Expandable
}
