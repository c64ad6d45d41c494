package snapshot

import (
	"fmt"
	"hash/maphash"
	"io"
	"math/bits"
	"slices"
	"sync"
	"unsafe"
)

// StackSummary is what an analysis keeps of a stack so that it need not
// hold the frames: its meaning belongs to the Summarizer that made it
// (package analysis packs the allocation site and the program phase).
type StackSummary uint64

// A Summarizer condenses a frame list (innermost first; frames is the frame
// table it indexes) into a StackSummary. It must be a pure function of the
// frames' contents.
type Summarizer func(frames []Frame, st Stack) StackSummary

// A StackFold is a Summarizer in a form the decoder applies as it reads a
// frame list, with no pass over the stack of its own: every frame has a
// word (Word, computed once per distinct frame), whose low 16 bits are
// flags and whose high 16 bits are a rank; a stack's summary is Finish of
// the OR of its frames' flags, the least rank among its frames (0xffff for
// the empty stack) and the first frame of that rank (0 for the empty
// stack). Word and Finish must be pure functions of their arguments.
type StackFold struct {
	Word   func(f *Frame) uint32
	Finish func(flags uint16, rank uint16, site FrameID) StackSummary
}

// Summarizer returns the Summarizer that f amounts to (it remembers each
// frame's word: one tight loop a stack).
func (f *StackFold) Summarizer() Summarizer {
	var words []uint32
	return func(frames []Frame, st Stack) StackSummary {
		for len(words) < len(frames) {
			words = append(words, f.Word(&frames[len(words)]))
		}
		ws := words[:len(frames)]
		var all uint32
		best := uint32(0xffff) << 16
		var site FrameID
		for _, fid := range st {
			if uint(fid) >= uint(len(ws)) {
				continue
			}
			w := ws[fid]
			all |= w
			// The first frame of the least rank.
			if r := w &^ 0xffff; r < best {
				best, site = r, fid
			}
		}
		return f.Finish(uint16(all), uint16(best>>16), site)
	}
}

// Stacks is the stack table: every distinct frame list once, innermost
// frame first; a StackID indexes it (EmptyStack is the empty list). A stack
// is either held in memory or, for files with very many distinct stacks
// decoded from a re-readable source with a Summarizer (see Options), only
// summarized while decoding and read again from the source when its frames
// are asked for ("lazy"), so that memory does not grow with the number of
// distinct stacks.
type Stacks struct {
	// Per stack, in pages: where it is (at, see lazyFlag) and the index
	// of its summary in sumTab.
	at    column[uint64]
	sum   sumColumn
	count int
	// roomTo bounds the stacks push puts without checking each column's
	// room (as entryStore.roomTo; 0 after renumber shrinks the columns).
	roomTo int
	// sumTab holds each distinct summary once, sumTab[0] = 0 (stacks
	// share a few thousand summaries: a site and a phase); sumIdx finds
	// one (open addressing over sumBits bits; a slot is an index into
	// sumTab, 0: empty).
	sumTab  []StackSummary
	sumIdx  []uint32
	sumBits int
	// pages hold the held stacks, each as its frame count followed by
	// its frames; pages[0][0] is the empty stack's count.
	pages [][]FrameID
	// heldFrames is the number of frame IDs of the held stacks.
	heldFrames int
	// summarized is true when every stack has its summary.
	summarized bool
	// src re-reads lazy stacks; nil when none is lazy.
	src *stackSource
	// index finds a stack by its frames while the table is built: open
	// addressing over hashes (per stack); a slot holds the hash's high 32
	// bits and the ID + 1 (0: empty), so that most probes touch nothing
	// else.
	index  []uint64
	hashes column[uint64]
	// hashPages holds the pages of hashes, dropped once the table is
	// made (done), once it has a full one (see slab).
	hashPages slab[uint64]
	seed      maphash.Seed
	seed64    uint64 // for stackHashXX
	// indexed is the number of stacks in index: the held ones. Lazy
	// stacks are not indexed (a file of distinct stacks would make the
	// index a table of one cache miss per stack): recent finds one that
	// repeats soon, and dedupeLazy merges the others once the file is
	// read.
	indexed int
	// recent maps the top recentBits bits of a lazy stack's hash to the
	// hash's low 32 bits << 32 | its ID + 1 (small enough to stay in
	// cache).
	recent []uint64
	// lazyFrom is the ID of the first lazy stack (0: none).
	lazyFrom StackID
	// folds maps a lazy stack's fold (flags, rank, site), hashed, to its
	// summary's index in sumTab, for the folds met last (addLazy): a
	// fold met again needs no finish call and no look-up in sumIdx.
	folds []foldSum
	// recentBits sizes recent (0: defaultRecentBits; tests make it
	// small to exercise dedupeLazy).
	recentBits int
	// seen and twice are bitsets over the low seenBits bits of the
	// stacks' hashes, kept by the stack goroutine (stackPipe) for the
	// stacks below seenUpTo: once a slot is hit again, its twice bit is
	// set. Two same stacks have the same hash, so only stacks whose slot
	// was hit twice can merge: dedupeFrom then looks only at those.
	seen, twice []uint64
	seenBits    int
	seenUpTo    int
	// merged is set once a split decode's part was appended: its stacks
	// may repeat earlier ones, held ones too.
	merged bool
}

// defaultRecentBits sizes Stacks.recent (32 KiB).
const defaultRecentBits = 12

// foldSum is a slot of Stacks.folds: a fold (flags<<48 | rank<<32 | site)
// and its summary's index + 1 (0: an empty slot).
type foldSum struct {
	key uint64
	si1 uint32
}

