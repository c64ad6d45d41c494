package snapshot

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/bits"
	"unicode/utf8"
)

// Limits that keep hostile input from exhausting memory or time.
const (
	maxMarks = 100_000 // open MARKs
	// internLimit: strings up to this length are interned (keys, names).
	internLimit = 64
	// maxIntDigits bounds the decimal text of INT and LONG (as CPython's
	// int() does by default): parsing longer text takes quadratic time.
	maxIntDigits = 4300
	// maxStringBytes bounds one string, bytes object or text line, whatever
	// the input size (gzip and stdin have no known size).
	maxStringBytes = 16 << 20
)

// vkind is the kind of a VM value.
type vkind uint8

const (
	kUnset vkind = iota // an unset memo slot
	kNone
	kBool  // n: 0 or 1
	kInt   // n: the value
	kUint  // n: the bits of a value in [2^63, 2^64)
	kBig   // n: index in vm.bigs
	kFloat // n: math.Float64bits
	kStr   // n: index in vm.strs
	kBytes // n: index in vm.bytes
	kObj   // n: index in vm.objs
	kMark  // stack only
	kWide  // memo only: the value is in vm.memoWide
	// Memo only: a container recycled after use (see vm.release), stored
	// as what it became; a GET makes it an object again.
	kRow      // n: a trace entry's row
	kStackRef // n: a StackID
	kPacked   // memo only: the slot's page is packed (memoTable); never read
)

// val is one VM value: 16 bytes, no pointers.
type val struct {
	n int64
	k vkind
}

// The memo holds values packed in 4 bytes (kind in the low 4 bits, the
// value, 0 to 2^28-1, above); the rare value that does not fit goes to
// memoWide. Python memoizes every container and string, so big files have
// millions of entries, most never referenced again, and every memoized
// value is an index (of a string, an object, a row, a stack), which fits.
func pack(x val) (uint32, bool) {
	if x.n < 0 || x.n >= 1<<28 {
		return 0, false
	}
	return uint32(x.n)<<4 | uint32(x.k), true
}

func unpack(u uint32) val { return val{n: int64(u >> 4), k: vkind(u & 15)} }

// memoSlotBytes is what one dense memo slot costs, for the budget;
// memoWideBytes what one value kept in memoWide or memoFar costs.
const (
	memoSlotBytes = 4
	memoWideBytes = 64
)

// okind is the kind of a container object.
type okind uint8

const (
	oDictFresh okind = iota // empty dict, shape not yet known
	oListFresh              // empty list; idx: its EMPTY_LIST offset mod 2^31, or -1
	oGenDict                // idx: vm.gens
	oGenList                // idx: vm.gens
	oTuple                  // idx: vm.gens
	oFrame                  // idx: FrameID
	oFrameB                 // frame dict not yet interned; idx: vm.fbuild
	oEntry                  // idx: row of vm.rows
	oBlock                  // idx: vm.blocks
	oSegment                // idx: vm.segs
	oHist                   // idx: vm.hists
	oFramesB                // frame list being built; idx: vm.builders
	oStack                  // idx: StackID
	oEntries                // typed lists; idx: vm.ranges
	oBlocks
	oSegments
	oHists
)

// obj is a container. Containers live in vm.objs so that every copy of a
// reference (stack, memo) sees the same object.
type obj struct {
	idx  int32
	kind okind
	// memo is the one memo id the object was stored at (-1: none), or
	// shared (-2) once any other copy of a reference to it may exist
	// (GET, DUP, a generic container holding it): only an object that is
	// not shared is recycled when used up (vm.release).
	memo int32
}

// shared marks memo: any copy of a reference to the object may exist.
const shared = -2

// gen is a generic container: list or tuple items, or dict keys and values
// interleaved.
type gen struct {
	items []val
	index map[string]int // dict: string key -> position of the key, once large
}

// rng is a typed list: a run [start, end) of one arena.
type rng struct{ start, end int32 }

// builder is a frame list being built, with where its encoding starts and
// (so far) ends in the input, for lazy stacks.
type builder struct {
	ids        []FrameID
	start, end int64 // -1: unknown start
	// inline is set when a frame was defined inside the list (not a memo
	// reference): reading the list again alone would not find it.
	inline bool
	// known is the stack of a list whose encoding the stack cache knew
	// (ids is then empty), else NoStack; key is the encoding of a list
	// to add to the cache once it is interned, else "" (see frameRun).
	known StackID
	key   string
	// folded is set when frameItems read all of ids and folded them
	// (vm.fold): sum is their summary, hash their stackHashXX in
	// WebAssembly (foldedHash).
	folded bool
	sum    StackSummary
	hash   uint64
}

// Limits of the stack cache (vm.stackCache): the encodings it holds and
// their bytes, and, once full, the hit rate under which it is no longer
// consulted.
const (
	stackCacheMax  = 1 << 14
	stackCacheKeys = 8 << 20 // bytes of keys
	stackCacheMiss = 4       // consulted while hits ≥ lookups / stackCacheMiss
)

// vm decodes a pickle. With typed set, dicts are typed by their keys as
// they are filled (trace entries, frames, blocks, segments, history) and
// stored straight into arenas (trace entries into columns); lists of typed
// items become runs of the arena, and frame lists become interned stacks.
type vm struct {
	in    input
	typed bool

	stack []val
	marks []int
	memo  memoTable
	// memoWide holds memo values that do not pack; memoFar holds memo ids
	// far beyond len(memo).
	memoWide map[int64]val
	memoFar  map[int64]val
	// memoRewritten is set when a memo id is stored twice.
	memoRewritten bool

	objs []obj
	// freeObjs are recycled objs slots.
	freeObjs []int32
	gens     []gen
	strs     []string
	keys     []uint8 // per string: its trace-entry key code
	acts     []uint8 // per string: 1 + its action code in rows, 0 if not yet known
	bigs     []*big.Int
	bytes    [][]byte
	interned map[string]int32

	snap     *Snapshot
	frameIDs map[Frame]FrameID
	rows     *entryStore
	// lastStream is the last stream value set, lastStreamIdx its index.
	lastStream    int64
	lastStreamIdx uint16
	blocks        []Block
	segs          []Segment
	hists         []HistoryEntry
	fbuild        []Frame
	ranges        []rng
	// ekeys are the keys of an entry's leading pairs, by place, and eacts
	// the action strings, by their memo id's low bits, as readKey and
	// readAction met them last (entryRun).
	ekeys [8]entryKey
	eacts [16]entryKey
	// lead is entryRun's entryLead, cleared by each run a word at a time:
	// a local's zeroing is a call in WebAssembly (memory.fill).
	lead entryLead
	// entryErr is the error of the entryRun that returned -1.
	entryErr error
	// usedRanges marks the typed lists already handed out (traceList).
	usedRanges map[int32]bool
	builders   []builder
	freeB      []int32
	// scratch collects frame IDs for frameRun.
	scratch []FrameID
	// frameMemo maps memo ids (below frameMemoMax) to their frame's ID + 1
	// (0: not known to be a frame) and, in the high 32 bits, the frame's
	// fold word (frameWord), for frameRun: one lookup instead of the
	// memo's and the object's. It holds while no memo slot is stored
	// twice (memoRewritten): a frame object never changes kind and is
	// never recycled, so a memo id that named one names it for good.
	frameMemo []uint64
	// fold, when not nil, summarizes each new frame list as frameItems
	// reads it (unless pipe does); fwords holds the fold's word of each
	// frame so far.
	fold   *StackFold
	fwords []uint32
	// foldBuf holds the frame IDs of the list foldList read last.
	foldBuf *[foldMax]FrameID
	// stackCache maps the encoding of a frame list made only of memo
	// references (the bytes between its MARK and APPENDS) to its held
	// stack: programs allocate from the same few stacks over and over,
	// and a list seen before is then found without a memo lookup per
	// frame. It is valid while no memo slot is stored twice
	// (memoRewritten): a memo id then always names the same frame.
	stackCache            *stackCache
	cacheLooks, cacheHits int
	// cacheOff is set once cacheLook stops looking.
	cacheOff     bool
	noStackCache bool

	proto int
	// summarize, when not nil, summarizes every stack; with lazyOK, a new
	// stack is not held once the held ones pass lazyAfter frame IDs, and
	// its summary is all that is kept of it besides its byte range.
	summarize Summarizer
	lazyOK    bool
	lazyAfter int
	// lazySoon, when above 0, is where the held stacks' frame IDs are
	// next checked for repeats (lazySooner); stackRefs counts the frame
	// lists vm.intern resolved.
	lazySoon  int
	stackRefs int
	// lazySrc is Options.Source where stacks may be lazy.
	lazySrc io.ReaderAt
	// pipe, when not nil, adds lazy stacks on a second goroutine.
	pipe *stackPipe
	// partial decodes a piece of a file (a lazy stack): FRAME lengths are
	// not checked and the input may end without STOP.
	partial bool
	// memoSeed, in a lazy stack's decoder, maps the memo ids of the
	// frames decoded before the stack to their objects (stackSource.seed;
	// read only: shared by every such decoder).
	memoSeed map[int64]val

	// op and opOff are the opcode being executed and its offset, for errors.
	op    byte
	opOff int64
	// frameEnd is where the last FRAME declared its end, frameOff where
	// that FRAME was.
	frameEnd, frameOff int64
	budget             budget

	// The split decode (split.go). hook, when set, is stopped at
	// in.stopAt; memoMax bounds the memo ids a part may read (errPartRef
	// beyond); [holeLo, holeHi) are the memo ids of a part taken, unknown
	// here (errSplitRestart when read or written).
	hook           splitHook
	partList       int64 // the part's trace list's object + 1 (0: none)
	splitCancel    func()
	splitWait      func() // waits for the goroutine of goSplit
	readAhead      func() // starts reading ahead (Decode, once it does not split)
	memoMax        int
	holeLo, holeHi int64
}

