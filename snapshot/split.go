package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Split lets Decode hand a later stretch of the trace to a second decoder
// (DecodePart, run elsewhere: a goroutine, another browser worker) and take
// its result when it reaches that stretch (docs/snapshot.md#split-decoding).
type Split struct {
	// At is where the part should start: its first trace entry at or after At.
	At int64
	// Start returns the part's first byte once the second decoder knows it
	// (it waits); an error means: decode on alone.
	Start func() (int64, error)
	// Part returns the decoded part (it waits); an error or a part that does
	// not verify means: decode on alone. The result is the same either way.
	Part func() (*Part, error)
}

// splitMin is the smallest input that Decode splits by itself.
var splitMin int64 = 48 << 20

// SplitAt returns where a second decoder should start on a file of size
// bytes (-1: too small to be worth it).
func SplitAt(size int64) int64 {
	if size < splitMin {
		return -1
	}
	// The second decoder also decodes the file's first bytes (a few MiB)
	// and the first one merges what the second made, but the second also
	// has less to read on a shared core (measured on the distinct family,
	// two cores: both are done at about the same time).
	return size / 2
}

// Errors of the split decode, never returned by Decode: errPartRef stops a
// part that meets what it cannot decode alone (DecodePart returns it
// wrapped), errPartBatch a part's VM when it closes a batch of its trace
// list, errPartPrefix at the end of its prefix, errSplitRestart a decoder
// that took a part and then met one of its memo ids (Decode starts again
// without a split).
var (
	errPartRef      = errors.New("the stretch refers to what the part cannot know")
	errPartBatch    = errors.New("part: batch closed")
	errPartPrefix   = errors.New("part: prefix done")
	errSplitRestart = errors.New("split: restart")
)

// splitInfo says what a split decode did (Options.splitInfo: tests and
// measurements).
type splitInfo struct {
	// taken is set when Decode took a part; restarted when it then had to
	// decode again without one; why says why a split was not taken.
	taken, restarted bool
	why              string
	// Timings (nanoseconds since the decode started): when the main
	// decoder reached At and the start, when it had the part, when the
	// part's decoder had its prefix and the start, when it was done.
	atAt, atStart, gotPart, merged, partPrefix, partStart, partDone int64
	t0                                                              time.Time
}

// since returns the time since the decode started.
func (i *splitInfo) since() int64 { return int64(time.Since(i.t0)) }

// splitHook is what stops a VM at in.stopAt (vm.stopped).
type splitHook interface{ stop(v *vm) error }

func (v *vm) stopped() error { return v.hook.stop(v) }

// setStop makes the VM stop at offset at (math.MaxInt64: nowhere).
func (v *vm) setStop(at int64) {
	v.in.stopAt = at
	v.in.nextStep = min(v.in.progAt, at)
}

// partBatch is called when a batch of the part's trace list closes.
func (v *vm) partBatch() error { return errPartBatch }

// Part is a decoded stretch of a trace. Its fields are unexported.
type Part struct {
	// The file and the stretch [start, end); at is where it was asked for.
	size, at, start, end int64
	// seed is the stack table's hash seed (Stacks.seed64): the part's
	// stack hashes are taken only with the same.
	seed uint64
	// The decoder's state at the end of the prefix (a MARK of the trace
	// list): memo length and fingerprint, table sizes, VM stack and marks.
	memoN                                    int64
	memoHash, stacksHash                     uint64
	stacksN, framesN, rowsN, streamsN, names int64
	stack                                    []val
	marks                                    []int64
	// head and tail are the input's bytes at start and at end.
	head, tail []byte
	// What the stretch adds: memo ids (all by MEMOIZE), the last FRAME's
	// end and offset, budget, frame lists met.
	memoAdd            int64
	frameEnd, frameOff int64
	spent              int64
	refs               int64
	// The rows are rows[r0:] of a store (stream indices from streamsN on
	// index streams, unknown actions from names on newNames, stack IDs
	// from stacksN on are st's from s0 on).
	rows     *entryStore
	r0       int
	streams  []uint64
	newNames []Action
	st       *Stacks
	s0       int
	// wire, instead of rows and st, holds an unmarshaled part's.
	wire *partWire
	// used is set once a decoder took the part (its pages are gone).
	used bool
}

// nRows and nStacks are the part's rows and new stacks.
func (p *Part) nRows() int {
	if p.wire != nil {
		return p.wire.n
	}
	return p.rows.n - p.r0
}