// foldSumBits sizes Stacks.folds (2048 slots, 32 KiB).
const foldSumBits = 11

// A stack's place (Stacks.at) is, for a held stack, its page << 32 | the
// offset of its frame count in the page. A lazy stack has lazyFlag set
// and packs the byte offset of its encoding in the (decompressed) input
// (lazyOffBits), the encoding's length (lazySizeBits) and its frame count
// (lazyNBits): 8 bytes of place and 2 of summary index per stack whatever
// the number of distinct stacks. A stack beyond these bounds is held (a
// lazy list is memo references of at most 5 bytes each, so 4095 frames
// take under 2^15 bytes; files up to 64 GiB).
const (
	lazyFlag     = 1 << 63
	lazyNBits    = 12
	lazySizeBits = 15
	lazyOffBits  = 63 - lazyNBits - lazySizeBits
)

// lazyFits reports whether a stack of n frames encoded in size bytes at
// byte off can be lazy.
func lazyFits(off, size int64, n int) bool {
	return off >= 0 && off < 1<<lazyOffBits && size > 0 && size < 1<<lazySizeBits && n > 0 && n < 1<<lazyNBits
}

// lazyAt packs a lazy stack's place.
func lazyAt(off int64, size, n int) uint64 {
	return lazyFlag | uint64(off)<<(lazyNBits+lazySizeBits) | uint64(size)<<lazyNBits | uint64(n)
}

// lazyPlace unpacks a lazy stack's place.
func lazyPlace(at uint64) (off int64, size, n int) {
	return int64(at&^lazyFlag) >> (lazyNBits + lazySizeBits), int(at>>lazyNBits) & (1<<lazySizeBits - 1), int(at & (1<<lazyNBits - 1))
}

// Len returns the number of stacks, the empty one included.
func (t *Stacks) Len() int { return t.count }

// Depth returns the number of frames of stack id (0 for NoStack, the empty
// stack and IDs outside the table).
func (t *Stacks) Depth(id StackID) int {
	if id < 0 || int(id) >= t.count {
		return 0
	}
	at := t.at.at(int(id))
	if at&lazyFlag != 0 {
		return int(at & (1<<lazyNBits - 1))
	}
	return int(t.pages[at>>32][uint32(at)])
}

// Lazy reports whether stack id is read from the source when asked for.
func (t *Stacks) Lazy(id StackID) bool {
	return id >= 0 && int(id) < t.count && t.at.at(int(id))&lazyFlag != 0
}

// LazyCount returns how many stacks are lazy.
func (t *Stacks) LazyCount() int {
	n := 0
	for _, p := range t.at.pages {
		for _, at := range p {
			if at&lazyFlag != 0 {
				n++
			}
		}
	}
	return n
}

// Summarized reports whether every stack has a summary (Summary).
func (t *Stacks) Summarized() bool { return t.summarized }

// Summary returns stack id's summary (0 for NoStack, IDs outside the table
// and a table that is not summarized).
func (t *Stacks) Summary(id StackID) StackSummary {
	if id < 0 || int(id) >= t.count {
		return 0
	}
	return t.sumTab[t.sum.at(int(id))]
}

// setSum sets stack id's summary.
func (t *Stacks) setSum(id StackID, s StackSummary) { t.sum.set(int(id), t.sumIndex(s)) }

// sumIndex returns the index of s in sumTab, adding it the first time.
func (t *Stacks) sumIndex(s StackSummary) uint32 {
	if s == 0 {
		return 0
	}
	if 2*len(t.sumTab) >= len(t.sumIdx) {
		t.sumBits = max(t.sumBits+1, 8)
		t.sumIdx = make([]uint32, 1<<t.sumBits)
		for i := 1; i < len(t.sumTab); i++ {
			j := sumSlot(t.sumTab[i], t.sumBits)
			for t.sumIdx[j] != 0 {
				j = (j + 1) & (len(t.sumIdx) - 1)
			}
			t.sumIdx[j] = uint32(i)
		}
	}
	j := sumSlot(s, t.sumBits)
	for ; t.sumIdx[j] != 0; j = (j + 1) & (len(t.sumIdx) - 1) {
		if i := t.sumIdx[j]; t.sumTab[i] == s {
			return i
		}
	}
	if len(t.sumTab) >= 1<<32-1 {
		panic("snapshot: 2^32 distinct stack summaries")
	}
	if len(t.sumTab) == maxNarrowSums {
		// The new index takes the column's 4-byte values.
		t.sum.widen()
		t.roomTo = 0
	}
	t.sumTab = append(t.sumTab, s)
	t.sumIdx[j] = uint32(len(t.sumTab) - 1)
	return t.sumIdx[j]
}

// sumSlot is the home slot of summary s in a table of 2^bits slots.
func sumSlot(s StackSummary, bits int) int { return int(uint64(s) * 0x9e3779b97f4a7c15 >> (64 - bits)) }

// Frames returns the frames of stack id, innermost first: nil for NoStack
// and IDs outside the table. A lazy stack is read again from the source;
// that can fail (the file changed or cannot be read).
func (t *Stacks) Frames(id StackID) (Stack, error) {
	if id < 0 || int(id) >= t.count {
		return nil, nil
	}
	at := t.at.at(int(id))
	if at&lazyFlag != 0 {
		return t.src.read(at, t.Summary(id))
	}
	p := t.pages[at>>32]
	off := uint32(at) + 1
	n := uint32(p[off-1])
	return p[off : off+n : off+n], nil
}