func newVM(in input, typed bool) *vm {
	v := &vm{in: in, typed: typed, interned: map[string]int32{}, frameIDs: map[Frame]FrameID{}, memoMax: math.MaxInt}
	v.in.stopAt = math.MaxInt64
	v.snap = &Snapshot{}
	v.rows = &entryStore{shared: true}
	v.memo.stacks, v.memo.limit = &v.rows.stack, math.MaxInt
	v.stack = make([]val, 0, 64)
	return v
}

// fail reports an error at the current opcode.
func (v *vm) fail(kind error, format string, args ...any) error {
	return &DecodeError{Offset: v.opOff, Op: opNames[v.op], Msg: fmt.Sprintf(format, args...), Kind: kind}
}

func (v *vm) corrupt(format string, args ...any) error {
	return v.fail(ErrCorrupt, format, args...)
}

// need returns the next n bytes, or a truncation error.
func (v *vm) need(n int) ([]byte, error) {
	b, ok := v.in.need(n)
	if !ok {
		return nil, v.short(fmt.Sprintf("needs %d bytes but only %d are left", n, v.in.buffered()))
	}
	return b, nil
}

// needLen returns the next n bytes for a declared length n, refusing a
// length the input cannot hold or over maxStringBytes.
func (v *vm) needLen(n uint64) ([]byte, error) {
	if l := v.in.left(); n > uint64(l) {
		return nil, v.short(fmt.Sprintf("needs %d bytes but only %d are left", n, l))
	}
	if n > maxStringBytes {
		return nil, v.fail(ErrTooLarge, "a string of %d bytes (at most %d are read)", n, maxStringBytes)
	}
	return v.need(int(n))
}

// short reports a lack of input: the read error, or truncation.
func (v *vm) short(msg string) error {
	if err := v.in.readErr; err != nil {
		return &DecodeError{Offset: v.in.abs(), Kind: ErrTruncated, Msg: "reading the file failed: " + err.Error()}
	}
	return &DecodeError{Offset: v.opOff, Op: opNames[v.op], Kind: ErrTruncated, Msg: msg}
}

// line returns the bytes up to the next '\n' (protocol 0 arguments), at
// most max.
func (v *vm) line(max int) ([]byte, error) {
	b, ok, long := v.in.line(max)
	switch {
	case long:
		return nil, v.fail(ErrTooLarge, "a text line of more than %d bytes", max)
	case !ok:
		return nil, v.short("the line argument has no end")
	}
	return b, nil
}

// under reports whether fewer than n values sit above the last MARK.
func (v *vm) under(n int) bool {
	return len(v.stack) < n || (len(v.marks) > 0 && v.marks[len(v.marks)-1] > len(v.stack)-n)
}

func (v *vm) push(x val) { v.stack = append(v.stack, x) }

func (v *vm) pop() (val, error) {
	if v.under(1) {
		return val{}, v.corrupt("stack underflow")
	}
	x := v.stack[len(v.stack)-1]
	v.stack = v.stack[:len(v.stack)-1]
	return x, nil
}

func (v *vm) top() (*val, error) {
	if v.under(1) {
		return nil, v.corrupt("stack underflow")
	}
	return &v.stack[len(v.stack)-1], nil
}

// popMark returns the items above the last MARK (valid until the next
// push) and removes them and the mark.
func (v *vm) popMark() ([]val, error) {
	if len(v.marks) == 0 {
		return nil, v.corrupt("no MARK to pop")
	}
	m := v.marks[len(v.marks)-1]
	v.marks = v.marks[:len(v.marks)-1]
	items := v.stack[m:]
	v.stack = v.stack[:m]
	return items, nil
}

// objBytes is what one container costs while decoding (its obj and memo
// slot), for the budget.
const objBytes = 16

func (v *vm) newObj(k okind, idx int) (val, error) {
	if len(v.objs) >= math.MaxInt32 || idx > math.MaxInt32 {
		return val{}, v.corrupt("too many objects")
	}
	o := obj{kind: k, idx: int32(idx), memo: -1}
	if n := len(v.freeObjs); n > 0 {
		i := v.freeObjs[n-1]
		v.freeObjs = v.freeObjs[:n-1]
		v.objs[i] = o
		return val{k: kObj, n: int64(i)}, nil
	}
	if len(v.objs)&1023 == 0 {
		if err := v.budget.charge(1024*objBytes, v); err != nil {
			return val{}, err
		}
	}
	v.objs = append(v.objs, o)
	return val{k: kObj, n: int64(len(v.objs) - 1)}, nil
}

// share marks the objects among xs as shared: a copy of a reference to
// them now exists besides the stack and the memo.
func (v *vm) share(xs ...val) {
	for _, x := range xs {
		if x.k == kObj {
			v.objs[x.n].memo = shared
		}
	}
}

// release recycles the object x, just used up as what it became (as, a
// kRow or kStackRef value), when nothing else refers to it: its memo slot,
// if any, keeps as.
func (v *vm) release(x, as val) {
	o := &v.objs[x.n]
	if o.memo == shared {
		return
	}
	if o.memo >= 0 && int(o.memo) < v.memo.len() { // (a part drops its memo ids)
		v.memo.set(int(o.memo), v.packWide(int64(o.memo), as))
	}
	o.memo = shared // a stale reference can no longer be recycled twice
	v.freeObjs = append(v.freeObjs, int32(x.n))
}

func (v *vm) newGen(k okind, items []val) (val, error) {
	if err := v.budget.charge(int64(len(items))*16+48, v); err != nil {
		return val{}, err
	}
	v.share(items...)
	v.gens = append(v.gens, gen{items: items})
	return v.newObj(k, len(v.gens)-1)
}

// str pushes a string decoded from b (UTF-8 checked).
func (v *vm) str(b []byte) error {
	if !utf8.Valid(b) {
		return v.corrupt("string is not valid UTF-8")
	}
	return v.pushStr(b)
}

func (v *vm) pushStr(b []byte) error {
	if len(b) <= internLimit {
		if i, ok := v.interned[string(b)]; ok {
			v.push(val{k: kStr, n: int64(i)})
			return nil
		}
		s := string(b)
		v.strs = append(v.strs, s)
		v.keys = append(v.keys, keyCodes[s])
		v.interned[s] = int32(len(v.strs) - 1)
	} else {
		v.strs = append(v.strs, string(b))
		v.keys = append(v.keys, keyOther)
	}
	v.acts = append(v.acts, 0)
	v.push(val{k: kStr, n: int64(len(v.strs) - 1)})
	return v.budget.charge(int64(len(b))+24, v)
}