func (p *Part) nStacks() int {
	if p.wire != nil {
		return p.wire.ns
	}
	return p.st.count - p.s0
}

// Bytes returns the number of input bytes the part covers.
func (p *Part) Bytes() int64 {
	if p == nil {
		return 0
	}
	return p.end - p.start
}

// splitSeed64 is the stack hash seed of both decoders of a Split in
// WebAssembly (another worker's table cannot share a random seed).
func splitSeed64(size, at int64) uint64 {
	h := uint64(size)*0x9e3779b97f4a7c15 ^ uint64(at)*0xc2b2ae3d27d4eb4f
	return xxAvalanche(h + 0x165667b19e3779f9)
}

// memoPrint fingerprints the memo's first n slots.
func (v *vm) memoPrint(n int64) uint64 {
	h := uint64(n) + xxP5
	for id := range int(n) {
		u := v.memo.peek(id)
		if vkind(u&15) == kWide {
			x := v.memoWide[int64(id)]
			h = xxStep(h, FrameID(x.k)) ^ uint64(x.n)
		}
		h = xxStep(h, FrameID(u))
	}
	return xxAvalanche(h)
}

// stacksPrint fingerprints the first n stacks: hashes, laziness, places
// (two decoders with other options may number or keep them otherwise).
func (t *Stacks) stacksPrint(n int) uint64 {
	h := uint64(n) + xxP5
	for id := range min(n, t.count) {
		h = xxStep(xxStep(h, FrameID(t.hashes.at(id))), FrameID(t.hashes.at(id)>>32))
		h = xxStep(xxStep(h, FrameID(t.at.at(id))), FrameID(t.at.at(id)>>32))
	}
	return xxAvalanche(h)
}

// partState drives the part's VM (DecodePart).
type partState struct {
	target, giveUp int64
	running        bool
	stackN         int
	// memoN is the prefix's memo length; dropped counts the part's memo
	// ids let go (never read: see DecodePart).
	memoN, dropped int
}

func (ps *partState) stop(v *vm) error {
	abs := v.in.abs()
	if ps.running {
		if len(v.stack) < ps.stackN {
			return errPartRef
		}
		ps.dropMemo(v)
		v.setStop(abs + 1<<20)
		return nil
	}
	if abs > ps.giveUp {
		return fmt.Errorf("no trace batch starts between %d and %d", ps.target, ps.giveUp)
	}
	if v.in.fill(1) && v.in.data[v.in.pos] == opMark && len(v.stack) > 0 && !v.memoRewritten && v.memoFar == nil {
		if t := v.stack[len(v.stack)-1]; t.k == kObj && v.objs[t.n].kind == oEntries && int(v.ranges[v.objs[t.n].idx].end) == v.rows.n {
			return errPartPrefix
		}
	}
	v.setStop(abs + 1) // one opcode at a time up to the next batch
	return nil
}

// dropMemo lets the part's memo ids go, keeping their count: nothing
// reads them (a reference aborts the part), and the memo is the part's
// largest table after its rows and stacks.
func (ps *partState) dropMemo(v *vm) {
	if n := v.memo.len(); n > ps.memoN+pageSize {
		ps.dropped += n - ps.memoN
		clear(v.memo.c.pages[(ps.memoN+pageSize-1)>>pageBits:]) // the pages let go
		v.memo.c.truncate(ps.memoN)
		v.memo.n = ps.memoN
	}
}

// partPrefix is how far the part decodes the file's first bytes at least,
// so that the frames and strings the entries refer to are known.
var partPrefix int64 = 4 << 20

// DecodePart decodes, from src (size bytes), the trace entries from the first
// one at or after at to the end of that trace list, after decoding the file's
// first bytes for what the entries refer to. started is called with the part's
// first byte as soon as it is known. opt must be the Options the main decoder
// uses (Fold, MaxMemory; Progress may cancel).
func DecodePart(src io.ReaderAt, size, at int64, opt *Options, started func(start int64)) (*Part, error) {
	p, err := decodePart(src, size, at, opt, started)
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) {
			err = fmt.Errorf("snapshot: no part at %d: %w", at, err)
		}
		return nil, err
	}
	return p, nil
}