// MustFrames is Frames for tables that hold every stack in memory (built by
// Add, or decoded without a Source); it panics on a lazy stack's error.
func (t *Stacks) MustFrames(id StackID) Stack {
	st, err := t.Frames(id)
	if err != nil {
		panic(err)
	}
	return st
}

// Summarize gives every stack without a summary the summary fn makes of
// its frames (lazy stacks already have one). frames is the frame table.
func (t *Stacks) Summarize(frames []Frame, fn Summarizer) {
	if t.summarized {
		return
	}
	t.init()
	for id := range t.count {
		if !t.Lazy(StackID(id)) {
			t.setSum(StackID(id), fn(frames, t.MustFrames(StackID(id))))
		}
	}
	t.summarized = true
}

// Add returns the ID of the frame list st, adding it the first time (for
// generators, tests and the reference decoder; the decoder interns as it
// reads). st is not retained.
func (t *Stacks) Add(st Stack) StackID {
	id, _ := t.intern(st, nil, 0, 0)
	return id
}

// init starts an empty table holding the empty stack.
func (t *Stacks) init() {
	if t.count > 0 {
		return
	}
	t.pages = [][]FrameID{append(make([]FrameID, 0, 64), 0)}
	t.sumTab = []StackSummary{0}
	t.push(0, 0, 0)
	t.seed = maphash.MakeSeed()
	t.seed64 = maphash.Comparable(t.seed, 0)
	t.index = make([]uint64, 64)
}

// slot is the index slot of stack id of hash h.
func slot(h uint64, id StackID) uint64 { return h&^(1<<32-1) | uint64(uint32(id)+1) }

// push appends a stack record (place, summary index) and its hash.
func (t *Stacks) push(at uint64, sum uint32, h uint64) {
	if t.count >= t.roomTo {
		free := min(t.at.free(), t.sum.free(), t.hashes.free())
		if free == 0 {
			t.at.push(at)
			t.sum.push(sum)
			t.hashPages.grow(&t.hashes)
			t.hashes.push(h)
			t.count++
			return
		}
		t.roomTo = t.count + free
	}
	// The common case, without a call per column.
	t.at.put(at)
	t.sum.put(sum)
	t.hashes.put(h)
	t.count++
}

// stackHashMaphash is the stack hash where maphash is fast (AES
// instructions).
func stackHashMaphash(seed maphash.Seed, st Stack) uint64 {
	return maphash.Bytes(seed, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(st))), 4*len(st)))
}

// xxh64 primes.
const (
	xxP1 = 0x9E3779B185EBCA87
	xxP2 = 0xC2B2AE3D27D4EB4F
	xxP3 = 0x165667B19E3779F9
	xxP4 = 0x85EBCA77C2B2AE63
	xxP5 = 0x27D4EB2F165667C5
)

// stackHashXX is the stack hash in WebAssembly, where maphash's 128-bit
// multiplies are emulated: XXH64's round over each frame ID (a step a
// frame, so that the decoder can hash a list as it reads it: xxStart,
// xxStep, xxEnd), then its final mix with the length.
func stackHashXX(seed uint64, st Stack) uint64 {
	h := xxStart(seed)
	for _, f := range st {
		h = xxStep(h, f)
	}
	return xxEnd(h, len(st))
}

// xxStart starts a stack hash (stackHashXX) of seed, xxStep adds frame f,
// xxEnd ends it for a stack of n frames.
func xxStart(seed uint64) uint64        { return seed + xxP5 }
func xxStep(h uint64, f FrameID) uint64 { return rotl(h+uint64(uint32(f))*xxP2, 31) * xxP1 }
func xxEnd(h uint64, n int) uint64      { return xxAvalanche(h + uint64(n)*4) }

// XXH64's step for an 8-byte piece (the stack cache's key hash), and its
// final mix.
func xxMerge(h, w uint64) uint64 {
	h ^= rotl(w*xxP2, 31) * xxP1
	return rotl(h, 27)*xxP1 + xxP4
}

func xxAvalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= xxP2
	h ^= h >> 29
	h *= xxP3
	h ^= h >> 32
	return h
}

func rotl(x uint64, k int) uint64 { return bits.RotateLeft64(x, k) }

// holdLimit is the number of frame IDs one page of held stacks takes.
const holdLimit = 1 << 16

// intern returns the ID of st, adding it the first time. With lazy set, a
// new stack is not held: lazy(st) returns its summary, and off and size
// locate its encoding for the source (lazyFits must hold). It reports
// whether the stack is new.
func (t *Stacks) intern(st Stack, lazy func(Stack) StackSummary, off int64, size int) (StackID, bool) {
	t.init()
	if len(st) == 0 {
		return EmptyStack, false
	}
	if t.index == nil {
		t.rebuildIndex()
	}
	h := t.hash(st)
	if len(st) >= 1<<31 {
		panic("snapshot: a stack of 2^31 frames")
	}
	id := StackID(t.count)
	if lazy != nil {
		if old, ok := t.recentLazy(h, len(st)); ok {
			return old, false
		}
		return t.pushLazy(h, lazyAt(off, size, len(st)), lazy(st)), true
	}
	mask := len(t.index) - 1
	i := int(h) & mask
	for ; t.index[i] != 0; i = (i + 1) & mask {
		e := t.index[i]
		if e>>32 != h>>32 {
			continue
		}
		old := StackID(uint32(e) - 1)
		if t.hashes.at(int(old)) != h || t.Depth(old) != len(st) {
			continue
		}
		// The index holds held stacks: they match frame by frame.
		if slices.Equal(t.MustFrames(old), st) {
			return old, false
		}
	}
	t.push(t.hold(st), 0, h)
	t.index[i] = slot(h, id)
	t.indexed++
	if 4*t.indexed > 3*len(t.index) {
		t.rebuildIndex()
	}
	return id, true
}