// pushLong pushes a little-endian two's complement integer of any length.
func (v *vm) pushLong(b []byte) {
	n := len(b)
	if n == 0 {
		v.push(val{k: kInt})
		return
	}
	neg := b[n-1]&0x80 != 0
	// Drop redundant sign bytes so that short values take the fast path.
	for n > 1 && ((b[n-1] == 0 && b[n-2]&0x80 == 0) || (b[n-1] == 0xff && b[n-2]&0x80 != 0)) {
		n--
	}
	if n <= 8 {
		var u uint64
		for i := n - 1; i >= 0; i-- {
			u = u<<8 | uint64(b[i])
		}
		if neg && n < 8 {
			u |= ^uint64(0) << (8 * n)
		}
		v.push(val{k: kInt, n: int64(u)})
		return
	}
	if n == 9 && !neg && b[8] == 0 {
		var u uint64
		for i := 7; i >= 0; i-- {
			u = u<<8 | uint64(b[i])
		}
		v.push(val{k: kUint, n: int64(u)})
		return
	}
	be := make([]byte, n)
	for i := range n {
		be[i] = b[n-1-i]
	}
	x := new(big.Int).SetBytes(be)
	if neg {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	v.pushBig(x)
}

func (v *vm) pushBig(x *big.Int) {
	if x.IsUint64() && !x.IsInt64() {
		v.push(val{k: kUint, n: int64(x.Uint64())})
		return
	}
	v.bigs = append(v.bigs, x)
	v.push(val{k: kBig, n: int64(len(v.bigs) - 1)})
}

func (v *vm) memoPut(id int64, x val) error {
	if x.k == kMark {
		return v.corrupt("cannot memoize a MARK")
	}
	if id < 0 {
		return v.corrupt("negative memo id %d", id)
	}
	u, ok := pack(x)
	if !ok {
		if err := v.budget.charge(memoWideBytes, v); err != nil {
			return err
		}
		u = v.packWide(id, x)
	}
	if x.k == kObj {
		o := &v.objs[x.n]
		switch {
		case o.memo == -1 && id <= math.MaxInt32:
			o.memo = int32(id)
		case o.memo != shared:
			o.memo = shared // stored twice
		}
	}
	if id >= v.holeLo && id < v.holeHi {
		return errSplitRestart
	}
	if id < int64(v.memo.len()) {
		v.memoRewritten = v.memoRewritten || v.memo.at(int(id)) != 0
		v.memo.set(int(id), u)
		return nil
	}
	// Dense storage only as far as the input could have filled it (each
	// memo store takes at least one byte); a far id goes to the map.
	if id <= int64(v.memo.len())+1024 || id <= v.in.abs() {
		for int64(v.memo.len()) <= id {
			if v.memo.len()&1023 == 0 {
				if err := v.budget.charge(1024*memoSlotBytes, v); err != nil {
					return err
				}
			}
			v.memo.push(0)
		}
		v.memo.set(int(id), u)
		return nil
	}
	if v.memoFar == nil {
		v.memoFar = map[int64]val{}
	}
	if err := v.budget.charge(memoWideBytes, v); err != nil {
		return err
	}
	_, had := v.memoFar[id]
	v.memoRewritten = v.memoRewritten || had
	v.memoFar[id] = x
	return nil
}

// packWide packs x for memo slot id, keeping it in memoWide when it does
// not pack.
func (v *vm) packWide(id int64, x val) uint32 {
	if u, ok := pack(x); ok {
		return u
	}
	if v.memoWide == nil {
		v.memoWide = map[int64]val{}
	}
	v.memoWide[id] = x
	return uint32(kWide)
}

// memoAt returns the value in dense memo slot id (kUnset if none).
func (v *vm) memoAt(id int) val {
	x := unpack(v.memo.at(id))
	if x.k == kWide {
		x = v.memoWide[int64(id)]
	}
	return x
}

// memoGet returns memo entry id.
func (v *vm) memoGet(id int64) (val, error) {
	if id >= int64(v.memoMax) {
		return val{}, errPartRef
	}
	var x val
	if id >= 0 && id < int64(v.memo.len()) {
		x = v.memoAt(int(id))
	}
	if x.k == kUnset && id >= 0 {
		// Far ids, and ids below a later dense store.
		x = v.memoFar[id]
		if x.k == kUnset && v.memoSeed != nil {
			// A lazy stack's decoder: the frames it starts with.
			x = v.memoSeed[id]
		}
	}
	switch x.k {
	case kUnset:
		if id >= v.holeLo && id < v.holeHi {
			return val{}, errSplitRestart
		}
		return val{}, v.corrupt("memo entry %d was never stored", id)
	case kRow, kStackRef:
		// A recycled container used again: an object once more.
		k := oEntry
		if x.k == kStackRef {
			k = oStack
		}
		o, err := v.newObj(k, int(x.n))
		if err != nil {
			return val{}, err
		}
		x = o
	}
	v.share(x)
	return x, nil
}

// run executes opcodes until STOP and returns the result.
func (v *vm) run() (val, error) {
	for {
		if !v.in.fill(1) {
			if v.in.readErr != nil {
				return val{}, v.short("")
			}
			if v.partial && len(v.stack) == 1 && len(v.marks) == 0 {
				return v.stack[0], nil
			}
			return val{}, &DecodeError{Offset: v.in.abs(), Kind: ErrTruncated,
				Msg: "the file ends before the pickle's STOP opcode (incomplete download or copy?)"}
		}
		if v.hook != nil && v.in.abs() >= v.in.stopAt {
			if err := v.stopped(); err != nil {
				return val{}, err
			}
			continue
		}
		if err := v.in.step(); err != nil {
			return val{}, err
		}
		if err := v.fast(); err != nil {
			return val{}, err
		}
		if v.in.pos >= len(v.in.data) || v.in.abs() >= v.in.nextStep {
			continue
		}
		v.opOff = v.in.abs()
		op := v.in.data[v.in.pos]
		v.op = op
		v.in.pos++
		if op == opStop {
			return v.stop()
		}
		h := ops[op]
		if h == nil {
			return val{}, v.unknownOp(op)
		}
		if err := h(v); err != nil {
			return val{}, err
		}
	}
}

// fast runs the common opcodes of well-formed snapshots with the position
// in a local variable. It returns at the first opcode it does not handle,
// at anything unusual (bounds, unset memo, marks), and at the next
// progress step; run then handles that opcode in full.
func (v *vm) fast() error {
	d := v.in.data
	pos := v.in.pos
	stack := v.stack
	memo := &v.memo
	limit := len(d)
	if next := v.in.nextStep - v.in.base; next < int64(limit) {
		limit = int(max(next, 0))
	}
loop:
	for pos < limit {
		switch d[pos] {
		case opBinGet, opLongBinGet:
			var id, w int
			if d[pos] == opBinGet {
				if pos+2 > len(d) {
					break loop
				}
				id, w = int(d[pos+1]), 2
			} else {
				if pos+5 > len(d) {
					break loop
				}
				id, w = int(binary.LittleEndian.Uint32(d[pos+1:])), 5
			}
			if id >= memo.len() || id >= v.memoMax {
				break loop
			}
			x := unpack(memo.raw(id))
			switch x.k {
			case kUnset, kWide, kRow, kStackRef, kPacked:
				break loop
			case kObj:
				v.objs[x.n].memo = shared
			}
			stack = append(stack, x)
			pos += w
		case opMemoize:
			n := len(stack)
			if n == 0 || (len(v.marks) > 0 && v.marks[len(v.marks)-1] >= n) || memo.len()&1023 == 0 {
				break loop
			}
			x := stack[n-1]
			u, ok := pack(x)
			if !ok || x.k == kMark {
				break loop
			}
			if x.k == kObj {
				if o := &v.objs[x.n]; o.memo == -1 {
					o.memo = int32(memo.len())
				} else {
					o.memo = shared
				}
			}
			if memo.c.room() { // push, without its call
				memo.c.put(u)
				memo.n++
			} else {
				memo.push(u)
			}
			pos++
		case opBinInt1:
			if pos+2 > len(d) {
				break loop
			}
			stack = append(stack, val{k: kInt, n: int64(d[pos+1])})
			pos += 2
		case opBinInt2:
			if pos+3 > len(d) {
				break loop
			}
			stack = append(stack, val{k: kInt, n: int64(binary.LittleEndian.Uint16(d[pos+1:]))})
			pos += 3
		case opBinInt:
			if pos+5 > len(d) {
				break loop
			}
			stack = append(stack, val{k: kInt, n: int64(int32(binary.LittleEndian.Uint32(d[pos+1:])))})
			pos += 5
		case opLong1:
			if pos+2 > len(d) {
				break loop
			}
			n := int(d[pos+1])
			if n < 1 || n > 8 || pos+2+n > len(d) {
				break loop
			}
			var u uint64
			for i := pos + 1 + n; i > pos+1; i-- {
				u = u<<8 | uint64(d[i])
			}
			if n < 8 && d[pos+1+n]&0x80 != 0 {
				u |= ^uint64(0) << (8 * n)
			}
			stack = append(stack, val{k: kInt, n: int64(u)})
			pos += 2 + n
		case opShortBinUni:
			if pos+2 > len(d) {
				break loop
			}
			n := int(d[pos+1])
			if pos+2+n > len(d) {
				break loop
			}
			i, ok := v.interned[string(d[pos+2:pos+2+n])]
			if !ok {
				break loop
			}
			stack = append(stack, val{k: kStr, n: int64(i)})
			pos += 2 + n
		case opMark:
			if v.typed {
				if end, ok := v.frameRun(d, pos, limit, stack); ok {
					pos = end
					continue
				}
			}
			if len(v.marks) >= maxMarks {
				break loop
			}
			v.marks = append(v.marks, len(stack))
			pos++
		case opNewFalse:
			stack = append(stack, val{k: kBool})
			pos++
		case opNewTrue:
			stack = append(stack, val{k: kBool, n: 1})
			pos++
		case opNone:
			stack = append(stack, val{k: kNone})
			pos++
		case opEmptyDict, opEmptyList:
			if v.typed && d[pos] == opEmptyDict {
				// A trace list's batch is entries one after another:
				// entryRun runs them in one call, testing each next
				// EMPTY_DICT itself, not through this switch (in
				// WebAssembly each of its taken jumps costs, see
				// docs/snapshot.md). The stack is v.stack meanwhile.
				v.stack = stack
				end := v.entryRun(pos, limit)
				if end < 0 {
					return v.entryErr
				}
				stack = v.stack
				if end > pos {
					pos = end
					if pos >= limit || d[pos] != opEmptyDict {
						continue
					}
				}
			}
			o := obj{kind: oDictFresh, memo: -1}
			if d[pos] == opEmptyList {
				o = obj{kind: oListFresh, idx: int32((v.in.base + int64(pos)) & math.MaxInt32), memo: -1}
			}
			if n := len(v.freeObjs); n > 0 {
				i := v.freeObjs[n-1]
				v.freeObjs = v.freeObjs[:n-1]
				v.objs[i] = o
				stack = append(stack, val{k: kObj, n: int64(i)})
				pos++
				break
			}
			if len(v.objs) >= math.MaxInt32 || len(v.objs)&1023 == 0 {
				break loop
			}
			v.objs = append(v.objs, o)
			stack = append(stack, val{k: kObj, n: int64(len(v.objs) - 1)})
			pos++
		case opAppends, opSetItems:
			nm := len(v.marks)
			if nm == 0 {
				break loop
			}
			m := v.marks[nm-1]
			if m == 0 || (nm > 1 && v.marks[nm-2] == m) {
				break loop // nothing below the mark: run reports it
			}
			items := stack[m:]
			if d[pos] == opSetItems && len(items)%2 != 0 {
				break loop
			}
			v.marks = v.marks[:nm-1]
			stack = stack[:m]
			v.op, v.opOff = d[pos], v.in.base+int64(pos)
			v.in.pos, v.stack = pos+1, stack
			var err error
			if d[pos] == opAppends {
				err = v.appendItems(stack[m-1], items)
			} else {
				err = v.setItems(stack[m-1], items)
			}
			if err != nil {
				return err
			}
			pos++
		default:
			break loop
		}
	}
	v.in.pos, v.stack = pos, stack
	return nil
}

// entryRun runs the start of a trace-entry dict in one go: EMPTY_DICT,
// MEMOIZE, MARK, then the leading pairs whose key is a memoized string and
// whose value setEntry takes on its fast path (an action string seen
// before, ints for addr, size, time_us and the last stream). The first key
// must be "action", which makes the dict an entry (classify), so its row is
// added at once and those pairs go straight to the row's columns. Then
// frames (see entryFrames). The pairs from the first other one on stay in
// the pickle, and the SETITEMS that ends the dict sets them on the row as
// before.
//
// It runs such dicts one after another (a batch of a trace list) from
// pos in v.in.data, up to limit, on v.stack, which it leaves as the stack
// after them, and returns the position after the last one: pos itself
// where the first does not start that way or something would need the
// full path (a memo or object table growing a block, a row charged to the
// budget), having changed nothing for that one; -1 on an error
// (v.entryErr). In WebAssembly a call passes its arguments and results
// through memory, and its function sets up its frame each time: fast
// calls it once a batch, with three words, not once an entry.
func (v *vm) entryRun(pos, limit int) int {
	d, memo, e, lead := v.in.data, &v.memo, v.rows, &v.lead
	// The common path below takes no jump but the loop's: in WebAssembly
	// each taken jump goes through the function's dispatch (see
	// docs/snapshot.md), so a branch's rare side returns or calls, and
	// the values that depend on a test are selected, not branched to.
	for {
		stack := v.stack
		// Room for what the dict adds (checked here, so that the tail below
		// has no append or push to call): a slot on the stack, a mark, a memo
		// slot in the last page, an object (a free one, or one in objs' room).
		// (nf|x == 0: no free object and x == 0.)
		nf, oi := len(v.freeObjs), len(v.objs)
		if pos+3 >= limit || d[pos+1] != opMemoize || d[pos+2] != opMark || len(v.marks) >= maxMarks ||
			memo.len()&1023 == 0 || e.n&1023 == 0 || e.n >= math.MaxInt32-1 ||
			len(stack) == cap(stack) || len(v.marks) == cap(v.marks) || !memo.c.room() ||
			oi >= math.MaxInt32 || nf|(oi&1023) == 0 || nf|(cap(v.objs)-oi) == 0 {
			return pos
		}
		if nf > 0 {
			oi = int(v.freeObjs[nf-1])
		}
		u, ok := pack(val{k: kObj, n: int64(oi)})
		if !ok {
			return pos
		}
		if e.streams == nil {
			e.ready() // the stream pair reads its streams
			continue
		}
		// The leading pairs' values (the last one of a key given twice), for
		// the row, by key code. A key that is the memo reference met last in
		// its place (vm.ekeys), and an action that is the action reference
		// met last in its slot (vm.eacts), is known without a memo lookup or a
		// call (a memo reference names the same string as when it was met
		// while no memo slot is stored twice); readKey and readAction look up
		// any other.
		lead[keyAction], lead[keyAddr], lead[keySize], lead[keyStream], lead[keyTimeUS] = 0, 0, 0, 0, 0
		// The pairs whose key and action are known (the common case: every
		// leading pair) are read by leadPairs, a loop that makes no call and
		// has no branch on the key or the int's opcode; in WebAssembly it is
		// written in WebAssembly (see docs/snapshot.md). Where it stops short
		// of the frames key, entryPairs goes on.
		// (A limit of pos: leadPairs reads nothing.)
		lim := limit
		if v.memoRewritten {
			lim = pos
		}
		p, i, frames := leadPairs(v, d, pos+3, lim, 0, lead)
		k := &v.ekeys[i&(len(v.ekeys)-1)]
		code, str, q := keyFrames, k.str, p+int(k.n)
		if !frames {
			if p, code, str, q, ok = v.entryPairs(d, p, limit, i); !ok {
				return pos
			}
		}
		stream := v.lastStreamIdx
		if lead[keyStream] == 0 {
			stream = 0
		}
		// The dict, memoized, under a mark, as a row.
		row := e.addRow(uint8(lead[keyAction]), uint64(lead[keyAddr]), lead[keySize], lead[keyTimeUS], stream)
		// Each has room (checked above): reslicing, no append; the object
		// is the last free one or one more.
		grow := 0
		if nf == 0 {
			grow = 1
		}
		v.freeObjs = v.freeObjs[:nf-1+grow]
		v.objs = v.objs[:len(v.objs)+grow]
		v.objs[oi] = obj{kind: oEntry, idx: int32(row), memo: int32(memo.len())}
		n := len(stack)
		stack = stack[:n+1]
		stack[n] = val{k: kObj, n: int64(oi)}
		v.stack = v.stack[:n+1] // (the same array: no write barrier)
		memo.c.put(u)
		memo.n++
		m := len(v.marks)
		v.marks = v.marks[:m+1]
		v.marks[m] = n + 1
		if code != keyFrames {
			return p // (SETITEMS or another pair follows: fast's)
		}
		// A frame list that is to be a lazy stack goes to lazyFrames'
		// common case (foldLazy, which checks entryFrames' checks before
		// it, where the stack cache is not consulted: off, or none)
		// without entryFrames' or lazyFrames' call.
		// (The stack cache's test first: on a file whose stacks repeat
		// it is on, and foldLazy is not called.)
		// (Each path ends on its own, without a join: a jump fewer.)
		if v.cacheOff || v.stackCache == nil {
			p2, n, fs, miss, end := foldLazy(v, d[:limit], q, row, true)
			if end <= 0 {
				end = v.lazyOrFrames(d, p, q, limit, stack, row, str, p2, n, fs, miss)
				if end < 0 || end >= limit || d[end] != opEmptyDict {
					return end
				}
				pos = end
				continue
			}
			if end >= limit || d[end] != opEmptyDict {
				return end
			}
			pos = end
			continue
		}
		// Where it is consulted (on a file whose stacks repeat), a known
		// list then SETITEMS goes to entryFrames' common case in one call
		// (cachedFrames, in WebAssembly written in WebAssembly, see
		// docs/snapshot.md); a list it did not find (-1) is not looked up
		// again. What it declines goes on in entryFrames.
		end := cachedFrames(v, d[:limit], q, len(stack), row)
		if end <= 0 {
			fe, st, _, err := v.entryFrames(d, p, q, limit, stack, row, val{k: kStr, n: str}, false, end < 0)
			end = v.entryEnd(fe, st, err)
		}
		if end < 0 || end >= limit || d[end] != opEmptyDict {
			return end
		}
		pos = end
	}
}

// entryPairs is entryRun's reading of the leading pairs where leadPairs
// (if the memo was not rewritten) stopped short of the frames key, at
// the i-th pair at p: readKey (and readAction) look the key up and note
// it, and the reading goes on from that pair (leadPairs again), or the
// run ends there, for the full path. It returns where it stopped, the
// key's code and string there, the value's position, and false where the
// dict is not an entry (its first key is not the action).
func (v *vm) entryPairs(d []byte, p, limit, i int) (int, uint8, int64, int, bool) {
	lead := &v.lead
	known := !v.memoRewritten
	var code uint8
	var str int64
	var q int
	read, looked := true, -1 // read: leadPairs ran at i
pairs:
	for {
		if known && !read {
			frames := false
			if p, i, frames = leadPairs(v, d, p, limit, i, lead); frames {
				k := &v.ekeys[i&(len(v.ekeys)-1)]
				code, str, q = keyFrames, k.str, p+int(k.n)
				break
			}
		}
		read = false
		if i == looked { // looked up, and still not read above
			code = keyOther
			break
		}
		code, str, q = v.readKey(d, p, limit, i)
		if i == 0 && code != keyAction {
			return 0, 0, 0, 0, false
		}
		switch code {
		case keyAction:
			action, next := v.readAction(d, q)
			lead[keyAction] = int64(action) // (0 if not read)
			if next < 0 {
				code = keyOther
				break pairs
			}
			p = next
			i++
		case keyAddr, keySize, keyTimeUS, keyStream:
			looked = i // noted: read above, if it can be
		default: // frames, or a pair for the full path
			break pairs
		}
	}
	return p, code, str, q, true
}

// lazyOrFrames is entryRun at a frame list (key at p, value at q) that
// foldLazy did not make the row's stack: lazyFrames, or lazyRest from
// foldLazy's results, as they say, then entryFrames where those decline.
// It returns the position after what it ran, v.stack then the stack, or
// -1 on an error (v.entryErr).
func (v *vm) lazyOrFrames(d []byte, p, q, limit int, stack []val, row int, str int64, p2, n int, fs folded, miss int) int {
	var end int
	var ok bool
	var err error
	tried := true
	switch miss {
	case scanUntried:
		tried = false
	case scanNoBuf:
		end, ok, err = v.lazyFrames(d, q, limit, row)
	default:
		end, ok, err = v.lazyRest(d, q, limit, row, p2, n, fs, miss)
	}
	if err == nil && !ok {
		end, stack, _, err = v.entryFrames(d, p, q, limit, stack, row, val{k: kStr, n: str}, tried, false)
	}
	return v.entryEnd(end, stack, err)
}

// entryEnd is entryRun's return after the row was added: the position
// end with v.stack set to stack, or -1 with err in v.entryErr. stack is
// v.stack appended to: while its array is the same (its capacity too),
// only the length is stored, without a write barrier (a call in every
// entry while the GC marks).
func (v *vm) entryEnd(end int, stack []val, err error) int {
	if err != nil {
		v.entryErr = err
		return -1
	}
	if cap(stack) == cap(v.stack) {
		v.stack = v.stack[:len(stack)]
	} else {
		v.stack = stack
	}
	return end
}

// memoRef reads the BINGET or LONG_BINGET at d[p]: the memo id and the
// position after it, or next < 0 if d[p] is neither or is cut off.
func memoRef(d []byte, p int) (id, next int) {
	switch {
	case p+2 <= len(d) && d[p] == opBinGet:
		return int(d[p+1]), p + 2
	case p+5 <= len(d) && d[p] == opLongBinGet:
		return int(binary.LittleEndian.Uint32(d[p+1:])), p + 5
	}
	return 0, -1
}

// readKey reads the key of the trace-entry pair at p for entryRun, the
// pair's i-th: its code, string and the position after it, noted in
// vm.ekeys (the first pair's only if it is the action, as entryRun's
// first known pair is). The code is keyOther for a key that is not a memoized string
// or for a pair that reaches the limit.
func (v *vm) readKey(d []byte, p, limit, i int) (uint8, int64, int) {
	memo := &v.memo
	if p >= limit {
		return keyOther, 0, 0
	}
	p0 := p
	id, p := memoRef(d, p)
	if p < 0 || id >= memo.len() || id >= v.memoMax {
		return keyOther, 0, 0
	}
	k := unpack(memo.raw(id)) // (a packed page's slot: the full path reads it)
	if k.k != kStr || p >= limit {
		return keyOther, 0, 0
	}
	code := v.keys[k.n]
	if code != keyOther && i < len(v.ekeys) && (i > 0 || code == keyAction) {
		v.ekeys[i] = noteKey(d[p0:p], code, k.n)
	}
	return code, k.n, p
}

// readAction reads the action at p for entryRun, a memoized string whose
// code is known: the code and the position after it, noted in vm.eacts
// (in the slot of the memo id's low bits), or next < 0 for anything else.
func (v *vm) readAction(d []byte, p int) (code uint8, next int) {
	memo := &v.memo
	p0 := p
	id, p := memoRef(d, p)
	if p < 0 || id >= memo.len() || id >= v.memoMax {
		return 0, -1
	}
	a := unpack(memo.raw(id)) // (a packed page's slot: the full path reads it)
	if a.k != kStr || v.acts[a.n] == 0 {
		return 0, -1
	}
	v.eacts[int(d[p0+1])&(len(v.eacts)-1)] = noteKey(d[p0:p], v.acts[a.n]-1, 0)
	return v.acts[a.n] - 1, p
}

// intForms describes the int opcodes entryRun reads: the width of the
// value (LONG1: given after the opcode) and whether it is signed; 0 for
// every other opcode.
var intForms = [256]uint8{opBinInt1: 1, opBinInt2: 2, opBinInt: 4 | intSigned, opLong1: intLong1 | intSigned}

// intForms' bits besides the width.
const (
	intWidth    = 15
	intSigned   = 16
	intLong1Bit = 5
	intLong1    = 1 << intLong1Bit
)

// entryKey is a trace-entry key or action string as readKey or readAction
// met it: the n bytes of its memo reference (2 or 5), read little-endian
// into enc with entryNoted set, mask the bytes' bits, its key code (an
// action string's: its action code) and its string. stream is all ones
// for the stream key: entryRun tests the stream by it without a branch.
// A zero entryKey (none noted) matches nothing.
type entryKey struct {
	enc, mask uint64
	stream    int64
	n         uint8
	code      uint8
	str       int64
}

// entryNoted is set in a noted entryKey's enc, above any reference's bytes.
const entryNoted = 1 << 63

// noteKey returns the entryKey of the memo reference b (at most 7 bytes).
func noteKey(b []byte, code uint8, str int64) entryKey {
	k := entryKey{enc: littleEndian(b) | entryNoted, mask: 1<<(8*len(b)) - 1, n: uint8(len(b)), code: code, str: str}
	if code == keyStream {
		k.stream = -1
	}
	return k
}

// matches reports whether the 8 bytes at d[p] start with k's reference.
func (k *entryKey) matches(d []byte, p int) bool {
	return binary.LittleEndian.Uint64(d[p:])&k.mask|entryNoted == k.enc
}

// littleEndian reads b (at most 8 bytes) as a little-endian number.
func littleEndian(b []byte) uint64 {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	return u
}

// entryFrames is entryRun at the frames pair: key at p, value at q. A
// value EMPTY_LIST MEMOIZE MARK is pushed with the key as the full path
// would, then frameRun reads the frames; if SETITEMS follows, it ends the
// dict (the frames are its only pair on the stack) and the list becomes
// the row's stack as setEntry would make it. Otherwise, it returns where
// the full path goes on: the key when the value is something else, the
// MARK when frameRun does not take the list, the opcode after APPENDS.
// lazyTried: entryRun tried lazyFrames on the list already; ledMissed:
// cachedFrames found that ledHit would not find it.
func (v *vm) entryFrames(d []byte, p, q, limit int, stack []val, row int, key val, lazyTried, ledMissed bool) (int, []val, bool, error) {
	memo := &v.memo
	if q+3 >= limit || d[q] != opEmptyList || d[q+1] != opMemoize || d[q+2] != opMark ||
		memo.len()&1023 == 0 || len(v.freeObjs) == 0 && (len(v.objs) >= math.MaxInt32 || len(v.objs)&1023 == 0) {
		return p, stack, true, nil
	}
	oi := len(v.objs)
	if n := len(v.freeObjs); n > 0 {
		oi = int(v.freeObjs[n-1])
	}
	l := val{k: kObj, n: int64(oi)}
	u, ok := pack(l)
	if !ok {
		return p, stack, true, nil
	}
	// frameRun, the stack cache first (cachedRun): a list it knows, then
	// SETITEMS, becomes the row's stack at once, as stackOf makes it of
	// the builder cachedRun makes. A list it does not know that is to be
	// a lazy stack, then SETITEMS, becomes one at once (lazyFrames).
	var cp int
	var cid StackID
	var hit bool
	if !v.cacheOff {
		cp, cid, hit = v.cacheLook(d, q+2, limit, !ledMissed)
	}
	if !hit && !lazyTried && v.fold != nil && v.pipe == nil && v.lazyOK && !v.memoRewritten && v.snap.Stacks.held() >= v.lazyAfter &&
		len(stack) == v.marks[len(v.marks)-1] {
		if end, ok, err := v.lazyFrames(d, q, limit, row); err != nil || ok {
			return end, stack, ok, err
		}
	}
	if hit && cp+1 < limit && d[cp+1] == opSetItems && len(stack) == v.marks[len(v.marks)-1] {
		// A known list, then the SETITEMS that ends the dict: what the
		// code below comes to (the list object made, pushed, memoized,
		// popped by SETITEMS and released as the stack, its memo slot
		// then that stack) without the round trip.
		o := obj{kind: oStack, idx: int32(cid), memo: shared}
		v.setFreeObj(oi, o)
		u := v.packWide(int64(memo.len()), val{k: kStackRef, n: int64(cid)})
		if memo.c.room() { // push, without its call
			memo.c.put(u)
			memo.n++
		} else {
			memo.push(u)
		}
		v.marks = v.marks[:len(v.marks)-1]
		v.op, v.opOff = opSetItems, v.in.base+int64(cp+1)
		v.in.pos, v.stack = cp+2, stack
		v.rows.stack.set(row, cid)
		return cp + 2, stack, true, nil
	}
	o := obj{kind: oListFresh, idx: int32((v.in.base + int64(q)) & math.MaxInt32), memo: int32(memo.len())}
	if oi < len(v.objs) {
		v.freeObjs = v.freeObjs[:len(v.freeObjs)-1]
		v.objs[oi] = o
	} else {
		v.objs = append(v.objs, o)
	}
	stack = append(stack, key, l)
	if memo.c.room() { // push, without its call
		memo.c.put(u)
		memo.n++
	} else {
		memo.push(u)
	}
	var end int
	if hit {
		v.knownList(l, q+2, cp, cid)
		end = cp + 1
	} else if end, ok = v.frameItems(d, q+2, limit, l); !ok {
		return q + 2, stack, true, nil
	}
	nm := len(v.marks)
	if end >= limit || d[end] != opSetItems || len(stack)-v.marks[nm-1] != 2 {
		return end, stack, true, nil
	}
	v.marks = v.marks[:nm-1]
	stack = stack[:len(stack)-2]
	v.op, v.opOff = opSetItems, v.in.base+int64(end)
	v.in.pos, v.stack = end+1, stack
	id, err := v.stackOf("trace entry", "frames", l)
	if err != nil {
		return 0, nil, false, err
	}
	v.rows.stack.set(row, id)
	return end + 1, stack, true, nil
}

// lazyFrames is entryFrames for a frame list (EMPTY_LIST at q, MEMOIZE,
// MARK) that is to be a lazy stack, the entry's last pair (SETITEMS
// follows the APPENDS) with nothing else above the entry's MARK: the list
// is read and folded (foldList), it becomes a lazy stack as Stacks.intern
// makes one, its memo slot that stack, the row's stack that stack, and
// the SETITEMS is run; no object or builder is made. It returns the
// position after SETITEMS, or false, having changed nothing, when the list
// is anything else (entryFrames goes on then).
func (v *vm) lazyFrames(d []byte, q, limit, row int) (int, bool, error) {
	if v.snap.Stacks.count >= 1<<27 {
		return 0, false, nil // a StackID that may not pack
	}
	// foldScan first (foldLazy: with the common case's end in the same
	// call), foldList (its loop, a second scan) only where it stopped at
	// a memo id that foldList may resolve: a call fewer per entry in
	// WebAssembly. At any other stop foldList's first scan, with the same
	// frameMemo, would stop there too and fail.
	var p, n, miss int // miss >= 0: foldList is to read the list
	var fs folded
	if v.foldBuf != nil { // !v.memoRewritten: entryFrames checked
		var end int
		if p, n, fs, miss, end = foldLazy(v, d[:limit], q, row, false); end > 0 {
			return end, true, nil
		}
	}
	return v.lazyRest(d, q, limit, row, p, n, fs, miss)
}

// lazyRest is lazyFrames after foldLazy declined, from its results (all
// zero: not called, v.foldBuf nil).
func (v *vm) lazyRest(d []byte, q, limit, row, p, n int, fs folded, miss int) (int, bool, error) {
	t := &v.snap.Stacks
	ok := v.foldBuf != nil && miss == scanEnd
	scanned := ok
	if ok && foldedHash {
		fs.h = xxEnd(fs.h, n)
	}
	if !ok && miss >= 0 {
		p, fs, n, ok = v.foldList(d, q+2, limit)
	}
	if !ok || n == 0 || p+1 >= limit || d[p+1] != opSetItems {
		return 0, false, nil
	}
	start, end := v.in.base+int64(q), v.in.base+int64(p)+1
	if !lazyFits(start, end-start, n) {
		return 0, false, nil
	}
	h := fs.h
	if !foldedHash {
		h = t.hash(v.foldBuf[:n])
	}
	at, flags, rank := lazyAt(start, int(end-start), n), uint16(fs.all), uint16(fs.best>>16)
	// foldLazy, having read the list to its APPENDS (scanned), declined:
	// most often because addLazyNew did, so addLazy, which gives the same
	// ID either way, is not preceded by it again.
	var id StackID
	added := false
	if !scanned {
		id, added = addLazyNew(t, h, at, foldKey(flags, rank, fs.site))
	}
	if !added {
		id, added = t.addLazy(h, at, n, v.fold.Finish, flags, rank, fs.site)
	}
	if added {
		if err := v.budget.charge(stackRecBytes, v); err != nil {
			return 0, false, err
		}
	}
	u, _ := pack(val{k: kStackRef, n: int64(id)})
	if v.memo.c.room() { // push, without its call
		v.memo.c.put(u)
		v.memo.n++
	} else {
		v.memo.push(u)
	}
	v.rows.stack.set(row, id)
	v.marks = v.marks[:len(v.marks)-1]
	v.op, v.opOff = opSetItems, v.in.base+int64(p+1)
	v.in.pos = p + 2
	return p + 2, true, nil
}

// frameRun runs MARK, memo references to frames, APPENDS onto the frame
// list on top of the stack (the bulk of a snapshot) in one go, straight
// into the list's builder, and returns the position after APPENDS. It
// reports false, having changed nothing, for anything else.
func (v *vm) frameRun(d []byte, pos, limit int, stack []val) (int, bool) {
	if len(stack) == 0 {
		return 0, false
	}
	l := stack[len(stack)-1]
	if l.k != kObj {
		return 0, false
	}
	if k := v.objs[l.n].kind; k != oFramesB && k != oListFresh {
		return 0, false
	}
	if v.objs[l.n].kind == oListFresh {
		if end, ok := v.cachedRun(d, pos, limit, l); ok {
			return end, true
		}
	}
	return v.frameItems(d, pos, limit, l)
}

// frameItems is frameRun once the stack cache has been tried.
func (v *vm) frameItems(d []byte, pos, limit int, l val) (int, bool) {
	if v.fold != nil && v.pipe == nil {
		return v.frameItemsFolded(d, pos, limit, l)
	}
	return v.frameItemsPlain(d, pos, limit, l)
}

// frameItemsPlain is frameItems without folding.
func (v *vm) frameItemsPlain(d []byte, pos, limit int, l val) (int, bool) {
	ids := v.scratch[:0]
	fm := v.frameMemo
	if v.memoRewritten {
		fm = nil
	}
	p := pos + 1
	for p < limit {
		var id int
		if c := d[p]; c|2 == opLongBinGet && p+5 <= len(d) {
			// BINGET ('h') or LONG_BINGET ('j', bit 1 set) without a
			// branch on which: frames below memo id 256 and above
			// alternate unpredictably.
			long := int(c>>1) & 1
			id = int(binary.LittleEndian.Uint32(d[p+1:]) & (0xff | uint32(-long)))
			p += 2 + 3*long
		} else {
			switch d[p] {
			case opBinGet:
				if p+2 > len(d) {
					return 0, false
				}
				id, p = int(d[p+1]), p+2
			case opLongBinGet:
				if p+5 > len(d) {
					return 0, false
				}
				id, p = int(binary.LittleEndian.Uint32(d[p+1:])), p+5
			case opAppends:
				v.framesEnd(d, pos, p, l, ids)
				return p + 1, true
			default:
				return 0, false
			}
		}
		if id < len(fm) {
			if f := uint32(fm[id]); f != 0 {
				ids = append(ids, FrameID(f-1))
				continue
			}
		}
		e, ok := v.memoFrame(id)
		if !ok {
			return 0, false
		}
		ids = append(ids, FrameID(uint32(e)-1))
		fm = v.frameMemo
		if v.memoRewritten {
			fm = nil
		}
	}
	return 0, false
}

// frameItemsFolded is frameItems that also folds the frames (vm.fold) and,
// in WebAssembly, hashes them as it reads them (foldList): a fresh list's
// builder gets its summary and hash.
func (v *vm) frameItemsFolded(d []byte, pos, limit int, l val) (int, bool) {
	p, fs, n, ok := v.foldList(d, pos, limit)
	if !ok {
		return v.frameItemsPlain(d, pos, limit, l)
	}
	ids := append(v.scratch[:0], v.foldBuf[:n]...)
	if b := v.framesEnd(d, pos, p, l, ids); b != nil {
		b.folded, b.sum, b.hash = true, v.fold.Finish(uint16(fs.all), uint16(fs.best>>16), fs.site), fs.h
	}
	return p + 1, true
}

// folded is what foldScan keeps of the frames it read: the OR of their
// fold words, the least rank (in the high 16 bits), the first frame of
// that rank, and the stack hash (in WebAssembly).
type folded struct {
	all, best uint32
	site      FrameID
	h         uint64
}

// foldList reads the memo references to frames after the MARK at pos up to
// the APPENDS that ends them into v.foldBuf, folding them (foldScan): the
// position of the APPENDS, the fold (its hash ended), the number of
// frames, and false, having read nothing for good, when the list is
// anything else, reaches limit or has foldMax frames or more. A memo id
// not yet in frameMemo stops foldScan; the list is read again once it is
// there.
func (v *vm) foldList(d []byte, pos, limit int) (int, folded, int, bool) {
	if v.foldBuf == nil {
		v.foldBuf = new([foldMax]FrameID)
	}
	for {
		fm := v.frameMemo
		if v.memoRewritten {
			fm = nil
		}
		p, n, fs, miss := foldScan(d[:limit], pos+1, fm, v.foldBuf, v.snap.Stacks.seed64)
		switch {
		case miss == scanEnd:
			if foldedHash {
				fs.h = xxEnd(fs.h, n)
			}
			return p, fs, n, true
		case miss >= 0:
			if _, ok := v.memoFrame(miss); !ok || miss >= len(v.frameMemo) || v.memoRewritten {
				return 0, folded{}, 0, false
			}
		default:
			return 0, folded{}, 0, false
		}
	}
}

// noFrames is foldScan's frame table when it is given none: one entry,
// no frame.
var noFrames [1]uint64

// foldMax bounds the frames of a list foldList reads: one more than a lazy
// stack may have.
const foldMax = 1 << lazyNBits

// foldScan's stops besides a memo id not in fm: the APPENDS, a full
// buffer, anything else.
const (
	scanEnd   = -1
	scanFull  = -2
	scanOther = -3
	// foldLazy's for entryRun: not to be tried here, or lazyFrames is to.
	scanUntried = -4
	scanNoBuf   = -5
)

// foldScanGo is foldScan: it reads memo references to frames from dl[p]
// on, putting their IDs in buf and folding them, until the APPENDS
// (scanEnd, p at it) or another stop; it returns the position, the
// number of IDs and the fold. Its loop makes no call (a call makes Go's
// WebAssembly code keep the loop's variables in memory) and checks few
// bounds: a reference is read only where 5 bytes are left. fm's length
// is 0 or a power of two (memoFrame grows vm.frameMemo so). Natively
// foldScan is this function; in WebAssembly it is assembly
// (foldscan_wasm.s) and this the reference TestFoldScan checks it against.
func foldScanGo(dl []byte, p int, fm []uint64, buf *[foldMax]FrameID, seed uint64) (int, int, folded, int) {
	all, best, site, h := uint32(0), uint32(0xffff)<<16, FrameID(0), xxStart(seed)
	miss := scanOther
	n := 0
	ids := buf[:] // buf's nil check here, once, not in the loop
	// Natively, two references a round from one 16-byte window: where
	// the next reference starts depends on the first one's opcode, read
	// from the window, not on a load from there, which halves the chain
	// of dependent loads the loop waits on (5.0 -> 3.9 ns a frame on the
	// distinct-stacks file). The loop below reads what is left (the end,
	// a stop, a reference that misses fm). WebAssembly takes that loop
	// alone: this one was slower there (6.5 -> 6.9 ns with the hash).
	for !foldedHash && p+16 <= len(dl) && n+2 <= foldMax {
		b := dl[p : p+16 : p+16]
		lo, hi := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		c := byte(lo)
		if c|2 != opLongBinGet {
			break
		}
		long := uint(c>>1) & 1
		id := int(uint32(lo>>8) & (0xff | -uint32(long)))
		s := (16 + 24*long) & 63 // the second reference's bit in the window
		w := lo>>s | hi<<((64-s)&63)
		c2 := byte(w)
		if c2|2 != opLongBinGet {
			break
		}
		long2 := uint(c2>>1) & 1
		id2 := int(uint32(w>>8) & (0xff | -uint32(long2)))
		var e, e2 uint64
		if id < len(fm) {
			e = fm[id]
		}
		if id2 < len(fm) {
			e2 = fm[id2]
		}
		if uint32(e) == 0 || uint32(e2) == 0 {
			break
		}
		p += int(s>>3) + 2 + 3*int(long2)
		f, f2 := FrameID(uint32(e)-1), FrameID(uint32(e2)-1)
		ids[n&(foldMax-1)] = f
		ids[(n+1)&(foldMax-1)] = f2
		n += 2
		u, u2 := uint32(e>>32), uint32(e2>>32)
		all |= u | u2
		if r := u &^ 0xffff; r < best {
			best, site = r, f
		}
		if r := u2 &^ 0xffff; r < best {
			best, site = r, f2
		}
	}
	// fm's entry for a memo id is read at id&mask and counts only where
	// id <= mask: no branch around the load, which in WebAssembly is a
	// taken jump, back through the function's dispatch loop, a reference.
	if len(fm) == 0 {
		fm = noFrames[:]
	}
	mask := len(fm) - 1
	if len(fm)&mask != 0 {
		panic("snapshot: foldScan's frame table is not a power of two long")
	}
	// The least rank and the place of its first frame here, packed
	// (rank<<32 | place): one value and one select a frame. Places
	// grow, so the least packed value is the first frame of the least
	// rank; a rank equal to the first loop's best never replaces it.
	a := foldAcc{uint64(all), uint64(best) << 32, h}
	p, n, miss = foldRefsGo(dl, p, fm, buf, n, &a)
	all, bp, h := uint32(a.all), a.bp, a.h
	if r := uint32(bp >> 32); r < best {
		best, site = r, buf[bp&(foldMax-1)]
	}
	return p, n, folded{all, best, site, h}, miss
}

// foldAcc is what foldRefsGo carries from a frame to the next: the OR of
// the fold words, the least rank and the place of its first frame packed
// (rank<<32 | place), and the stack hash (in WebAssembly).
type foldAcc struct{ all, bp, h uint64 }

// foldRefsGo is foldScan's loop after the native two-references one:
// memo references to frames from dl[p] on, their IDs put in ids from
// place n on and folded into a, until the APPENDS (miss scanEnd, p at
// it) or another stop (a memo id not in fm, scanFull, scanOther). fm is
// a power of two long and read at id&(len(fm)-1): no branch around the
// load, which in WebAssembly's Go code was a taken jump a reference. It
// returns the position, the number of IDs and the stop. In WebAssembly
// foldScan is foldScanGo with this loop, all in assembly
// (foldscan_wasm.s).
func foldRefsGo(dl []byte, p int, fm []uint64, ids *[foldMax]FrameID, n int, a *foldAcc) (int, int, int) {
	mask := len(fm) - 1
	all, bp, h := a.all, a.bp, a.h
	miss := scanOther
	// Two references a round (a round's jump back costs in WebAssembly):
	// BINGET ('h') or LONG_BINGET ('j', bit 1 set) without a branch on
	// which (frames below memo id 256 and above alternate unpredictably),
	// then the fold (the first frame of the least rank: StackFold).
	for {
		if p+5 > len(dl) {
			break
		}
		b := dl[p : p+5 : p+5]
		c := b[0]
		if c|2 != opLongBinGet {
			if c == opAppends {
				miss = scanEnd
			}
			break
		}
		long := int(c>>1) & 1
		id := int(binary.LittleEndian.Uint32(b[1:]) & (0xff | uint32(-long)))
		e := fm[id&mask]
		if uint32(e) == 0 || id > mask {
			miss = id
			break
		}
		if n == foldMax {
			miss = scanFull
			break
		}
		p += 2 + 3*long
		f := FrameID(uint32(e) - 1)
		ids[n&(foldMax-1)] = f
		w := uint32(e >> 32)
		all |= uint64(w)
		if r := uint64(w&^0xffff)<<32 | uint64(n); r < bp {
			bp = r
		}
		n++
		if foldedHash {
			h = xxStep(h, f)
		}
		if p+5 > len(dl) {
			break
		}
		b2 := dl[p : p+5 : p+5]
		c2 := b2[0]
		if c2|2 != opLongBinGet {
			if c2 == opAppends {
				miss = scanEnd
			}
			break
		}
		long2 := int(c2>>1) & 1
		id2 := int(binary.LittleEndian.Uint32(b2[1:]) & (0xff | uint32(-long2)))
		e2 := fm[id2&mask]
		if uint32(e2) == 0 || id2 > mask {
			miss = id2
			break
		}
		// n is odd here (even at a round's start), so below foldMax.
		p += 2 + 3*long2
		f2 := FrameID(uint32(e2) - 1)
		ids[n&(foldMax-1)] = f2
		w2 := uint32(e2 >> 32)
		all |= uint64(w2)
		if r := uint64(w2&^0xffff)<<32 | uint64(n); r < bp {
			bp = r
		}
		n++
		if foldedHash {
			h = xxStep(h, f2)
		}
	}
	a.all, a.bp, a.h = all, bp, h
	return p, n, miss
}

// framesEnd ends frameItems at the APPENDS at p (the list's MARK at pos):
// the frame IDs ids become the list's (a fresh list becomes a builder),
// and the scratch buffer is kept. It returns the builder when the list was
// fresh (ids are then all its frames), else nil.
func (v *vm) framesEnd(d []byte, pos, p int, l val, ids []FrameID) *builder {
	var nb *builder
	o := &v.objs[l.n]
	if len(ids) > 0 {
		fresh := o.kind == oListFresh
		if fresh {
			o.kind, o.idx = oFramesB, v.newBuilder(v.listStart(o.idx, v.in.base+int64(pos)))
		}
		b := v.builder(o.idx)
		if fresh {
			// The new builder takes the collected IDs, and
			// its (empty) buffer collects the next list's.
			b.ids, ids = ids, b.ids[:0]
			nb = b
		} else {
			b.ids = append(b.ids, ids...)
		}
		b.end = v.in.base + int64(p) + 1
		if fresh && v.cacheable() {
			b.key = string(d[pos+1 : p])
		}
	}
	v.scratch = ids
	return nb
}

// frameMemoMax bounds the memo ids vm.frameMemo covers (8 MiB).
const frameMemoMax = 1 << 20

// memoFrame looks memo id up as a frame: its frameMemo entry (the frame's
// ID + 1, and its fold word above), noted in frameMemo where it can be,
// or false when the id holds no frame.
func (v *vm) memoFrame(id int) (uint64, bool) {
	if id >= v.memo.len() || id >= v.memoMax {
		return 0, false
	}
	x := unpack(v.memo.at(id))
	if x.k != kObj || v.objs[x.n].kind != oFrame {
		return 0, false
	}
	f := v.objs[x.n].idx
	e := uint64(uint32(f) + 1)
	if v.fold != nil {
		for len(v.fwords) <= int(f) {
			v.fwords = append(v.fwords, v.fold.Word(&v.snap.Frames[len(v.fwords)]))
		}
		e |= uint64(v.fwords[f]) << 32
	}
	if id < frameMemoMax && !v.memoRewritten {
		if id >= len(v.frameMemo) {
			// A power of two long, for foldScan.
			n := max(1024, len(v.frameMemo))
			for n <= id {
				n *= 2
			}
			v.frameMemo = append(v.frameMemo, make([]uint64, min(n, frameMemoMax)-len(v.frameMemo))...)
		}
		v.frameMemo[id] = e
	}
	return e, true
}

// cachedRun is frameRun for a fresh list whose encoding, MARK, memo
// references and APPENDS, the stack cache knows: the list becomes a
// builder of that stack without a memo lookup.
func (v *vm) cachedRun(d []byte, pos, limit int, l val) (int, bool) {
	p, id, ok := v.cacheLook(d, pos, limit, true)
	if !ok {
		return 0, false
	}
	v.knownList(l, pos, p, id)
	return p + 1, true
}

// cacheLook looks the list whose MARK is at pos up in the stack cache
// (stackCache.lookup), unless the cache is off or rarely right: the
// position of the APPENDS that ends it and its stack. led: ledHit is to
// be tried first (false where cachedFrames found that it would miss).
func (v *vm) cacheLook(d []byte, pos, limit int, led bool) (int, StackID, bool) {
	if v.stackCache == nil || v.memoRewritten {
		return 0, NoStack, false
	}
	if v.cacheOff || v.cacheClosed() && v.cacheLooks > stackCacheMax && v.cacheHits < v.cacheLooks/stackCacheMiss {
		// Stacks rarely repeat: stop looking, for good (the cache takes
		// no more stacks and the counts stay).
		v.cacheOff = true
		return 0, NoStack, false
	}
	v.cacheLooks++
	if led {
		if p, id := ledHit(v.stackCache, d[pos+1:limit]); p >= 0 {
			v.cacheHits++
			return p + pos + 1, id, true
		}
	}
	p, id, ok := v.stackCache.lookup(d[pos+1 : limit])
	if !ok {
		return 0, NoStack, false
	}
	v.cacheHits++
	return p + pos + 1, id, true
}

// knownList makes the fresh list l, whose MARK is at pos and APPENDS at
// p, a builder of stack id.
func (v *vm) knownList(l val, pos, p int, id StackID) {
	o := &v.objs[l.n]
	o.kind, o.idx = oFramesB, v.newBuilder(v.listStart(o.idx, v.in.base+int64(pos)))
	b := &v.builders[o.idx]
	b.known, b.end = id, v.in.base+int64(p)+1
}

// maxCandidates bounds the 'e' bytes cachedRun tries as the end of a list
// before it parses the list's opcodes.
const maxCandidates = 2

// indexAppends returns the index of the first APPENDS byte ('e') in b, or
// -1: eight bytes at a time (bytes.IndexByte is a byte loop in
// WebAssembly).
func indexAppends(b []byte) int {
	const ones, highs, es = 0x0101010101010101, 0x8080808080808080, 0x0101010101010101 * opAppends
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:]) ^ es
		// The lowest set bit marks the first zero byte of x exactly.
		if t := (x - ones) &^ x & highs; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for ; i < len(b); i++ {
		if b[i] == opAppends {
			return i
		}
	}
	return -1
}