func decodePart(src io.ReaderAt, size, at int64, opt *Options, started func(start int64)) (*Part, error) {
	if opt == nil {
		opt = &Options{}
	}
	switch {
	case src == nil || size <= 0:
		return nil, errors.New("no input")
	case at < 0 || at >= size:
		return nil, fmt.Errorf("%d is outside the file (%d bytes)", at, size)
	case opt.Fold == nil:
		return nil, errors.New("a split decode needs Options.Fold")
	}
	o := *opt
	o.Source, o.Split, o.Summarize = src, nil, nil
	in := input{src: io.NewSectionReader(src, 0, size), size: size}
	if whole := opt.Data; int64(len(whole)) == size {
		in = wholeInput(whole, opt.DataDone)
	}
	v := newVM(in, true)
	v.configure(&o, func() int64 { return v.in.abs() }, size)
	v.in.fill(512)
	if len(v.in.data) >= 2 && v.in.data[0] == 0x1f && v.in.data[1] == 0x8b {
		return nil, errors.New("the file is gzip-compressed")
	}
	if err := Sniff(v.in.data); err != nil {
		return nil, err
	}
	// As Decode does (Fold, Source, no stack goroutine).
	v.lazyOK, v.lazySrc = true, src
	v.lazyAfter = o.HoldFrames
	if v.lazyAfter <= 0 {
		v.lazyAfter = max(1<<20, int(min(size/256, math.MaxInt32)))
		v.lazySoon = min(lazySoonFrames, v.lazyAfter)
	}
	t := &v.snap.Stacks
	switch {
	case o.splitSeed != nil:
		t.seed = *o.splitSeed
		t.seed64 = maphash.Comparable(t.seed, 0)
	case foldedHash:
		t.seed64 = splitSeed64(size, at)
	}
	target := min(partPrefix, at)
	ps := &partState{target: target, giveUp: max(at, target) + 64<<20}
	v.hook = ps
	v.setStop(target)
	if _, err := v.run(); err != errPartPrefix {
		if err == nil {
			err = errors.New("the file ends before a trace")
		}
		return nil, err
	}
	// The prefix ends at a MARK of a trace list's batch, all its rows
	// appended. The part's new stacks are lazy, and the main decoder's
	// must be when it takes the part: a file whose stacks repeat (held
	// until lazyAfter frame IDs, often for good) is not split.
	if t.held() < v.lazyAfter && 2*(t.count-1) < v.stackRefs+v.cacheHits {
		return nil, errors.New("the stacks are not lazy after the prefix (they repeat)")
	}
	if i := opt.splitInfo; i != nil {
		i.partPrefix = i.since()
	}
	pos := v.in.abs()
	p := &Part{size: size, at: at, seed: t.seed64}
	p.memoN = int64(v.memo.len())
	p.memoHash = v.memoPrint(p.memoN)
	p.stacksHash = t.stacksPrint(t.count)
	p.stacksN, p.framesN, p.rowsN = int64(t.count), int64(len(v.snap.Frames)), int64(v.rows.n)
	p.streamsN, p.names = int64(len(v.rows.streams)), int64(len(v.rows.names))
	p.stack = append([]val(nil), v.stack...)
	for _, m := range v.marks {
		p.marks = append(p.marks, int64(m))
	}
	list := v.stack[len(v.stack)-1]
	start, err := v.findEntry(src, size, max(at, pos+1))
	if err != nil {
		return nil, err
	}
	p.start = start
	if i := opt.splitInfo; i != nil {
		i.partStart = i.since()
	}
	if started != nil {
		started(start)
	}
	// From start on, as from the MARK the prefix ends at: the part's
	// memo ids are counted from the prefix's length (not the file's), so
	// it reads none beyond; every new stack is lazy, as the main decoder's
	// are once it gets there (checked there).
	v.in.jump(src, start, size)
	p.head = v.in.peek(16)
	spent := v.budget.spent
	refs := v.stackRefs
	v.marks = append(v.marks, len(v.stack))
	v.memoMax = int(p.memoN)
	v.memo.limit = v.memoMax
	v.lazyAfter, v.lazySoon = 0, 0
	v.partList = list.n + 1
	ps.running, ps.stackN, ps.memoN = true, len(p.stack), int(p.memoN)
	v.setStop(start + 1<<20)
	for {
		_, err := v.run()
		if err != errPartBatch {
			if err == nil {
				err = errors.New("the trace list does not end")
			}
			return nil, err
		}
		if len(v.marks) != len(p.marks) || len(v.stack) != len(p.stack) {
			continue // not the list's batch: cannot be (checked at the end)
		}
		if next, ok := v.in.nextOp(); !ok || next != opMark {
			break
		}
	}
	p.end = v.in.abs()
	p.tail = v.in.peek(16)
	if v.memoRewritten || v.memoFar != nil || int64(len(v.snap.Frames)) != p.framesN {
		return nil, errPartRef
	}
	for i, x := range v.stack {
		if x != p.stack[i] {
			return nil, errPartRef
		}
	}
	if o := v.objs[list.n]; o.kind != oEntries || int(v.ranges[o.idx].end) != v.rows.n {
		return nil, errPartRef
	}
	ps.dropMemo(v)
	p.memoAdd = int64(v.memo.len()) - p.memoN + int64(ps.dropped)
	p.frameEnd, p.frameOff = v.frameEnd, v.frameOff
	p.spent, p.refs = v.budget.spent-spent, int64(v.stackRefs-refs)
	v.partOut(p)
	if i := opt.splitInfo; i != nil {
		i.partDone = i.since()
	}
	return p, nil
}