// hold appends the frames st to the held stacks' pages and returns their
// place (Stacks.at).
func (t *Stacks) hold(st Stack) uint64 {
	np := len(t.pages)
	if cap(t.pages[np-1])-len(t.pages[np-1]) <= len(st) {
		t.pages = append(t.pages, make([]FrameID, 0, max(holdLimit, len(st)+1)))
		np++
	}
	p := &t.pages[np-1]
	at := uint64(np-1)<<32 | uint64(len(*p))
	*p = append(append(*p, FrameID(len(st))), st...)
	t.heldFrames += len(st)
	return at
}

// recentLazy finds a lazy stack of hash h and n frames among the recent
// ones. A lazy stack is taken on its 64-bit hash and length, and the held
// stacks' index is not probed (a cache miss per stack on a file of
// distinct stacks): one the same as a recent lazy stack is found in
// recent, one the same as any other stack is merged into it by
// dedupeLazy.
func (t *Stacks) recentLazy(h uint64, n int) (StackID, bool) {
	if t.recent == nil {
		if t.recentBits <= 0 {
			t.recentBits = defaultRecentBits
		}
		t.recent = make([]uint64, 1<<t.recentBits)
	}
	if e := t.recent[h>>(64-t.recentBits)]; e != 0 && e>>32 == h&(1<<32-1) {
		if old := StackID(uint32(e) - 1); t.hashes.at(int(old)) == h && t.Depth(old) == n {
			return old, true
		}
	}
	return NoStack, false
}

// pushLazy adds a lazy stack of hash h, place at and summary sum (after
// recentLazy found none) and returns its ID.
func (t *Stacks) pushLazy(h, at uint64, sum StackSummary) StackID {
	id := StackID(t.count)
	t.push(at, t.sumIndex(sum), h)
	t.recent[h>>(64-t.recentBits)] = h<<32 | uint64(uint32(id)+1)
	if t.lazyFrom == 0 {
		t.lazyFrom = id
	}
	return id
}

// addLazy is recentLazy and, where it finds none, pushLazy, in one call
// (lazyFrames' per-stack path): the lazy stack of hash h, place at and n
// frames, whose summary is finish(flags, rank, site), made only for a new
// stack whose fold is not in folds (finish is to be the same function of
// the fold at every call); and whether it is new. push's and sumIndex's
// common cases (room in the columns' pages, a summary already in sumTab)
// are written in: a call each fewer a stack.
func (t *Stacks) addLazy(h, at uint64, n int, finish func(flags, rank uint16, site FrameID) StackSummary, flags, rank uint16, site FrameID) (StackID, bool) {
	if t.recent == nil {
		if t.recentBits <= 0 {
			t.recentBits = defaultRecentBits
		}
		t.recent = make([]uint64, 1<<t.recentBits)
	}
	r := &t.recent[h>>(64-t.recentBits)]
	if e := *r; e != 0 && e>>32 == h&(1<<32-1) {
		if old := StackID(uint32(e) - 1); t.hashes.at(int(old)) == h && t.Depth(old) == n {
			return old, false
		}
	}
	// The summary's index: finish is the decoder's one Fold.Finish, a
	// function of the fold alone, so a fold met before has the index it
	// had then (sumTab only grows).
	if t.folds == nil {
		t.folds = make([]foldSum, 1<<foldSumBits)
	}
	key := foldKey(flags, rank, site)
	fc := &t.folds[(key*0x9e3779b97f4a7c15)>>(64-foldSumBits)]
	si := fc.si1 - 1
	if fc.si1 == 0 || fc.key != key {
		s := finish(flags, rank, site)
		si = 0
		if s != 0 {
			found := false
			if mask := len(t.sumIdx) - 1; mask > 0 {
				for j := sumSlot(s, t.sumBits); t.sumIdx[j] != 0; j = (j + 1) & mask {
					if i := t.sumIdx[j]; t.sumTab[i] == s {
						si, found = i, true
						break
					}
				}
			}
			if !found {
				si = t.sumIndex(s)
			}
		}
		*fc = foldSum{key: key, si1: si + 1}
	}
	id := StackID(t.count)
	if t.count < t.roomTo {
		t.at.put(at)
		if t.sum.isWide { // sum.put, which is not inlined, written out
			t.sum.wide.put(si)
		} else {
			t.sum.narrow.put(uint16(si))
		}
		t.hashes.put(h)
		t.count++
	} else {
		t.push(at, si, h)
	}
	*r = h<<32 | uint64(uint32(id)+1)
	if t.lazyFrom == 0 {
		t.lazyFrom = id
	}
	return id, true
}

// foldKey is a fold's key in Stacks.folds.
func foldKey(flags, rank uint16, site FrameID) uint64 {
	return uint64(flags)<<48 | uint64(rank)<<32 | uint64(uint32(site))
}