// cacheFull reports whether the stack cache takes no more entries.
func (v *vm) cacheFull() bool {
	return v.stackCache != nil && (v.stackCache.len() >= stackCacheMax || v.stackCache.keyBytes >= stackCacheKeys)
}

// cacheClosed reports whether the stack cache takes no more stacks: it is
// full, or new stacks are lazy (a lazy stack is not cached).
func (v *vm) cacheClosed() bool {
	return v.cacheFull() || v.lazyOK && v.snap.Stacks.held() >= v.lazyAfter
}

// cacheable reports whether a new stack may go into the stack cache: it
// holds only held stacks, and only while it has room.
func (v *vm) cacheable() bool {
	if v.memoRewritten || v.partial || v.noStackCache || v.cacheFull() {
		return false
	}
	return !v.lazyOK || v.snap.Stacks.held() < v.lazyAfter
}

// builder returns builder i to add frames to: a list the stack cache knew
// gets its frames back first, and is no longer a cache candidate.
func (v *vm) builder(i int32) *builder {
	b := &v.builders[i]
	if b.known != NoStack {
		v.syncStacks()
		b.ids = append(b.ids[:0], v.snap.Stacks.MustFrames(b.known)...)
		b.known = NoStack
	}
	b.key, b.folded = "", false
	return b
}

