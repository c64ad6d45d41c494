package snapshot

import (
	"encoding/binary"
	"errors"
	"math"
	"unsafe"
)

// partMagic starts a Part's binary form (version 1).
const partMagic = "OOMSPRT1"

// MarshalBinary encodes the part (for postMessage between workers): the
// prefix state it was decoded from, then its rows by column (raw
// little-endian), their rare fields, and its new stacks. A part that holds
// entries with keys beyond the common ones (EntryExtra) is not encoded.
func (p *Part) MarshalBinary() ([]byte, error) {
	if p == nil || p.used || p.rows == nil || p.st == nil {
		return nil, errors.New("snapshot: the part was taken or is empty")
	}
	e, t := p.rows, p.st
	if rows, _ := sparseFrom(&e.extra, p.r0); len(rows) > 0 {
		return nil, errors.New("snapshot: the part has entries with rare keys (not encoded)")
	}
	n, ns := e.n-p.r0, t.count-p.s0
	b := make([]byte, 0, 1024+n*31+ns*20+len(t.sumTab)*8)
	b = append(b, partMagic...)
	for _, x := range []int64{p.size, p.at, p.start, p.end, int64(p.seed), p.memoN, int64(p.memoHash), int64(p.stacksHash), p.stacksN, p.framesN,
		p.rowsN, p.streamsN, p.names, p.memoAdd, p.frameEnd, p.frameOff, p.spent, p.refs} {
		b = binary.AppendVarint(b, x)
	}
	b = binary.AppendUvarint(b, uint64(len(p.stack)))
	for _, x := range p.stack {
		b = append(b, byte(x.k))
		b = binary.AppendVarint(b, x.n)
	}
	b = binary.AppendUvarint(b, uint64(len(p.marks)))
	for _, m := range p.marks {
		b = binary.AppendVarint(b, m)
	}
	for _, x := range [][]byte{p.head, p.tail} {
		b = binary.AppendUvarint(b, uint64(len(x)))
		b = append(b, x...)
	}
	b = binary.AppendUvarint(b, uint64(len(p.streams)))
	for _, s := range p.streams {
		b = binary.LittleEndian.AppendUint64(b, s)
	}
	b = binary.AppendUvarint(b, uint64(len(p.newNames)))
	for _, a := range p.newNames {
		b = appendString(b, string(a))
	}
	// Rows.
	b = binary.AppendUvarint(b, uint64(n))
	b = appendRaw(b, &e.action, p.r0, e.n)
	for i := p.r0; i < e.n; i++ {
		b = binary.LittleEndian.AppendUint64(b, e.addr.at(i))
	}
	for i := p.r0; i < e.n; i++ {
		b = binary.LittleEndian.AppendUint64(b, uint64(e.size.at(i)))
	}
	b = appendRaw(b, &e.stream.column, p.r0, e.n)
	for i := p.r0; i < e.n; i++ {
		b = binary.LittleEndian.AppendUint64(b, uint64(e.time.at(i)))
	}
	b = appendRaw(b, &e.stack, p.r0, e.n)
	rows, dev := sparseFrom(&e.deviceFree, p.r0)
	b = appendRows(b, rows)
	for _, x := range dev {
		b = binary.AppendVarint(b, x)
	}
	for _, sp := range []*sparse[string]{&e.compile, &e.user} {
		rows, strs := sparseFrom(sp, p.r0)
		b = appendRows(b, rows)
		for _, s := range strs {
			b = appendString(b, s)
		}
	}
	// Stacks: places (a held one's is not lazy: its frames follow), the
	// summaries (an index in the summary table), hashes.
	b = binary.AppendUvarint(b, uint64(ns))
	b = appendRaw(b, &t.at, p.s0, t.count)
	b = t.sum.appendRaw(b, p.s0, t.count)
	b = appendRaw(b, &t.hashes, p.s0, t.count)
	b = binary.AppendUvarint(b, uint64(len(t.sumTab)))
	for _, x := range t.sumTab {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	for j := p.s0; j < t.count; j++ {
		if t.at.at(j)&lazyFlag == 0 {
			st := t.MustFrames(StackID(j))
			b = binary.AppendUvarint(b, uint64(len(st)))
			for _, f := range st {
				b = binary.AppendUvarint(b, uint64(f))
			}
		}
	}
	return binary.LittleEndian.AppendUint64(b, wireSum(b)), nil
}

// wireSum checksums a part's binary form (a word at a time, xxHash's
// round): a blob damaged on its way is refused whole.
func wireSum(b []byte) uint64 {
	h := uint64(len(b)) + xxP5
	for len(b) >= 8 {
		h = rotl(h+binary.LittleEndian.Uint64(b)*xxP2, 31) * xxP1
		b = b[8:]
	}
	for _, c := range b {
		h = rotl(h^uint64(c)*xxP5, 11) * xxP1
	}
	return xxAvalanche(h)
}

// checkWireSum, when false, lets a blob through without its checksum
// (the fuzz test reaches the structure's checks).
var checkWireSum = true

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendRows(b []byte, rows []int32) []byte {
	b = binary.AppendUvarint(b, uint64(len(rows)))
	for _, r := range rows {
		b = binary.AppendUvarint(b, uint64(r))
	}
	return b
}

// wire reads a Part's binary form; the first error sticks.
type wire struct {
	b   []byte
	err error
}

func (w *wire) fail() {
	if w.err == nil {
		w.err = errors.New("snapshot: not a part (corrupt or from another version)")
	}
	w.b = nil
}

func (w *wire) uvarint() uint64 {
	x, n := binary.Uvarint(w.b)
	if n <= 0 {
		w.fail()
		return 0
	}
	w.b = w.b[n:]
	return x
}

func (w *wire) varint() int64 {
	x, n := binary.Varint(w.b)
	if n <= 0 {
		w.fail()
		return 0
	}
	w.b = w.b[n:]
	return x
}

// count reads a count of items of at least each bytes (bounded by what is
// left, so that no length makes a large allocation).
func (w *wire) count(each int) int {
	x := w.uvarint()
	if x > uint64(len(w.b)/each) {
		w.fail()
		return 0
	}
	return int(x)
}

func (w *wire) take(n int) []byte {
	if n < 0 || n > len(w.b) {
		w.fail()
		return nil
	}
	b := w.b[:n]
	w.b = w.b[n:]
	return b
}

func (w *wire) u64() uint64 {
	if b := w.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (w *wire) byte1() byte {
	if b := w.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (w *wire) str() string { return string(w.take(w.count(1))) }

func (w *wire) rows(n int) []int32 {
	k := w.count(1)
	rows := make([]int32, k)
	for i := range rows {
		r := w.uvarint()
		if r >= uint64(n) || i > 0 && int64(r) <= int64(rows[i-1]) {
			w.fail()
			return nil
		}
		rows[i] = int32(r)
	}
	return rows
}

// UnmarshalBinary decodes what MarshalBinary encoded; a corrupt or foreign
// blob is an error, never a panic.
func (p *Part) UnmarshalBinary(data []byte) error {
	if len(data) < len(partMagic)+8 || string(data[:len(partMagic)]) != partMagic {
		return errors.New("snapshot: not a part")
	}
	body := data[:len(data)-8]
	if checkWireSum && binary.LittleEndian.Uint64(data[len(body):]) != wireSum(body) {
		return errors.New("snapshot: the part is damaged (checksum)")
	}
	w := &wire{b: body[len(partMagic):]}
	q := Part{}
	fields := []*int64{&q.size, &q.at, &q.start, &q.end, nil, &q.memoN, nil, nil, &q.stacksN, &q.framesN,
		&q.rowsN, &q.streamsN, &q.names, &q.memoAdd, &q.frameEnd, &q.frameOff, &q.spent, &q.refs}
	for i, f := range fields {
		x := w.varint()
		switch {
		case i == 4:
			q.seed = uint64(x)
		case i == 6:
			q.memoHash = uint64(x)
		case i == 7:
			q.stacksHash = uint64(x)
		case x < 0:
			w.fail()
		default:
			*f = x
		}
	}
	if q.end < q.start || q.stacksN < 1 || q.stacksN >= math.MaxInt32 || q.framesN >= math.MaxInt32 ||
		q.streamsN > maxStreams || q.names > int64(maxNames) || q.memoAdd > math.MaxInt32 {
		w.fail()
	}
	q.stack = make([]val, w.count(2))
	for i := range q.stack {
		k := w.byte1()
		q.stack[i] = val{k: vkind(k), n: w.varint()}
		if w.err != nil {
			break
		}
	}
	q.marks = make([]int64, w.count(1))
	for i := range q.marks {
		q.marks[i] = w.varint()
		if q.marks[i] < 0 || q.marks[i] > int64(len(q.stack)) {
			w.fail()
			break
		}
	}
	q.head = append([]byte(nil), w.take(w.count(1))...)
	q.tail = append([]byte(nil), w.take(w.count(1))...)
	if len(q.head) > 64 || len(q.tail) > 64 {
		w.fail()
	}
	q.streams = make([]uint64, w.count(8))
	for i := range q.streams {
		q.streams[i] = w.u64()
	}
	q.newNames = make([]Action, w.count(1))
	for i := range q.newNames {
		q.newNames[i] = Action(w.str())
	}
	if w.err != nil {
		return w.err
	}
	if q.streamsN+int64(len(q.streams)) > maxStreams || q.names+int64(len(q.newNames)) > int64(maxNames) {
		return errors.New("snapshot: not a part (too many streams or actions)")
	}
	// Rows: checked, and kept as they are (takePart appends them).
	n := w.count(31)
	pw := &partWire{n: n}
	pw.act, pw.addr, pw.size = w.take(n), w.take(8*n), w.take(8*n)
	pw.stream, pw.tm, pw.stack = w.take(2*n), w.take(8*n), w.take(4*n)
	if w.err != nil {
		return w.err
	}
	maxStack := q.stacksN
	for i := range n {
		if a := pw.act[i]; a >= uint8(KindOther) && int64(a-uint8(KindOther)) >= q.names+int64(len(q.newNames)) {
			return errors.New("snapshot: not a part (an action out of range)")
		}
		if s := binary.LittleEndian.Uint16(pw.stream[2*i:]); int64(s) >= q.streamsN+int64(len(q.streams)) {
			return errors.New("snapshot: not a part (a stream out of range)")
		}
		st := StackID(binary.LittleEndian.Uint32(pw.stack[4*i:]))
		if st < NoStack {
			return errors.New("snapshot: not a part (a stack out of range)")
		}
		maxStack = max(maxStack, int64(st)+1)
	}
	pw.devRows = w.rows(n)
	pw.dev = make([]int64, len(pw.devRows))
	for i := range pw.dev {
		pw.dev[i] = w.varint()
	}
	pw.compRows = w.rows(n)
	pw.comp = make([]string, len(pw.compRows))
	for i := range pw.comp {
		pw.comp[i] = w.str()
	}
	pw.userRows = w.rows(n)
	pw.user = make([]string, len(pw.userRows))
	for i := range pw.user {
		pw.user[i] = w.str()
	}
	// Stacks.
	pw.ns = w.count(20)
	pw.at, pw.sums, pw.hashes = w.take(8*pw.ns), w.take(4*pw.ns), w.take(8*pw.ns)
	pw.sumTab = make([]StackSummary, w.count(8))
	for i := range pw.sumTab {
		pw.sumTab[i] = StackSummary(w.u64())
	}
	if w.err != nil {
		return w.err
	}
	for j := range pw.ns {
		if int(binary.LittleEndian.Uint32(pw.sums[4*j:])) >= len(pw.sumTab) {
			return errors.New("snapshot: not a part (a summary out of range)")
		}
		if binary.LittleEndian.Uint64(pw.at[8*j:])&lazyFlag != 0 {
			continue
		}
		k := w.count(1)
		if k == 0 || k >= math.MaxInt32 {
			w.fail()
			break
		}
		st := make(Stack, k)
		for i := range st {
			f := w.uvarint()
			if f >= uint64(q.framesN) {
				w.fail()
				break
			}
			st[i] = FrameID(f)
		}
		if w.err != nil {
			break
		}
		pw.held = append(pw.held, st)
	}
	if w.err != nil {
		return w.err
	}
	if len(w.b) != 0 || maxStack > q.stacksN+int64(pw.ns) {
		return errors.New("snapshot: not a part (trailing bytes or a stack out of range)")
	}
	// The columns are read at takePart: a copy of the blob's bytes (the
	// caller may reuse data).
	for _, c := range []*[]byte{&pw.act, &pw.addr, &pw.size, &pw.stream, &pw.tm, &pw.stack, &pw.at, &pw.sums, &pw.hashes} {
		*c = append([]byte(nil), *c...)
	}
	q.wire = pw
	*p = q
	return nil
}

// nativeLE is set where values are stored little-endian (amd64, arm64,
// wasm): a column's pages are then copied as they are.
var nativeLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// appendRaw appends c's values [i, j) to b, little-endian.
func appendRaw[T uint8 | uint16 | uint32 | uint64 | int64 | StackID](b []byte, c *column[T], i, j int) []byte {
	var zero T
	w := int(unsafe.Sizeof(zero))
	c.each(i, j, func(s []T) {
		if nativeLE {
			b = append(b, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*w)...)
			return
		}
		for _, x := range s {
			for k := range w {
				b = append(b, byte(uint64(x)>>(8*k)))
			}
		}
	})
	return b
}

// partWire is an unmarshaled part's rows and stacks as the blob has them
// (little-endian columns), checked; takePart appends them.
type partWire struct {
	n                                  int
	act, addr, size, stream, tm, stack []byte
	devRows, compRows, userRows        []int32
	dev                                []int64
	comp, user                         []string
	ns                                 int
	at, sums, hashes                   []byte
	sumTab                             []StackSummary
	held                               []Stack // the held stacks' frames, in order
}

// appendRaw appends the little-endian values in b to c.
func (c *column[T]) appendRaw(b []byte) {
	var zero T
	w := int(unsafe.Sizeof(zero))
	for len(b) >= w {
		if !c.room() {
			c.push(zero)
			c.set(c.len()-1, rawAt[T](b, 0))
			b = b[w:]
			continue
		}
		last := &c.pages[len(c.pages)-1]
		m := min(len(b)/w, cap(*last)-len(*last))
		k := len(*last)
		*last = (*last)[:k+m]
		if nativeLE {
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&(*last)[k])), m*w), b)
		} else {
			for i := range m {
				(*last)[k+i] = rawAt[T](b, i)
			}
		}
		b = b[m*w:]
	}
}

// len returns the number of values in c.
func (c *column[T]) len() int {
	if n := len(c.pages); n > 0 {
		return (n-1)<<pageBits + len(c.pages[n-1])
	}
	return 0
}

// rawAt reads the i-th little-endian value of b.
func rawAt[T any](b []byte, i int) T {
	var x T
	w := int(unsafe.Sizeof(x))
	var u uint64
	for k := w - 1; k >= 0; k-- {
		u = u<<8 | uint64(b[i*w+k])
	}
	switch p := any(&x).(type) {
	case *uint8:
		*p = uint8(u)
	case *uint16:
		*p = uint16(u)
	case *uint32:
		*p = uint32(u)
	case *uint64:
		*p = u
	case *int64:
		*p = int64(u)
	case *StackID:
		*p = StackID(int32(uint32(u)))
	}
	return x
}