// addLazyNewGo is addLazy's common case on a file of distinct stacks, a
// new stack whose fold was met before: where recent's slot for h holds
// no stack with h's low 32 bits, folds holds the fold of key (foldKey)
// with its summary's index, the columns' pages have room (count below
// roomTo), it adds the lazy stack of hash h and place at as addLazy does
// and returns its ID and true.
// Otherwise it returns false, having changed nothing: addLazy is then to
// find or add the stack. lazyFrames calls it (addLazyNew) before addLazy;
// in WebAssembly addLazyNew is this function in assembly
// (addlazy_wasm.s), natively it is this function.
func (t *Stacks) addLazyNewGo(h, at, key uint64) (StackID, bool) {
	// folds is made by addLazy for a new lazy stack, which sets lazyFrom.
	if len(t.recent) == 0 || len(t.folds) == 0 || t.count >= t.roomTo {
		return 0, false
	}
	r := &t.recent[h>>(64-t.recentBits)]
	if e := *r; e != 0 && e>>32 == h&(1<<32-1) {
		return 0, false
	}
	fc := &t.folds[(key*0x9e3779b97f4a7c15)>>(64-foldSumBits)]
	if fc.si1 == 0 || fc.key != key {
		return 0, false
	}
	si := fc.si1 - 1
	id := StackID(t.count)
	t.at.put(at)
	if t.sum.isWide {
		t.sum.wide.put(si)
	} else {
		t.sum.narrow.put(uint16(si))
	}
	t.hashes.put(h)
	t.count++
	*r = h<<32 | uint64(uint32(id)+1)
	return id, true
}

// rebuildIndex sizes the index for the held stacks and fills it.
func (t *Stacks) rebuildIndex() {
	n := 64
	for 3*n < 4*t.indexed+4 {
		n *= 2
	}
	if t.hashes.pages == nil {
		// Hashes were dropped (done): compute them again.
		for id := range t.count {
			if t.Lazy(StackID(id)) {
				panic("snapshot: cannot add to a finished table with lazy stacks")
			}
			t.hashes.push(t.hash(t.MustFrames(StackID(id))))
		}
	}
	t.index = make([]uint64, n)
	for id := 1; id < t.count; id++ {
		if t.Lazy(StackID(id)) {
			continue
		}
		h := t.hashes.at(id)
		i := int(h) & (n - 1)
		for t.index[i] != 0 {
			i = (i + 1) & (n - 1)
		}
		t.index[i] = slot(h, StackID(id))
	}
}

// done drops what only building the table needs.
func (t *Stacks) done() {
	t.index, t.hashes, t.hashPages, t.recent, t.sumIdx, t.sumBits = nil, column[uint64]{}, slab[uint64]{}, nil, nil, 0
}

// dedupeLazy merges, once there is a lazy stack, the stacks that are the
// same stack (with a lazy one, by 64-bit hash and length, as intern takes
// them; two held ones frame by frame), keeping the first, and renumbers
// the rest in order. The held stacks before the first lazy one are in it:
// intern does not look for a new lazy stack among them. It returns the new
// ID of every ID from `from` on (nil when nothing changed); the index is
// dropped.
func (t *Stacks) dedupeLazy() (rep []StackID, from StackID) {
	if t.lazyFrom == 0 && !t.merged {
		return nil, 0
	}
	return t.dedupeFrom(1), 1
}

// dedupeFrom is dedupeLazy for the stacks from ID from on. They are
// bucketed by the top bits of their hash: a counting pass, then one
// scatter pass (sequential but for 4096 write streams) that writes 32 more
// bits of each hash, its fragment, at the stack's place in its bucket (4
// bytes a stack: a bucket's stacks in ID order). Each bucket is searched
// with a small table that stays in cache (no probe of a table the size of
// the file per stack) for fragments met before. Only the stacks of a
// fragment met twice in a bucket can merge: a pass over the hashes finds
// their IDs (none on most files of distinct stacks, a few on others: 44
// bits of 64) and mergeCandidates merges them. With a second core and
// many stacks, two goroutines each count and scatter half the stacks (by
// ID) and search half the buckets: the same merges.
func (t *Stacks) dedupeFrom(from int) []StackID {
	if t.seen != nil {
		return t.dedupeSeen(from)
	}
	m := t.count - from
	workers := 1
	if m >= dedupeTwoMin && Concurrent() {
		workers = 2
	}
	// Worker w counts and scatters IDs [ids[w], ids[w+1]).
	ids := make([]int, workers+1)
	for w := range ids {
		ids[w] = from + w*m/workers
	}
	counts := make([]*[dedupeBuckets]int32, workers)
	inParallel(workers, func(w int) {
		c := new([dedupeBuckets]int32)
		t.eachHash(ids[w], ids[w+1], func(_ int, hs []uint64) { countBuckets(hs, c) })
		counts[w] = c
	})
	// Bucket b's stacks are frags[start[b]:start[b+1]], worker w's from
	// first[w][b] on.
	start := make([]int32, dedupeBuckets+1)
	first := make([]*[dedupeBuckets]int32, workers)
	for w := range first {
		first[w] = new([dedupeBuckets]int32)
	}
	for b := range dedupeBuckets {
		n := start[b]
		for w, c := range counts {
			first[w][b] = n
			n += c[b]
		}
		start[b+1] = n
	}
	frags := make([]uint32, m)
	mask := dedupeFragMask
	inParallel(workers, func(w int) {
		fill := new([dedupeBuckets]int32)
		*fill = *first[w]
		t.eachHash(ids[w], ids[w+1], func(_ int, hs []uint64) { scatterFrags(hs, fill, frags, mask) })
	})
	// Each worker searches the buckets of about half the stacks; pairs
	// holds the places of a stack whose fragment was met before in its
	// bucket and of the first stack of that fragment.
	cuts := make([]int, workers+1)
	cuts[workers] = dedupeBuckets
	for w, b := 1, 0; w < workers; w++ {
		for b < dedupeBuckets && int(start[b]) < w*m/workers {
			b++
		}
		cuts[w] = b
	}
	pairs := make([][]int32, workers)
	inParallel(workers, func(w int) {
		pairs[w] = searchFrags(frags, start, cuts[w], cuts[w+1])
	})
	var places []int32
	for _, p := range pairs {
		places = append(places, p...)
	}
	if len(places) == 0 {
		return nil
	}
	var rep []StackID
	for _, xy := range t.mergeCandidates(t.placeIDs(places, start, ids, first)) {
		if rep == nil {
			rep = identityFrom(from, m)
		}
		rep[int(xy[0])-from] = xy[1]
	}
	return t.renumber(rep, from)
}