// stop ends the run at STOP with the value on the stack.
func (v *vm) stop() (val, error) {
	if end := v.frameEnd - v.in.abs(); end > 0 && !v.partial && !v.in.fill(int(min(end, math.MaxInt32))) {
		// Streaming of unknown size: the last frame claims more bytes than
		// the file has (checked at FRAME otherwise).
		return val{}, &DecodeError{Offset: v.frameOff, Op: "FRAME", Kind: ErrTruncated,
			Msg: fmt.Sprintf("frame ends at byte %d but the file ends before", v.frameEnd)}
	}
	if len(v.marks) != 0 {
		return val{}, v.corrupt("STOP with an open MARK")
	}
	if len(v.stack) != 1 {
		return val{}, v.corrupt("STOP with %d values on the stack, want 1", len(v.stack))
	}
	return v.stack[0], nil
}

// input is the pickle being decoded: all of it in data, or, streaming from
// src, a window of it starting at byte base.
type input struct {
	data []byte
	pos  int
	base int64
	src  io.Reader
	// ra, where set, is read from instead of src (fillChunks): chunk is the
	// read-ahead chunk the window is in (nil: none), taken counts the bytes
	// taken from ra (the reader's count, for progress).
	ra    *readAhead
	chunk []byte
	taken *int64
	// whole, where set, is the whole input in memory (Options.Data): data
	// is a window of it, never copied or written to, moved on by fill and
	// jump (moveTo), which hand what it leaves behind to wholeDone.
	whole     []byte
	wholeDone func(from, to int64)
	// eof is set once src is exhausted, readErr when it failed.
	eof     bool
	readErr error
	// size is the input's size when known exactly, else -1.
	size int64
	// Progress: rawDone and rawTotal count the caller's bytes (which
	// differ from the pickle's when it is gzip-compressed); progress is
	// called at nextStep, every `every` bytes.
	rawDone  func() int64
	rawTotal int64
	progress func(done, total int64) bool
	every    int64
	nextStep int64
	// progAt is the next progress step and stopAt where the split decode
	// stops the VM next (vm.stopped; MaxInt64: nowhere): nextStep is the
	// nearer.
	progAt, stopAt int64
}

