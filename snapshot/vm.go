package snapshot

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"
)

// Limits that keep hostile input from exhausting memory or time.
const (
	maxMarks    = 100_000 // open MARKs
	internLimit = 64      // strings up to this length are interned
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
)

// val is one VM value: 16 bytes, no pointers.
type val struct {
	n int64
	k vkind
}

// okind is the kind of a container object.
type okind uint8

const (
	oDictFresh okind = iota // empty dict, shape not yet known
	oListFresh              // empty list
	oGenDict                // idx: vm.gens
	oGenList                // idx: vm.gens
	oTuple                  // idx: vm.gens
	oFrame                  // idx: FrameID
	oFrameB                 // frame dict not yet interned; idx: vm.fbuild
	oEntry                  // idx: vm.entries
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
}

// gen is a generic container: list or tuple items, or dict keys and values
// interleaved.
type gen struct {
	items []val
	index map[string]int // dict: string key -> position of the key, once large
}

// rng is a typed list: a run [start, end) of one arena.
type rng struct{ start, end int32 }

// vm decodes a pickle. With typed set, dicts are typed by their keys as
// they are filled (trace entries, frames, blocks, segments, history) and
// stored straight into arenas; lists of typed items become runs of the
// arena, and frame lists become interned stacks.
type vm struct {
	// data is the input, or for streaming (src != nil) a window of it
	// starting at byte base; pos is the read position in data.
	data  []byte
	pos   int
	base  int64
	typed bool
	// src streams the input (nil when data holds all of it); eof is set
	// once it is exhausted and readErr when it failed.
	src     io.Reader
	eof     bool
	readErr error
	// size is the input's size when known exactly, else -1.
	size int64
	// rawDone and rawTotal report progress on the caller's bytes (which
	// differ from the pickle's when it is gzip-compressed).
	rawDone  func() int64
	rawTotal int64

	stack []val
	marks []int
	memo  []val
	// memoMap holds memo ids far beyond len(memo).
	memoMap map[int64]val

	objs     []obj
	gens     []gen
	strs     []string
	keys     []uint8 // per string: its trace-entry key code
	bigs     []*big.Int
	bytes    [][]byte
	interned map[string]int32

	snap     *Snapshot
	in       *interner
	entries  []TraceEntry
	blocks   []Block
	segs     []Segment
	hists    []HistoryEntry
	fbuild   []Frame
	ranges   []rng
	builders [][]FrameID
	freeB    []int32

	proto    int
	ctx      context.Context
	progress func(done, total int64) bool
	every    int64
	nextStep int64

	// op and opOff are the opcode being executed and its offset, for errors.
	op    byte
	opOff int64
	// frameEnd is where the last FRAME declared its end, frameOff where
	// that FRAME was.
	frameEnd, frameOff int64
	// budget bounds the values generic conversion may produce.
	budget int
	// dicts is the number of '}' bytes in the input; dictsSeen counts
	// EMPTY_DICT opcodes run so far.
	dicts, dictsSeen int
	// entriesFrom is where the first trace entry started.
	entriesFrom int64
}

func newVM(data []byte, typed bool, o *DecodeOptions) *vm {
	v := &vm{data: data, typed: typed, interned: map[string]int32{}, size: int64(len(data)), rawTotal: int64(len(data))}
	v.snap = &Snapshot{}
	v.in = newInterner(v.snap)
	if o != nil {
		v.ctx, v.progress, v.every = o.Context, o.Progress, o.ProgressEvery
	}
	if v.every <= 0 {
		v.every = 1 << 20
	}
	v.nextStep = v.every
	v.budget = 16*len(data) + 1<<20
	// Size the tables from one byte count (a fast upper bound: every
	// EMPTY_DICT is a '}' byte, though not every '}' byte is an opcode).
	// Snapshots hold about one list and two memo entries per dict, and the
	// count runs high (ints contain '}' bytes), so one dict per '}' plus a
	// little covers both tables without growing them. The caps
	// keep bytes inside strings from reserving far more than the file size.
	v.dicts = bytes.Count(data, []byte{opEmptyDict})
	v.memo = make([]val, 0, min(v.dicts+len(data)/128, len(data)/8)+16)
	v.objs = make([]obj, 0, min(v.dicts+len(data)/128, len(data)/4)+16)
	v.stack = make([]val, 0, 64)
	return v
}