// partOut makes p refer to what the stretch added.
func (v *vm) partOut(p *Part) {
	e := v.rows
	p.rows, p.r0 = e, int(p.rowsN)
	p.streams = append([]uint64(nil), e.streams[min(int(p.streamsN), len(e.streams)):]...)
	p.newNames = append([]Action(nil), e.names[p.names:]...)
	t := &v.snap.Stacks
	t.index, t.recent, t.sumIdx = nil, nil, nil
	p.st, p.s0 = t, int(p.stacksN)
}

// sparseFrom returns the rows (less r0) and values of s from row r0 on.
func sparseFrom[T any](s *sparse[T], r0 int) ([]int32, []T) {
	i := sort.Search(len(s.rows), func(j int) bool { return int(s.rows[j]) >= r0 })
	rows := make([]int32, 0, len(s.rows)-i)
	for _, r := range s.rows[i:] {
		rows = append(rows, r-int32(r0))
	}
	return rows, s.vals[i:]
}

// findEntry returns the offset of the first trace entry at or after from:
// EMPTY_DICT MEMOIZE MARK (a FRAME may follow) and a memo reference to the
// string "action" (the first key of every entry the prefix met).
func (v *vm) findEntry(src io.ReaderAt, size, from int64) (int64, error) {
	keys := map[int]bool{}
	for id := range v.memo.len() {
		if x := unpack(v.memo.peek(id)); x.k == kStr && v.strs[x.n] == "action" {
			keys[id] = true
		}
	}
	if len(keys) == 0 {
		return 0, errors.New("no trace entry in the prefix")
	}
	const win = 1 << 20
	buf := make([]byte, win+32)
	for off := from; off < size && off < from+32<<20; off += win {
		n, err := src.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if err != nil && err != io.EOF {
			return 0, err
		}
		b := buf[:n]
		for i := 0; ; {
			j := bytes.Index(b[i:], []byte{opEmptyDict, opMemoize, opMark})
			if j < 0 || i+j >= win {
				break
			}
			i += j
			q := i + 3
			if q < len(b) && b[q] == opFrame {
				q += 9
			}
			if id, next := memoRef(b, q); next > 0 && keys[id] {
				return off + int64(i), nil
			}
			i++
		}
	}
	return 0, fmt.Errorf("no trace entry within 32 MiB of %d", from)
}

// jump moves the input to offset to of src (the window emptied).
func (in *input) jump(src io.ReaderAt, to, size int64) {
	if in.chunk != nil {
		in.ra.release(in.chunk)
		in.chunk = nil
	}
	in.ra = nil
	if in.whole != nil {
		in.moveTo(to, 0)
		return
	}
	in.src = io.NewSectionReader(src, to, size-to)
	in.base, in.pos, in.eof, in.readErr = to, 0, false, nil
	in.data = make([]byte, 0, streamWindow)
}

// peek returns a copy of the next n bytes (fewer at the end).
func (in *input) peek(n int) []byte {
	in.fill(n)
	return append([]byte(nil), in.data[in.pos:min(in.pos+n, len(in.data))]...)
}

// nextOp returns the next opcode after any FRAME.
func (in *input) nextOp() (byte, bool) {
	for i := 0; in.fill(i + 1); i += 9 {
		if op := in.data[in.pos+i]; op != opFrame {
			return op, true
		}
	}
	return 0, false
}

// mainSplit takes a part for the main decoder (Decode with a Split).
type mainSplit struct {
	// poll, when set (Decode's own split), reports without waiting
	// whether the second decoder gave up; it is asked once, early.
	poll  func() bool
	sp    *Split
	src   io.ReaderAt
	info  *splitInfo
	asked bool
	start int64
}