// streamWindow is how much of a streamed input is read at a time.
var streamWindow = 4 << 20

// abs is the absolute input offset of the read position.
func (in *input) abs() int64 { return in.base + int64(in.pos) }

// buffered is the number of unread bytes in the window.
func (in *input) buffered() int { return len(in.data) - in.pos }

// left is the number of input bytes not yet read, or MaxInt64 if unknown.
func (in *input) left() int64 {
	if in.size < 0 {
		return math.MaxInt64
	}
	return in.size - in.abs()
}

// fill makes at least n unread bytes available, reading from src; it
// reports false at the end of the input (or a read error).
func (in *input) fill(n int) bool {
	if len(in.data)-in.pos >= n {
		return true
	}
	if in.ra != nil {
		return in.fillChunks(n)
	}
	if in.whole != nil {
		in.moveTo(in.abs(), n)
		return len(in.data)-in.pos >= n
	}
	if in.src == nil || in.eof {
		return false
	}
	if in.pos > 0 { // keep only the unread bytes
		m := copy(in.data, in.data[in.pos:])
		in.base += int64(in.pos)
		in.data, in.pos = in.data[:m], 0
	}
	for !in.eof && (len(in.data) < n || len(in.data) < cap(in.data)/2) {
		if len(in.data) == cap(in.data) {
			// Grow as data arrives, never to a length the input declares.
			nb := make([]byte, len(in.data), max(2*cap(in.data), streamWindow))
			copy(nb, in.data)
			in.data = nb
		}
		m, err := in.src.Read(in.data[len(in.data):cap(in.data)])
		in.data = in.data[:len(in.data)+m]
		if err != nil {
			in.eof = true
			if err != io.EOF {
				in.readErr = err
			}
		}
	}
	return len(in.data)-in.pos >= n
}