// streamWindow is how much of a streamed input is read at a time.
var streamWindow = 4 << 20

// newStreamVM decodes from src; size is the pickle's exact size or -1.
func newStreamVM(src io.Reader, size int64, typed bool, o *DecodeOptions) *vm {
	v := newVM(nil, typed, o)
	v.src, v.size = src, size
	v.dicts = math.MaxInt // unknown: size the entries arena from the size
	if size > 0 {
		v.memo = make([]val, 0, min(size/32, 1<<26))
		v.objs = make([]obj, 0, min(size/32, 1<<26))
	}
	return v
}

// abs is the absolute input offset of the read position.
func (v *vm) abs() int64 { return v.base + int64(v.pos) }

// left is the number of input bytes not yet read, or MaxInt64 if unknown.
func (v *vm) left() int64 {
	if v.size < 0 {
		return math.MaxInt64
	}
	return v.size - v.abs()
}

// fill makes at least n unread bytes available, reading from src; it
// reports false at the end of the input (or a read error).
func (v *vm) fill(n int) bool {
	if len(v.data)-v.pos >= n {
		return true
	}
	if v.src == nil || v.eof {
		return false
	}
	if v.pos > 0 { // keep only the unread bytes
		m := copy(v.data, v.data[v.pos:])
		v.base += int64(v.pos)
		v.data, v.pos = v.data[:m], 0
	}
	for !v.eof && (len(v.data) < n || len(v.data) < cap(v.data)/2) {
		if len(v.data) == cap(v.data) {
			// Grow as data arrives, never to a length the input declares.
			nb := make([]byte, len(v.data), max(2*cap(v.data), streamWindow))
			copy(nb, v.data)
			v.data = nb
		}
		m, err := v.src.Read(v.data[len(v.data):cap(v.data)])
		v.data = v.data[:len(v.data)+m]
		v.budget += 16 * m
		if err != nil {
			v.eof = true
			if err != io.EOF {
				v.readErr = err
			}
		}
	}
	return len(v.data)-v.pos >= n
}

// short reports a lack of input: the read error, or truncation.
func (v *vm) short(msg string) error {
	if v.readErr != nil {
		return &DecodeError{Offset: v.abs(), Kind: ErrTruncated, Msg: "reading the file failed: " + v.readErr.Error()}
	}
	return &DecodeError{Offset: v.opOff, Op: opNames[v.op], Kind: ErrTruncated, Msg: msg}
}

// clampLen bounds a declared length by the input left (plus one, so that
// need reports the truncation) and by what an int can hold.
func (v *vm) clampLen(n uint64) int {
	if l := v.left(); l < math.MaxInt64 && n > uint64(l) {
		return int(l) + 1
	}
	return int(min(n, math.MaxInt32*2))
}

func (v *vm) fail(kind error, format string, args ...any) error {
	return &DecodeError{Offset: v.opOff, Op: opNames[v.op], Msg: fmt.Sprintf(format, args...), Kind: kind}
}

func (v *vm) corrupt(format string, args ...any) error {
	return v.fail(ErrCorrupt, format, args...)
}

// need returns the next n bytes, or a truncation error.
func (v *vm) need(n int) ([]byte, error) {
	if n < 0 || (n > len(v.data)-v.pos && !v.fill(n)) {
		return nil, v.short(fmt.Sprintf("needs %d bytes but only %d are left", n, len(v.data)-v.pos))
	}
	b := v.data[v.pos : v.pos+n]
	v.pos += n
	return b, nil
}

// line returns the bytes up to the next '\n' (protocol 0 arguments).
func (v *vm) line() ([]byte, error) {
	for i := 0; ; i++ {
		if v.pos+i >= len(v.data) && !v.fill(i+1) {
			return nil, v.short("the line argument has no end")
		}
		if v.data[v.pos+i] == '\n' {
			b := v.data[v.pos : v.pos+i]
			v.pos += i + 1
			return b, nil
		}
	}
}