// countBuckets adds to c[b] the number of hashes hs in bucket b (their
// top dedupeBucketBits bits). In WebAssembly a loop's every round goes
// back through the function's dispatch (see docs/snapshot.md, "Lazy
// stacks"): four hashes a round.
func countBuckets(hs []uint64, c *[dedupeBuckets]int32) {
	const sh = 64 - dedupeBucketBits
	i := 0
	for ; i+4 <= len(hs); i += 4 {
		h := hs[i : i+4 : i+4]
		c[h[0]>>sh]++
		c[h[1]>>sh]++
		c[h[2]>>sh]++
		c[h[3]>>sh]++
	}
	for ; i < len(hs); i++ {
		c[hs[i]>>sh]++
	}
}

// scatterFrags writes the fragment (the low bits kept by mask) of each
// hash of hs, in order, at frags[fill[b]] for its bucket b, and counts
// fill[b] on: four hashes a round, as countBuckets.
func scatterFrags(hs []uint64, fill *[dedupeBuckets]int32, frags []uint32, mask uint32) {
	const sh = 64 - dedupeBucketBits
	i := 0
	for ; i+4 <= len(hs); i += 4 {
		h := hs[i : i+4 : i+4]
		b := h[0] >> sh
		k := fill[b]
		frags[k] = uint32(h[0]) & mask
		fill[b] = k + 1
		b = h[1] >> sh
		k = fill[b]
		frags[k] = uint32(h[1]) & mask
		fill[b] = k + 1
		b = h[2] >> sh
		k = fill[b]
		frags[k] = uint32(h[2]) & mask
		fill[b] = k + 1
		b = h[3] >> sh
		k = fill[b]
		frags[k] = uint32(h[3]) & mask
		fill[b] = k + 1
	}
	for ; i < len(hs); i++ {
		b := hs[i] >> sh
		frags[fill[b]] = uint32(hs[i]) & mask
		fill[b]++
	}
}

// searchFrags returns, for each stack of buckets [b0, b1) (bucket b's
// fragments are frags[start[b]:start[b+1]]) whose fragment was met before
// in its bucket, its place and the place of the first stack of that
// fragment.
func searchFrags(frags []uint32, start []int32, b0, b1 int) []int32 {
	var pairs []int32
	var slots []int32
	for b := b0; b < b1; b++ {
		lo, hi := int(start[b]), int(start[b+1])
		if hi-lo < 2 {
			continue
		}
		// A quarter full at most: fewer probes than half full (4 Mi
		// fragments: 21 -> 13 ms), still in cache (32 KiB for the 2 Ki
		// stacks of a bucket on a file of 8 Mi stacks).
		size := 4
		for size < 4*(hi-lo) {
			size *= 2
		}
		if cap(slots) < size {
			slots = make([]int32, size)
		}
		slots := slots[:size]
		clear(slots)
		mask := size - 1
		fs := frags[lo:hi]
		for k, f := range fs {
			j := int(f) & mask
			if slots[j] == 0 { // most: a fragment first met, its home slot free
				slots[j] = int32(k + 1)
				continue
			}
			for slots[j] != 0 && fs[slots[j]-1] != f {
				j = (j + 1) & mask
			}
			if slots[j] == 0 {
				slots[j] = int32(k + 1)
			} else {
				pairs = append(pairs, int32(lo+k), int32(lo)+slots[j]-1)
			}
		}
	}
	return pairs
}

// placeIDs returns, in ID order, the IDs of the stacks at places (in
// dedupeFrom's scatter, by the workers of ids and first, bucket b's
// stacks at places start[b] … start[b+1]-1; a place may be there more
// than once): a pass over the hashes. It counts the stacks of the buckets
// that hold a place alone (a bit each), and stops once it has found them
// all: a file of distinct stacks has a few places (on the 1 GiB one, 4 to
// 10 of 8 M), most buckets none.
func (t *Stacks) placeIDs(places []int32, start []int32, ids []int, first []*[dedupeBuckets]int32) []int32 {
	slices.Sort(places)
	places = slices.Compact(places)
	found := make([]int32, len(places))
	inParallel(len(first), func(w int) {
		// want[b]: the next place to find from bucket b's fill on
		// (one of a later bucket is never reached; -1: none), next[b]:
		// its index in places.
		fill := *first[w]
		want, next := new([dedupeBuckets]int32), new([dedupeBuckets]int32)
		for b := range dedupeBuckets {
			i, _ := slices.BinarySearch(places, fill[b])
			next[b], want[b] = int32(i), -1
			if i < len(places) {
				want[b] = places[i]
			}
		}
		// wanted: the buckets of the places this worker finds, left: how
		// many they are (worker w's stacks of bucket b are at places
		// first[w][b] … up to worker w+1's or the next bucket's).
		wanted := new([dedupeBuckets]uint8)
		left := 0
		for _, p := range places {
			b, _ := slices.BinarySearch(start, p+1) // start[b] ≤ p < start[b+1]
			b--
			end := start[b+1]
			if w+1 < len(first) {
				end = first[w+1][b]
			}
			if first[w][b] <= p && p < end {
				wanted[b] = 1
				left++
			}
		}
		t.eachHash(ids[w], ids[w+1], func(id int, hs []uint64) {
			if left == 0 {
				return
			}
			for k := 0; k < len(hs); k++ {
				if k&3 == 0 {
					k = skipUnwanted(hs, k, wanted)
					if k == len(hs) {
						break
					}
				}
				b := hs[k] >> (64 - dedupeBucketBits)
				if wanted[b] == 0 {
					continue
				}
				if fill[b] == want[b] {
					i := next[b]
					found[i] = int32(id + k)
					left--
					i++
					next[b], want[b] = i, -1
					if int(i) < len(places) {
						want[b] = places[i]
					}
				}
				fill[b]++
			}
		})
	})
	slices.Sort(found)
	return found
}