// wholeInput is the input of a decoder reading the whole input in memory,
// whole (Options.Data), done being Options.DataDone.
func wholeInput(whole []byte, done func(from, to int64)) input {
	in := input{whole: whole, wholeDone: done, size: int64(len(whole))}
	in.moveTo(0, 0)
	return in
}

// moveTo makes the window of a whole input start at offset to, at least
// n bytes long where the input has them (streamWindow or more), and hands
// the stretch the window left behind to wholeDone.
func (in *input) moveTo(to int64, n int) {
	if from := in.base; in.wholeDone != nil && to > from && in.data != nil {
		in.wholeDone(from, to)
	}
	end := min(int64(len(in.whole)), to+int64(max(n, streamWindow)))
	in.base, in.pos, in.data = to, 0, in.whole[to:end:end]
}

// finish hands the rest of a whole input, from the window's start on, to
// wholeDone: the decode is done with it (without this the last window, up
// to streamWindow and a folio, stayed mapped on a decode without a split).
func (in *input) finish() {
	if in.wholeDone != nil && in.data != nil && in.base < in.size {
		in.wholeDone(in.base, in.size)
	}
}

// fillChunks is fill from a read-ahead (in.ra): each chunk becomes the
// window, the unread bytes copied into the room before its bytes, so that
// the input is not copied once more; unread bytes that do not fit the
// room, or an n beyond one chunk, are gathered in a buffer of the
// window's own.
func (in *input) fillChunks(n int) bool {
	for len(in.data)-in.pos < n && !in.eof {
		chunk, at, err := in.ra.take()
		if err != nil {
			in.eof = true
			if err != io.EOF {
				in.readErr = err
			}
			break
		}
		*in.taken += int64(len(chunk) - at)
		tail := in.data[in.pos:]
		in.base += int64(in.pos)
		in.pos = 0
		switch {
		case len(tail) <= at:
			w := chunk[at-len(tail):]
			copy(w, tail)
			in.data = w
			in.setChunk(chunk)
		case in.chunk == nil && cap(in.data)-len(in.data) >= len(chunk)-at:
			in.data = append(tail, chunk[at:]...)
			in.ra.release(chunk)
		default:
			// Never to a length the input declares (n), as fill.
			w := make([]byte, 0, 2*(len(tail)+len(chunk)-at))
			w = append(append(w, tail...), chunk[at:]...)
			in.data = w
			in.setChunk(nil)
			in.ra.release(chunk)
		}
	}
	return len(in.data)-in.pos >= n
}