// push pushes x. The stack needs no bound: every opcode reads at least one
// input byte and pushes at most one value.
func (v *vm) push(x val) error {
	v.stack = append(v.stack, x)
	return nil
}

func (v *vm) pop() (val, error) {
	n := len(v.stack)
	if n == 0 || (len(v.marks) > 0 && v.marks[len(v.marks)-1] == n) {
		return val{}, v.corrupt("stack underflow")
	}
	x := v.stack[n-1]
	v.stack = v.stack[:n-1]
	return x, nil
}

func (v *vm) top() (*val, error) {
	n := len(v.stack)
	if n == 0 || (len(v.marks) > 0 && v.marks[len(v.marks)-1] == n) {
		return nil, v.corrupt("stack underflow")
	}
	return &v.stack[n-1], nil
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

func (v *vm) newObj(k okind, idx int) (val, error) {
	if len(v.objs) >= math.MaxInt32 || idx > math.MaxInt32 {
		return val{}, v.corrupt("too many objects")
	}
	v.objs = append(v.objs, obj{kind: k, idx: int32(idx)})
	return val{k: kObj, n: int64(len(v.objs) - 1)}, nil
}

func (v *vm) newGen(k okind, items []val) (val, error) {
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
			return v.push(val{k: kStr, n: int64(i)})
		}
		s := string(b)
		v.strs = append(v.strs, s)
		v.keys = append(v.keys, keyCodes[s])
		v.interned[s] = int32(len(v.strs) - 1)
	} else {
		v.strs = append(v.strs, string(b))
		v.keys = append(v.keys, keyOther)
	}
	return v.push(val{k: kStr, n: int64(len(v.strs) - 1)})
}

// pushInt pushes a little-endian two's complement integer of any length.
func (v *vm) pushLong(b []byte) error {
	n := len(b)
	if n == 0 {
		return v.push(val{k: kInt})
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
		return v.push(val{k: kInt, n: int64(u)})
	}
	if n == 9 && !neg && b[8] == 0 {
		var u uint64
		for i := 7; i >= 0; i-- {
			u = u<<8 | uint64(b[i])
		}
		return v.push(val{k: kUint, n: int64(u)})
	}
	be := make([]byte, n)
	for i := range n {
		be[i] = b[n-1-i]
	}
	x := new(big.Int).SetBytes(be)
	if neg {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	v.bigs = append(v.bigs, x)
	return v.push(val{k: kBig, n: int64(len(v.bigs) - 1)})
}

// pushBigText pushes a decimal integer (INT/LONG text forms).
func (v *vm) pushText(s string) error {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v.push(val{k: kInt, n: i})
	}
	x, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return v.corrupt("bad integer %q", s)
	}
	if x.IsUint64() {
		return v.push(val{k: kUint, n: int64(x.Uint64())})
	}
	v.bigs = append(v.bigs, x)
	return v.push(val{k: kBig, n: int64(len(v.bigs) - 1)})
}

func (v *vm) memoPut(id int64, x val) error {
	if x.k == kMark {
		return v.corrupt("cannot memoize a MARK")
	}
	if id < 0 {
		return v.corrupt("negative memo id %d", id)
	}
	if id < int64(len(v.memo)) {
		v.memo[id] = x
		return nil
	}
	// Dense storage only as far as the input could have filled it (each
	// memo store takes at least one byte); a far id goes to the map.
	if id <= int64(len(v.memo))+1024 || id <= int64(v.pos) {
		for int64(len(v.memo)) < id {
			v.memo = append(v.memo, val{})
		}
		v.memo = append(v.memo, x)
		return nil
	}
	if v.memoMap == nil {
		v.memoMap = map[int64]val{}
	}
	v.memoMap[id] = x
	return nil
}