// skipUnwanted returns the first i = k, k+4, k+8, … where the four hashes
// hs[i:i+4] hold one of a bucket b wanted (wanted[b] != 0), or where fewer
// than four are left: four hashes a round, as countBuckets.
func skipUnwanted(hs []uint64, k int, wanted *[dedupeBuckets]uint8) int {
	const sh = 64 - dedupeBucketBits
	for ; k+4 <= len(hs); k += 4 {
		h := hs[k : k+4 : k+4]
		if wanted[h[0]>>sh]|wanted[h[1]>>sh]|wanted[h[2]>>sh]|wanted[h[3]>>sh] != 0 {
			break
		}
	}
	return k
}

// identityFrom returns the n stack IDs from ID from on, in order.
func identityFrom(from, n int) []StackID {
	r := make([]StackID, n)
	for i := range r {
		r[i] = StackID(from + i)
	}
	return r
}

// renumber gives the kept stacks from ID from on (rep[id-from] == id)
// consecutive IDs in order, compacting the table, and makes rep map every
// stack from ID from on to its new ID (a merged one: the new ID of the
// stack it merged into, an earlier one). It returns rep (nil: nothing
// merged, nothing changed).
func (t *Stacks) renumber(rep []StackID, from int) []StackID {
	if rep == nil {
		return nil
	}
	next := from
	for id := from; id < t.count; id++ {
		if r := rep[id-from]; r != StackID(id) {
			rep[id-from] = rep[int(r)-from] // r < id: already renumbered
			continue
		}
		rep[id-from] = StackID(next)
		t.at.set(next, t.at.at(id))
		t.sum.set(next, t.sum.at(id))
		t.hashes.set(next, t.hashes.at(id))
		next++
	}
	t.count, t.roomTo = next, 0
	t.at.truncate(next)
	t.sum.truncate(next)
	t.hashes.truncate(next)
	t.index, t.recent = nil, nil
	return rep
}

// initSeen starts the bitsets of dedupeSeen with 2^bits slots each.
func (t *Stacks) initSeen(bits int) {
	t.seenBits = bits
	t.seen, t.twice = make([]uint64, 1<<bits/64), make([]uint64, 1<<bits/64)
	t.seenUpTo = 1
}

// markUpTo marks the hashes of the stacks from seenUpTo to n (see seen).
func (t *Stacks) markUpTo(n int) {
	mask := uint64(1)<<t.seenBits - 1
	for id := t.seenUpTo; id < n; id++ {
		i := t.hashes.at(id) & mask
		w, b := i>>6, uint64(1)<<(i&63)
		t.twice[w] |= t.seen[w] & b
		t.seen[w] |= b
	}
	t.seenUpTo = max(t.seenUpTo, n)
}

// dedupeSeen is dedupeFrom where the stack goroutine marked the hashes:
// only the stacks whose slot was hit twice (on the distinct 1 GiB file,
// 1.7 M of 8 M) are merged, with one table over them, as dedupeBuckets
// merges: each stack in ID order into the first earlier kept one of the
// same hash and depth (frame by frame for two held ones). With a second
// core and many stacks, two goroutines each scan half the hashes for the
// stacks hit twice, sorting them in two parts by the top bits of their
// hash (the same stack is always in the same part); then each merges one
// part, in ID order, with its own table: the same merges.
func (t *Stacks) dedupeSeen(from int) []StackID {
	t.markUpTo(t.count)
	parts := 1
	if seenParts > 0 {
		parts = seenParts
	} else if t.count-from >= 1<<16 && Concurrent() {
		parts = 2
	}
	mask := uint64(1)<<t.seenBits - 1
	// cand[w][g]: the candidates of part g among worker w's share of the
	// IDs, [lo, hi).
	cand := make([][][]int32, parts)
	inParallel(parts, func(w int) {
		cand[w] = make([][]int32, parts)
		lo, hi := from+w*(t.count-from)/parts, from+(w+1)*(t.count-from)/parts
		for id := lo; id < hi; {
			page := t.hashes.pages[id>>pageBits]
			k0 := id & (1<<pageBits - 1)
			page = page[k0:min(len(page), k0+hi-id)]
			if len(page) == 0 {
				panic("dedupeSeen: fewer hashes than stacks") // a bug; never hang
			}
			for k, h := range page {
				if i := h & mask; t.twice[i>>6]&(1<<(i&63)) != 0 {
					g := int(h>>56) * parts >> 8
					cand[w][g] = append(cand[w][g], int32(id+k))
				}
			}
			id += len(page)
		}
	})
	t.seen, t.twice = nil, nil
	merges := make([][][2]StackID, parts)
	inParallel(parts, func(g int) {
		var c []int32
		if parts == 1 {
			c = cand[0][0]
		} else {
			for w := range parts {
				c = append(c, cand[w][g]...)
			}
		}
		merges[g] = t.mergeCandidates(c)
	})
	var rep []StackID
	for _, ms := range merges {
		for _, m := range ms {
			if rep == nil {
				rep = identityFrom(from, t.count-from)
			}
			rep[int(m[0])-from] = m[1]
		}
	}
	return t.renumber(rep, from)
}