// setChunk makes chunk (nil: none) the read-ahead chunk the window is in,
// handing the one before back.
func (in *input) setChunk(chunk []byte) {
	if in.chunk != nil {
		in.ra.release(in.chunk)
	}
	in.chunk = chunk
}

// need returns the next n bytes and advances past them.
func (in *input) need(n int) ([]byte, bool) {
	if n < 0 || (n > len(in.data)-in.pos && !in.fill(n)) {
		return nil, false
	}
	b := in.data[in.pos : in.pos+n]
	in.pos += n
	return b, true
}

// line returns the bytes up to the next '\n' and advances past it; long
// is set when no '\n' comes within max bytes.
func (in *input) line(max int) (b []byte, ok, long bool) {
	for i := 0; ; i++ {
		if i > max {
			return nil, false, true
		}
		if in.pos+i >= len(in.data) && !in.fill(i+1) {
			return nil, false, false
		}
		if in.data[in.pos+i] == '\n' {
			b := in.data[in.pos : in.pos+i]
			in.pos += i + 1
			return b, true, false
		}
	}
}

// step reports progress at every ProgressEvery bytes.
func (in *input) step() error {
	if in.abs() < in.nextStep {
		return nil
	}
	if in.abs() < in.progAt {
		in.nextStep = min(in.progAt, in.stopAt)
		return nil
	}
	in.progAt = in.abs() + in.every
	in.nextStep = min(in.progAt, in.stopAt)
	if in.progress != nil {
		done := in.abs()
		if in.rawDone != nil {
			done = in.rawDone()
		}
		if !in.progress(done, in.rawTotal) {
			return &DecodeError{Offset: in.abs(), Msg: "the progress callback asked to stop", Kind: ErrCanceled}
		}
	}
	return nil
}