func (m *mainSplit) off(v *vm, why string) error {
	if m.info != nil {
		m.info.why = why
	}
	if v.splitCancel != nil {
		v.splitCancel()
	}
	if v.readAhead != nil {
		v.readAhead()
	}
	v.hook = nil
	v.setStop(math.MaxInt64)
	return nil
}

func (m *mainSplit) stop(v *vm) error {
	abs := v.in.abs()
	if m.poll != nil {
		gaveUp := m.poll()
		m.poll = nil
		if gaveUp {
			return m.off(v, "the second decoder gave up early")
		}
		if abs < m.sp.At {
			v.setStop(m.sp.At)
			return nil
		}
	}
	if !m.asked {
		if i := m.info; i != nil {
			i.atAt = i.since()
		}
		m.asked = true
		s, err := m.sp.Start()
		if err != nil {
			return m.off(v, "start: "+err.Error())
		}
		if s < abs {
			return m.off(v, "the part starts before the decoder")
		}
		m.start = s
		if s > abs {
			v.setStop(s)
			return nil
		}
	}
	if abs != m.start {
		return m.off(v, "the part's start is not an opcode's")
	}
	if t := &v.snap.Stacks; v.fold == nil || v.pipe != nil || !v.lazyOK || t.held() < v.lazyAfter {
		// Checked before waiting for the part: its new stacks are lazy.
		return m.off(v, "stacks not yet lazy")
	}
	if i := m.info; i != nil {
		i.atStart = i.since()
	}
	p, err := m.sp.Part()
	if i := m.info; i != nil {
		i.gotPart = i.since()
	}
	if err != nil || p == nil {
		if err == nil {
			err = errors.New("no part")
		}
		return m.off(v, "part: "+err.Error())
	}
	if why := v.checkPart(p, m.src); why != "" {
		return m.off(v, why)
	}
	if err := v.takePart(p, m.src); err != nil {
		return err
	}
	v.snap.split = p.Bytes()
	if m.info != nil {
		m.info.taken = true
		if i := m.info; i != nil {
			i.merged = i.since()
		}
	}
	v.hook = nil
	v.setStop(math.MaxInt64)
	return nil
}

// checkPart says why part p cannot be taken here ("" if it can): the
// decoder must be where the part starts, in the state the part's decoder
// was in after its prefix, and every new stack lazy.
func (v *vm) checkPart(p *Part, src io.ReaderAt) string {
	t, e := &v.snap.Stacks, v.rows
	switch {
	case p.used || (p.rows == nil || p.st == nil) && p.wire == nil:
		return "part used"
	case p.size != v.in.size || p.start != v.in.abs() || p.end >= p.size || len(p.tail) == 0 || len(p.head) == 0:
		return "another file or place"
	case p.memoAdd > p.end-p.start || p.spent < 0:
		return "part inconsistent"
	case p.seed != t.seed64:
		return "another hash seed"
	case v.fold == nil || v.pipe != nil || !v.lazyOK || t.held() < v.lazyAfter:
		return "stacks not yet lazy"
	case v.memoRewritten || v.memoFar != nil || v.holeHi != 0:
		return "memo"
	case p.memoN > int64(v.memo.len()) || p.stacksN > int64(t.count) || p.framesN > int64(len(v.snap.Frames)) ||
		p.rowsN > int64(e.n) || p.streamsN > int64(len(e.streams)) || p.names > int64(len(e.names)):
		return "tables smaller than the part's prefix"
	case v.memoPrint(p.memoN) != p.memoHash:
		return "memo differs"
	case t.stacksPrint(int(p.stacksN)) != p.stacksHash:
		return "stacks differ"
	}
	if !bytes.Equal(v.in.peek(len(p.head)), p.head) {
		return "bytes at start differ"
	}
	tail := make([]byte, len(p.tail))
	if n, _ := src.ReadAt(tail, p.end); n != len(tail) || !bytes.Equal(tail, p.tail) {
		return "bytes at end differ"
	}
	L, M := len(p.stack), len(p.marks)
	if L == 0 || len(v.stack) < L || len(v.marks) != M+1 || v.marks[M] != L {
		return "stack shape"
	}
	for i, x := range p.stack {
		if v.stack[i] != x {
			return "stack differs"
		}
	}
	for i, m := range p.marks {
		if int64(v.marks[i]) != m {
			return "marks differ"
		}
	}
	l := v.stack[L-1]
	if l.k != kObj || v.objs[l.n].kind != oEntries {
		return "not a trace list"
	}
	r := v.ranges[v.objs[l.n].idx]
	for i, x := range v.stack[L:] {
		if x.k != kObj || v.objs[x.n].kind != oEntry || v.objs[x.n].idx != r.end+int32(i) {
			return "pending items not entries"
		}
	}
	if int(r.end)+len(v.stack)-L != e.n || e.n+p.nRows() >= math.MaxInt32-1 || t.count+p.nStacks() >= math.MaxInt32 {
		return "rows"
	}
	ns := len(e.streams)
	for _, s := range p.streams {
		if _, ok := e.streamIdx[s]; !ok {
			ns++
		}
	}
	if ns > maxStreams || len(e.names)+len(p.newNames) > maxNames {
		return "too many streams or actions"
	}
	return ""
}