func (v *vm) memoGet(id int64) error {
	var x val
	if id >= 0 && id < int64(len(v.memo)) {
		x = v.memo[id]
	} else if id >= 0 {
		x = v.memoMap[id]
	}
	if x.k == kUnset {
		return v.corrupt("memo entry %d was never stored", id)
	}
	return v.push(x)
}

// run executes opcodes until STOP and returns the result.
func (v *vm) run() (val, error) {
	for {
		if v.pos >= len(v.data) && !v.fill(1) {
			if v.readErr != nil {
				return val{}, v.short("")
			}
			return val{}, &DecodeError{Offset: v.abs(), Kind: ErrTruncated,
				Msg: "the file ends before the pickle's STOP opcode (incomplete download or copy?)"}
		}
		if v.abs() >= v.nextStep {
			if err := v.step(); err != nil {
				return val{}, err
			}
		}
		if err := v.fast(); err != nil {
			return val{}, err
		}
		if v.pos >= len(v.data) {
			continue
		}
		v.opOff = v.abs()
		op := v.data[v.pos]
		v.op = op
		v.pos++
		var err error
		switch op {
		case opBinGet, opLongBinGet, opGet:
			var id int64
			if id, err = v.memoID(op); err == nil {
				err = v.memoGet(id)
			}
		case opMemoize:
			var t *val
			if t, err = v.top(); err == nil {
				err = v.memoPut(int64(len(v.memo)), *t)
			}
		case opBinInt1:
			var b []byte
			if b, err = v.need(1); err == nil {
				err = v.push(val{k: kInt, n: int64(b[0])})
			}
		case opShortBinUni:
			var b []byte
			if b, err = v.need(1); err == nil {
				if b, err = v.need(int(b[0])); err == nil {
					err = v.str(b)
				}
			}
		case opMark:
			if len(v.marks) >= maxMarks {
				return val{}, v.corrupt("more than %d nested MARKs", maxMarks)
			}
			v.marks = append(v.marks, len(v.stack))
		case opStop:
			if end := v.frameEnd - v.abs(); end > 0 && !v.fill(int(end)) {
				// Streaming of unknown size: the last frame claims more
				// bytes than the file has (checked at FRAME otherwise).
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
		case opPop:
			_, err = v.pop()
		case opPopMark:
			_, err = v.popMark()
		case opDup:
			var t *val
			if t, err = v.top(); err == nil {
				err = v.push(*t)
			}
		case opProto:
			var b []byte
			if b, err = v.need(1); err == nil {
				if b[0] > 5 {
					return val{}, v.fail(ErrCorrupt, "unsupported pickle protocol %d (0-5 exist)", b[0])
				}
				v.proto = int(b[0])
			}
		case opFrame:
			var b []byte
			if b, err = v.need(8); err == nil {
				n := binary.LittleEndian.Uint64(b)
				if n > uint64(v.left()) {
					return val{}, &DecodeError{Offset: v.opOff, Op: "FRAME", Kind: ErrTruncated,
						Msg: fmt.Sprintf("frame of %d bytes but only %d are left", n, v.left())}
				}
				v.frameEnd, v.frameOff = v.abs()+int64(min(n, math.MaxInt32)), v.opOff
			}
		case opNone:
			err = v.push(val{k: kNone})
		case opNewTrue:
			err = v.push(val{k: kBool, n: 1})
		case opNewFalse:
			err = v.push(val{k: kBool})
		case opBinInt:
			var b []byte
			if b, err = v.need(4); err == nil {
				err = v.push(val{k: kInt, n: int64(int32(binary.LittleEndian.Uint32(b)))})
			}
		case opBinInt2:
			var b []byte
			if b, err = v.need(2); err == nil {
				err = v.push(val{k: kInt, n: int64(binary.LittleEndian.Uint16(b))})
			}
		case opLong1:
			var b []byte
			if b, err = v.need(1); err == nil {
				if b, err = v.need(int(b[0])); err == nil {
					err = v.pushLong(b)
				}
			}
		case opLong4:
			var b []byte
			if b, err = v.need(4); err == nil {
				n := int32(binary.LittleEndian.Uint32(b))
				if n < 0 {
					return val{}, v.corrupt("negative length %d", n)
				}
				if b, err = v.need(int(n)); err == nil {
					err = v.pushLong(b)
				}
			}
		case opInt:
			var b []byte
			if b, err = v.line(); err == nil {
				switch string(b) {
				case "01":
					err = v.push(val{k: kBool, n: 1})
				case "00":
					err = v.push(val{k: kBool})
				default:
					err = v.pushText(string(b))
				}
			}
		case opLong:
			var b []byte
			if b, err = v.line(); err == nil {
				s := string(b)
				if len(s) > 0 && s[len(s)-1] == 'L' {
					s = s[:len(s)-1]
				}
				err = v.pushText(s)
			}
		case opBinFloat:
			var b []byte
			if b, err = v.need(8); err == nil {
				err = v.push(val{k: kFloat, n: int64(binary.BigEndian.Uint64(b))})
			}
		case opFloat:
			var b []byte
			if b, err = v.line(); err == nil {
				f, perr := strconv.ParseFloat(string(b), 64)
				if perr != nil {
					return val{}, v.corrupt("bad float %q", b)
				}
				err = v.push(val{k: kFloat, n: int64(math.Float64bits(f))})
			}
		case opBinUnicode:
			var b []byte
			if b, err = v.need(4); err == nil {
				if b, err = v.need(int(binary.LittleEndian.Uint32(b))); err == nil {
					err = v.str(b)
				}
			}
		case opBinUnicode8:
			var b []byte
			if b, err = v.need(8); err == nil {
				if b, err = v.need(v.clampLen(binary.LittleEndian.Uint64(b))); err == nil {
					err = v.str(b)
				}
			}
		case opUnicode:
			var b []byte
			if b, err = v.line(); err == nil {
				var s string
				if s, err = v.rawUnicodeEscape(b); err == nil {
					err = v.pushStr([]byte(s))
				}
			}
		case opShortBinString, opBinString, opString:
			err = v.legacyString(op)
		case opShortBinBytes, opBinBytes, opBinBytes8:
			err = v.binBytes(op)
		case opEmptyDict:
			v.dictsSeen++
			var x val
			if x, err = v.newObj(oDictFresh, 0); err == nil {
				err = v.push(x)
			}
		case opEmptyList:
			var x val
			if x, err = v.newObj(oListFresh, 0); err == nil {
				err = v.push(x)
			}
		case opEmptyTuple:
			var x val
			if x, err = v.newGen(oTuple, nil); err == nil {
				err = v.push(x)
			}
		case opTuple1, opTuple2, opTuple3:
			n := int(op-opTuple1) + 1
			if len(v.stack) < n || (len(v.marks) > 0 && v.marks[len(v.marks)-1] > len(v.stack)-n) {
				return val{}, v.corrupt("stack underflow")
			}
			items := append([]val(nil), v.stack[len(v.stack)-n:]...)
			v.stack = v.stack[:len(v.stack)-n]
			var x val
			if x, err = v.newGen(oTuple, items); err == nil {
				err = v.push(x)
			}
		case opTuple:
			var items []val
			if items, err = v.popMark(); err == nil {
				var x val
				if x, err = v.newGen(oTuple, append([]val(nil), items...)); err == nil {
					err = v.push(x)
				}
			}
		case opList:
			var items []val
			if items, err = v.popMark(); err == nil {
				items = append([]val(nil), items...)
				var x val
				if x, err = v.newObj(oListFresh, 0); err == nil {
					if err = v.push(x); err == nil && len(items) > 0 {
						err = v.appendItems(x, items)
					}
				}
			}
		case opDict:
			var items []val
			if items, err = v.popMark(); err == nil {
				items = append([]val(nil), items...)
				var x val
				if x, err = v.newObj(oDictFresh, 0); err == nil {
					if err = v.push(x); err == nil && len(items) > 0 {
						err = v.setItems(x, items)
					}
				}
			}
		case opAppend:
			var x val
			if x, err = v.pop(); err == nil {
				var l *val
				if l, err = v.top(); err == nil {
					err = v.appendItems(*l, []val{x})
				}
			}
		case opAppends:
			var items []val
			if items, err = v.popMark(); err == nil {
				var l *val
				if l, err = v.top(); err == nil {
					err = v.appendItems(*l, items)
				}
			}
		case opSetItem:
			if len(v.stack) < 3 || (len(v.marks) > 0 && v.marks[len(v.marks)-1] > len(v.stack)-3) {
				return val{}, v.corrupt("stack underflow")
			}
			kv := [2]val{v.stack[len(v.stack)-2], v.stack[len(v.stack)-1]}
			v.stack = v.stack[:len(v.stack)-2]
			err = v.setItems(v.stack[len(v.stack)-1], kv[:])
		case opSetItems:
			var items []val
			if items, err = v.popMark(); err == nil {
				var dv *val
				if dv, err = v.top(); err == nil {
					if len(items)%2 != 0 {
						return val{}, v.corrupt("odd number of items (%d) for a dict", len(items))
					}
					err = v.setItems(*dv, items)
				}
			}
		case opBinPut, opLongBinPut, opPut:
			var id int64
			if id, err = v.memoID(op); err == nil {
				var t *val
				if t, err = v.top(); err == nil {
					err = v.memoPut(id, *t)
				}
			}
		case opGlobal, opStackGlobal, opReduce, opBuild, opNewObj, opNewObjEx, opInst, opObj,
			opPersID, opBinPersID, opExt1, opExt2, opExt4:
			return val{}, v.fail(ErrUnsafe, "refusing %s: it imports or calls Python code, which a memory snapshot never needs", opNames[op])
		case opByteArray8, opNextBuffer, opReadOnlyBuffer:
			return val{}, v.fail(ErrUnsafe, "refusing %s: bytearrays and out-of-band buffers never occur in a memory snapshot", opNames[op])
		case opEmptySet, opAddItems, opFrozenSet:
			return val{}, v.fail(ErrUnsafe, "refusing %s: sets never occur in a memory snapshot", opNames[op])
		default:
			return val{}, v.corrupt("unknown opcode 0x%02x", op)
		}
		if err != nil {
			return val{}, err
		}
	}
}

// fast runs the common opcodes of well-formed snapshots with the position
// in a local variable. It returns at the first opcode it does not handle,
// at anything unusual (bounds, unset memo, marks), and at the next
// progress step; run then handles that opcode in full.
func (v *vm) fast() error {
	d := v.data
	pos := v.pos
	stack := v.stack
	memo := v.memo
	limit := len(d)
	if next := v.nextStep - v.base; next < int64(limit) {
		limit = int(max(next, 0))
	}
loop:
	for pos < limit {
		switch d[pos] {
		case opBinGet:
			if pos+2 > len(d) {
				break loop
			}
			id := int(d[pos+1])
			if id >= len(memo) || memo[id].k == kUnset {
				break loop
			}
			stack = append(stack, memo[id])
			pos += 2
		case opLongBinGet:
			if pos+5 > len(d) {
				break loop
			}
			id := int(binary.LittleEndian.Uint32(d[pos+1:]))
			if id >= len(memo) || memo[id].k == kUnset {
				break loop
			}
			stack = append(stack, memo[id])
			pos += 5
		case opMemoize:
			n := len(stack)
			if n == 0 || (len(v.marks) > 0 && v.marks[len(v.marks)-1] >= n) {
				break loop
			}
			memo = append(memo, stack[n-1])
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
			if len(v.objs) >= math.MaxInt32 {
				break loop
			}
			k := oListFresh
			if d[pos] == opEmptyDict {
				k = oDictFresh
				v.dictsSeen++
			}
			v.objs = append(v.objs, obj{kind: k})
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
			v.op, v.opOff = d[pos], v.base+int64(pos)
			v.pos, v.stack, v.memo = pos+1, stack, memo
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
	v.pos, v.stack, v.memo = pos, stack, memo
	return nil
}

// step reports progress and checks for cancellation.
func (v *vm) step() error {
	v.nextStep = v.abs() + v.every
	if v.ctx != nil {
		if err := v.ctx.Err(); err != nil {
			return &DecodeError{Offset: v.abs(), Msg: err.Error(), Kind: ErrCanceled}
		}
	}
	if v.progress != nil {
		done := v.abs()
		if v.rawDone != nil {
			done = v.rawDone()
		}
		if !v.progress(done, v.rawTotal) {
			return &DecodeError{Offset: v.abs(), Msg: "the progress callback asked to stop", Kind: ErrCanceled}
		}
	}
	return nil
}

func (v *vm) memoID(op byte) (int64, error) {
	switch op {
	case opBinPut, opBinGet:
		b, err := v.need(1)
		if err != nil {
			return 0, err
		}
		return int64(b[0]), nil
	case opLongBinPut, opLongBinGet:
		b, err := v.need(4)
		if err != nil {
			return 0, err
		}
		return int64(binary.LittleEndian.Uint32(b)), nil
	}
	b, err := v.line()
	if err != nil {
		return 0, err
	}
	id, perr := strconv.ParseInt(string(b), 10, 64)
	if perr != nil || id < 0 {
		return 0, v.corrupt("bad memo id %q", b)
	}
	return id, nil
}

// legacyString decodes Python 2 str opcodes as text, as gopickle does.
func (v *vm) legacyString(op byte) error {
	var b []byte
	var err error
	switch op {
	case opShortBinString:
		if b, err = v.need(1); err == nil {
			b, err = v.need(int(b[0]))
		}
	case opBinString:
		if b, err = v.need(4); err == nil {
			n := int32(binary.LittleEndian.Uint32(b))
			if n < 0 {
				return v.corrupt("negative length %d", n)
			}
			b, err = v.need(int(n))
		}
	default:
		if b, err = v.line(); err == nil {
			if len(b) < 2 || b[0] != b[len(b)-1] || (b[0] != '\'' && b[0] != '"') {
				return v.corrupt("STRING argument is not quoted")
			}
			var s string
			if s, err = strconv.Unquote(`"` + string(b[1:len(b)-1]) + `"`); err != nil {
				return v.corrupt("bad STRING escape")
			}
			b = []byte(s)
		}
	}
	if err != nil {
		return err
	}
	return v.str(b)
}

func (v *vm) binBytes(op byte) error {
	var n uint64
	switch op {
	case opShortBinBytes:
		b, err := v.need(1)
		if err != nil {
			return err
		}
		n = uint64(b[0])
	case opBinBytes:
		b, err := v.need(4)
		if err != nil {
			return err
		}
		n = uint64(binary.LittleEndian.Uint32(b))
	default:
		b, err := v.need(8)
		if err != nil {
			return err
		}
		n = binary.LittleEndian.Uint64(b)
	}
	b, err := v.need(v.clampLen(n))
	if err != nil {
		return err
	}
	v.bytes = append(v.bytes, append([]byte{}, b...))
	return v.push(val{k: kBytes, n: int64(len(v.bytes) - 1)})
}

// rawUnicodeEscape decodes Python's raw-unicode-escape codec (UNICODE).
func (v *vm) rawUnicodeEscape(b []byte) (string, error) {
	out := make([]rune, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\\' && i+1 < len(b) && (b[i+1] == 'u' || b[i+1] == 'U') {
			// An escape only if preceded by an even number of backslashes.
			bs := 0
			for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
				bs++
			}
			if bs%2 == 0 {
				n := 4
				if b[i+1] == 'U' {
					n = 8
				}
				if i+2+n > len(b) {
					return "", v.corrupt("truncated \\u escape")
				}
				r, err := strconv.ParseUint(string(b[i+2:i+2+n]), 16, 32)
				if err != nil || r > utf8.MaxRune {
					return "", v.corrupt("bad \\u escape")
				}
				out = append(out, rune(r))
				i += 1 + n
				continue
			}
		}
		out = append(out, rune(c)) // Latin-1
	}
	return string(out), nil
}