// seenParts, when above 0, is the number of parts (and goroutines)
// dedupeSeen splits the stacks into, whatever their number and the cores
// (tests).
var seenParts = 0

// inParallel runs f(0) to f(n-1), f(0) on the calling goroutine and the
// others each on its own, and returns when all are done. A panic of one
// (a bug) is raised again on the calling goroutine.
func inParallel(n int, f func(i int)) {
	panics := make(chan any, n)
	for i := 1; i < n; i++ {
		go func() {
			defer func() { panics <- recover() }()
			f(i)
		}()
	}
	func() {
		defer func() { panics <- recover() }()
		f(0)
	}()
	var failed any
	for range n {
		if p := <-panics; p != nil {
			failed = p
		}
	}
	if failed != nil {
		panic(failed)
	}
}

// mergeCandidates merges the stacks cand (in ID order, with all the
// stacks of their hashes among them), each into the first earlier kept one
// of the same hash and depth, and returns the merges: a stack and the
// stack it merges into, in ID order.
func (t *Stacks) mergeCandidates(cand []int32) [][2]StackID {
	size := 4
	for size < 2*len(cand) {
		size *= 2
	}
	slots := make([]int32, size)
	var merges [][2]StackID
	for k, x32 := range cand {
		x := StackID(x32)
		h := t.hashes.at(int(x))
		j := int(h>>32) & (size - 1)
		merged := false
		for ; slots[j] != 0; j = (j + 1) & (size - 1) {
			y := StackID(cand[slots[j]-1])
			if t.hashes.at(int(y)) == h && t.Depth(x) == t.Depth(y) &&
				(t.Lazy(x) || t.Lazy(y) || slices.Equal(t.MustFrames(x), t.MustFrames(y))) {
				merges = append(merges, [2]StackID{x, y})
				merged = true
				break
			}
		}
		if !merged {
			slots[j] = int32(k + 1)
		}
	}
	return merges
}

// seenBitsFor sizes the bitsets of dedupeSeen for an input of size bytes
// (-1: unknown): a slot per 32 bytes (a stack takes 100 or more), 2^16 to
// 2^25 slots (8 MiB for both bitsets).
var seenBitsFor = func(size int64) int {
	if size < 0 {
		return 24
	}
	return min(max(bits.Len64(uint64(size/32)), 16), 25)
}

// eachHash calls f with the hashes of the stacks of IDs [from, to), a
// page (or its part) at a time, and the ID of the first.
func (t *Stacks) eachHash(from, to int, f func(id int, hs []uint64)) {
	for id := from; id < to; {
		page := t.hashes.pages[id>>pageBits]
		k0 := id & pageMask
		page = page[k0:min(len(page), k0+to-id)]
		if len(page) == 0 {
			panic("eachHash: fewer hashes than stacks") // a bug; never hang
		}
		f(id, page)
		id += len(page)
	}
}

// dedupeBucketBits is the number of top bits of a stack's hash that give
// its bucket in dedupeFrom (dedupeBuckets buckets).
const (
	dedupeBucketBits = 12
	dedupeBuckets    = 1 << dedupeBucketBits
)

// dedupeFragMask keeps the bits of a hash's fragment in dedupeFrom (tests
// keep few, so that many fragments are met twice).
var dedupeFragMask uint32 = 1<<32 - 1

// dedupeTwoMin is the number of stacks from which dedupeFrom runs on two
// goroutines.
var dedupeTwoMin = 1 << 20

// stackRecBytes is what one stack costs besides its frames: its record
// (place and summary index), and while decoding its hash and index slot.
const stackRecBytes = 12 + 8 + 11

// held returns the number of frame IDs held in memory.
func (t *Stacks) held() int { return t.heldFrames }

// stackSource re-reads lazy stacks from the input. It may be used from
// several goroutines (the analysis reads stacks beside other work): mu
// guards the summarizer, whose cache is not safe for concurrent use.
type stackSource struct {
	mu sync.Mutex
	r  io.ReaderAt
	// objs holds an object per frame in the memo, and seed maps the
	// frames' memo ids to them (val.n indexes objs): a lazy list only
	// refers to frames decoded before it. Built once, read by every
	// stack's decoder (decodeStack).
	objs      []obj
	seed      map[int64]val
	frames    []Frame
	summarize Summarizer
}

// read reads the lazy stack at place at of summary sum again.
func (s *stackSource) read(at uint64, sum StackSummary) (Stack, error) {
	off, size, n := lazyPlace(at)
	b := make([]byte, size)
	if n, err := s.r.ReadAt(b, off); n < size {
		return nil, fmt.Errorf("reading the stack at byte %d again: %v", off, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.decodeStack(b, off)
	if err != nil {
		return nil, err
	}
	if len(st) != n || s.summarize(s.frames, st) != sum {
		return nil, fmt.Errorf("the stack at byte %d differs from when it was decoded: the file changed", off)
	}
	return st, nil
}