// takePart merges part p (checked) at its start and moves the input to
// its end: the pending entries close their batch, the part's stacks and
// rows are appended (IDs remapped; the part's pages are taken, not
// copied: column.appendFrom), its memo ids become a hole, and the budget
// is charged.
func (v *vm) takePart(p *Part, src io.ReaderAt) error {
	t, e := &v.snap.Stacks, v.rows
	p.used = true
	L := len(p.stack)
	items := append([]val(nil), v.stack[L:]...)
	v.marks = v.marks[:len(p.marks)]
	v.stack = v.stack[:L]
	l := v.stack[L-1]
	if len(items) > 0 {
		if err := v.appendItems(l, items); err != nil {
			return err
		}
	}
	// Stacks: runs of lazy ones appended column by column, held ones
	// (rare) one by one.
	base := StackID(t.count)
	pt, pw, s0 := p.st, p.wire, p.s0 // (p's fields are cleared below)
	stacksDone := make(chan struct{})
	var stacksErr error // reading an unmarshaled part's stacks
	stacks := func() {
		defer close(stacksDone)
		defer func() { t.roomTo, t.merged = 0, true }()
		if pw != nil {
			sums := make([]uint32, len(pw.sumTab))
			for i, s := range pw.sumTab {
				sums[i] = t.sumIndex(s)
			}
			h := 0
			stacksErr = columns(pw.r, pw.ns, []span{pw.at, pw.sums, pw.hashes}, []int{8, 4, 8}, func(k int, b [][]byte) bool {
				for j := range k {
					at, si, hash := binary.LittleEndian.Uint64(b[0][8*j:]), binary.LittleEndian.Uint32(b[1][4*j:]), binary.LittleEndian.Uint64(b[2][8*j:])
					if at&lazyFlag == 0 {
						t.pushHeld(pw.held[h], hash, pw.sumTab[si])
						h++
						continue
					}
					if t.lazyFrom == 0 {
						t.lazyFrom = StackID(t.count)
					}
					t.push(at, sums[si], hash)
				}
				return true
			})
			return
		}
		sums := make([]uint32, len(pt.sumTab))
		for i, s := range pt.sumTab {
			sums[i] = t.sumIndex(s)
		}
		for j := s0; j < pt.count; {
			if at := pt.at.at(j); at&lazyFlag == 0 {
				t.pushHeld(pt.MustFrames(StackID(j)), pt.hashes.at(j), pt.sumTab[pt.sum.at(j)])
				j++
				continue
			}
			k := j + 1
			for k < pt.count && pt.at.at(k)&lazyFlag != 0 {
				k++
			}
			if t.lazyFrom == 0 {
				t.lazyFrom = StackID(t.count)
			}
			t.at.appendFrom(&pt.at, j, k)
			t.sum.appendMapped(&pt.sum, j, k, sums)
			t.hashes.appendFrom(&pt.hashes, j, k)
			t.count += k - j
			j = k
		}
	}
	// On two cores the stacks are appended beside the rows.
	if Concurrent() {
		go stacks()
	} else {
		stacks()
	}
	// Rows: the columns appended, then the stream, action and stack IDs
	// made this decoder's.
	pe := p.rows
	e.ready()
	smap := make([]uint16, len(p.streams))
	for i, s := range p.streams {
		if !e.setStreamIdx(s, &smap[i]) {
			<-stacksDone
			return errSplitRestart
		}
	}
	nmap := make([]uint8, len(p.newNames))
	for i, a := range p.newNames {
		j := slices.Index(e.names, a)
		if j < 0 {
			e.names = append(e.names, a)
			j = len(e.names) - 1
		}
		nmap[i] = uint8(KindOther) + uint8(j)
	}
	sP, sN, nN := StackID(p.stacksN), uint16(p.streamsN), uint8(p.names)
	r0, n := e.n, p.nRows()
	if pw := p.wire; pw != nil {
		// The columns read a chunk at a time: a part's columns as
		// they were checked (UnmarshalFrom), unless the source fails.
		err := columns(pw.r, n, []span{pw.tm, pw.act, pw.addr, pw.size, pw.stream, pw.stack}, []int{8, 1, 8, 8, 2, 4}, func(_ int, b [][]byte) bool {
			e.time.pushWide(timeKind, b[0])
			e.action.appendRaw(b[1])
			e.addr.pushWide(addrKind, b[2])
			e.size.pushWide(sizeKind, b[3])
			e.stream.appendRaw(b[4])
			e.stack.appendRaw(b[5])
			return true
		})
		if err != nil {
			<-stacksDone
			return errSplitRestart
		}
		for i, r := range pw.devRows {
			e.deviceFree.put(r0+int(r), pw.dev[i])
		}
		for i, r := range pw.compRows {
			e.compile.put(r0+int(r), pw.comp[i])
		}
		for i, r := range pw.userRows {
			e.user.put(r0+int(r), pw.user[i])
		}
	} else {
		e.time.appendFrom(timeKind, &pe.time, p.r0, pe.n)
		e.action.appendFrom(&pe.action, p.r0, pe.n)
		e.addr.appendFrom(addrKind, &pe.addr, p.r0, pe.n)
		e.size.appendFrom(sizeKind, &pe.size, p.r0, pe.n)
		e.stream.appendFrom(&pe.stream, p.r0, pe.n)
		e.stack.appendFrom(&pe.stack, p.r0, pe.n)
		mergeSparse(&e.deviceFree, &pe.deviceFree, p.r0, r0)
		mergeSparse(&e.compile, &pe.compile, p.r0, r0)
		mergeSparse(&e.user, &pe.user, p.r0, r0)
		mergeSparse(&e.extra, &pe.extra, p.r0, r0)
	}
	e.n += n
	e.roomTo = 0
	if len(nmap) > 0 {
		e.action.each(r0, e.n, func(s []uint8) {
			for i, a := range s {
				if a >= uint8(KindOther) && a-uint8(KindOther) >= nN {
					s[i] = nmap[a-uint8(KindOther)-nN]
				}
			}
		})
	}
	if len(smap) > 0 {
		e.stream.remap(r0, e.n, sN, smap)
	}
	e.stack.each(r0, e.n, func(s []StackID) {
		for i, x := range s {
			if x >= sP {
				s[i] = base + (x - sP)
			}
		}
	})
	p.rows, p.st, p.wire = nil, nil, nil
	v.ranges[v.objs[l.n].idx].end += int32(n)
	<-stacksDone
	if stacksErr != nil {
		return errSplitRestart
	}
	// Memo: the part's ids are unknown here.
	v.holeLo = int64(v.memo.len())
	v.holeHi = v.holeLo + p.memoAdd
	v.memo.c.pushZeros(int(p.memoAdd))
	v.memo.n += int(p.memoAdd)
	v.memo.skip()
	v.stackRefs += int(p.refs)
	v.frameEnd, v.frameOff = p.frameEnd, p.frameOff
	v.in.jump(src, p.end, v.in.size)
	v.in.rawDone = func() int64 { return v.in.abs() }
	if err := v.budget.charge(p.spent+p.memoAdd*memoSlotBytes, v); err != nil {
		return errSplitRestart
	}
	return nil
}

// mergeSparse puts src's values from row r0 on into dst, from row at on.
func mergeSparse[T any](dst, src *sparse[T], r0, at int) {
	rows, vals := sparseFrom(src, r0)
	for i, r := range rows {
		dst.put(at+int(r), vals[i])
	}
}

// appendFrom appends src's values [i, j) to c and lets src's pages go.
// c's last page is filled by copying; from then on c's length is a
// multiple of pageSize and src's full-size pages are taken whole instead
// of copied: with d = i&pageMask, a page's values from d on are moved to
// its front in place and the next page's first d values appended behind
// them (on a virtual machine, a fresh 4 KiB page costs a page fault of
// about 10 µs, more than moving its bytes; at stays one index per page).
func (c *column[T]) appendFrom(src *column[T], i, j int) {
	for i < j {
		pg := i >> pageBits
		sp := src.pages[pg]
		off := i & pageMask
		if fill := -c.len() & pageMask; fill > 0 || cap(sp) != pageSize {
			// Copied: up to the end of c's last page or src's page.
			chunk := sp[off:min(len(sp), off+j-i)]
			if fill > 0 {
				chunk = chunk[:min(len(chunk), fill)]
			}
			i += len(chunk)
			if i&pageMask == 0 || i == j && len(sp) == pageSize && off+len(chunk) == pageSize {
				src.pages[pg] = nil
			}
			for len(chunk) > 0 {
				if !c.room() {
					c.push(chunk[0])
					chunk = chunk[1:]
					continue
				}
				last := &c.pages[len(c.pages)-1]
				m := min(len(chunk), cap(*last)-len(*last))
				*last = append(*last, chunk[:m]...)
				chunk = chunk[m:]
			}
			continue
		}
		// Taken: src's page, its values moved down by off, then the
		// next page's first off values (moved down in their turn next).
		m := min(len(sp)-off, j-i)
		if off > 0 {
			copy(sp, sp[off:off+m])
		}
		sp = sp[:m]
		i += m
		if off > 0 && i < j {
			next := src.pages[pg+1]
			sp = append(sp, next[:min(off, len(next), j-i)]...)
			i += len(sp) - m
		}
		src.pages[pg] = nil
		c.pages = append(c.pages, sp)
	}
}

// each calls f on the stretches of c's values [i, j), in order.
func (c *column[T]) each(i, j int, f func([]T)) {
	for i < j {
		p := c.pages[i>>pageBits]
		off := i & pageMask
		s := p[off:min(len(p), off+j-i)]
		f(s)
		i += len(s)
	}
}

// pushZeros appends k zero values that are never written: the full pages
// among them are one page, shared (a part's memo hole, 4 bytes per memo
// id of the part otherwise; memoPut refuses the hole's ids).
func (c *column[T]) pushZeros(k int) {
	var zero T
	var shared []T
	for k > 0 {
		n := len(c.pages)
		switch {
		case n > 0 && len(c.pages[n-1]) < cap(c.pages[n-1]):
			last := c.pages[n-1]
			m := min(k, cap(last)-len(last))
			clear(last[len(last) : len(last)+m])
			c.pages[n-1] = last[:len(last)+m]
			k -= m
		case n > 0 && k > pageSize && cap(c.pages[n-1]) == pageSize:
			// Not the last page: nothing appends to it.
			if shared == nil {
				shared = make([]T, pageSize)
			}
			c.pages = append(c.pages, shared)
			k -= pageSize
		default:
			c.push(zero)
			k--
		}
	}
}

// pushHeld appends a held stack of frames st, hash h and summary sum
// (a part's: dedupeLazy merges it with any same stack).
func (t *Stacks) pushHeld(st Stack, h uint64, sum StackSummary) {
	t.push(t.hold(st), t.sumIndex(sum), h)
	t.index = nil // rebuilt when next needed
}

// goSplit runs DecodePart on a goroutine for Decode: the Split that takes
// its part, poll (whether it gave up), cancel (asks it to stop at its
// next progress step) and wait (until the goroutine is done).
func goSplit(src io.ReaderAt, size, at int64, opt *Options, seed maphash.Seed) (sp *Split, poll func() bool, cancel, wait func()) {
	var (
		canceled atomic.Bool
		once     sync.Once
		started  = make(chan struct{})
		done     = make(chan struct{})
		start    int64
		part     *Part
		err      error
	)
	o := *opt
	o.Progress = func(int64, int64) bool { return !canceled.Load() }
	o.ProgressEvery = 4 << 20
	o.splitSeed = &seed
	go func() {
		defer close(done)
		defer once.Do(func() { close(started) })
		if o.Data != nil {
			// A fault in a mapped file that shrank is the part's error.
			defer catchDataFault(o.Data, &err)()
		}
		part, err = DecodePart(src, size, at, &o, func(s int64) {
			start = s
			once.Do(func() { close(started) })
		})
	}()
	sp = &Split{
		At: at,
		Start: func() (int64, error) {
			<-started
			if start == 0 {
				<-done
				if err == nil {
					err = errors.New("no start")
				}
				return 0, err
			}
			return start, nil
		},
		Part: func() (*Part, error) {
			<-done
			return part, err
		},
	}
	poll = func() bool {
		select {
		case <-done:
			return err != nil
		default:
			return false
		}
	}
	return sp, poll, func() { canceled.Store(true) }, func() { <-done }
}
