package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
	h := newWireHash(int64(len(b)))
	k := len(b) &^ 7
	h.words(b[:k])
	return h.sum(b[k:])
}

// wireHash is wireSum over a blob read in pieces: words over whole words,
// then sum over the last len%8 bytes.
type wireHash struct{ h uint64 }

func newWireHash(n int64) wireHash { return wireHash{uint64(n) + xxP5} }

func (s *wireHash) words(b []byte) {
	h := s.h
	for len(b) >= 8 {
		h = rotl(h+binary.LittleEndian.Uint64(b)*xxP2, 31) * xxP1
		b = b[8:]
	}
	s.h = h
}

func (s *wireHash) sum(tail []byte) uint64 {
	h := s.h
	for _, c := range tail {
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

// wire reads a Part's binary form from a source, in order, through a small
// window (the columns are skipped: span); the first error sticks.
type wire struct {
	r        io.ReaderAt
	off, end int64  // the next byte to read (after buf), the body's end
	buf      []byte // bytes read ahead of off
	win      []byte // buf's storage
	err      error
}

// wireWindow is how many bytes a wire reads ahead (a variable for the
// tests).
var wireWindow = 64 << 10

func (w *wire) fail() {
	if w.err == nil {
		w.err = errors.New("snapshot: not a part (corrupt or from another version)")
	}
	w.buf, w.off = nil, w.end
}

// left is the number of bytes not read yet.
func (w *wire) left() int64 { return int64(len(w.buf)) + w.end - w.off }

// ensure reads ahead until buf holds n bytes or the body's end.
func (w *wire) ensure(n int) {
	if len(w.buf) >= n || w.off >= w.end || w.err != nil {
		return
	}
	if w.win == nil {
		w.win = make([]byte, wireWindow)
	}
	k := copy(w.win, w.buf)
	m := int(min(int64(len(w.win)-k), w.end-w.off))
	if _, err := w.r.ReadAt(w.win[k:k+m], w.off); err != nil {
		w.err = fmt.Errorf("snapshot: reading a part: %w", err)
		w.buf, w.off = nil, w.end
		return
	}
	w.off += int64(m)
	w.buf = w.win[:k+m]
}

func (w *wire) uvarint() uint64 {
	w.ensure(binary.MaxVarintLen64)
	x, n := binary.Uvarint(w.buf)
	if n <= 0 {
		w.fail()
		return 0
	}
	w.buf = w.buf[n:]
	return x
}

func (w *wire) varint() int64 {
	w.ensure(binary.MaxVarintLen64)
	x, n := binary.Varint(w.buf)
	if n <= 0 {
		w.fail()
		return 0
	}
	w.buf = w.buf[n:]
	return x
}

// count reads a count of items of at least each bytes (bounded by what is
// left, so that no length makes a large allocation).
func (w *wire) count(each int) int {
	x := w.uvarint()
	if x > uint64(w.left()/int64(each)) {
		w.fail()
		return 0
	}
	return int(x)
}

// take returns a copy of the next n bytes.
func (w *wire) take(n int) []byte {
	if n < 0 || int64(n) > w.left() {
		w.fail()
		return nil
	}
	w.ensure(n)
	if n <= len(w.buf) {
		b := append([]byte(nil), w.buf[:n]...)
		w.buf = w.buf[n:]
		return b
	}
	b := make([]byte, n) // more than the window
	k := copy(b, w.buf)
	if _, err := w.r.ReadAt(b[k:], w.off); err != nil {
		w.err = fmt.Errorf("snapshot: reading a part: %w", err)
		w.buf, w.off = nil, w.end
		return nil
	}
	w.off += int64(n - k)
	w.buf = nil
	return b
}

// skip returns where the next n bytes are, and moves past them.
func (w *wire) skip(n int) span {
	if n < 0 || int64(n) > w.left() {
		w.fail()
		return span{}
	}
	s := span{off: w.off - int64(len(w.buf)), n: int64(n)}
	if n <= len(w.buf) {
		w.buf = w.buf[n:]
	} else {
		w.off += int64(n - len(w.buf))
		w.buf = nil
	}
	return s
}

func (w *wire) u64() uint64 {
	w.ensure(8)
	if len(w.buf) < 8 {
		w.fail()
		return 0
	}
	x := binary.LittleEndian.Uint64(w.buf)
	w.buf = w.buf[8:]
	return x
}

func (w *wire) byte1() byte {
	w.ensure(1)
	if len(w.buf) < 1 {
		w.fail()
		return 0
	}
	c := w.buf[0]
	w.buf = w.buf[1:]
	return c
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

// span is where a column is in a part's binary form.
type span struct{ off, n int64 }

// wireBytes is a part's binary form held whole (UnmarshalBinary).
type wireBytes []byte

func (b wireBytes) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(b)) || int64(len(p)) > int64(len(b))-off {
		return 0, io.ErrUnexpectedEOF
	}
	return copy(p, b[off:]), nil
}

// wireChunk is how many values of a column are read at a time (a variable
// for the tests).
var wireChunk = 32 << 10

// columns calls f with the next values of the columns at spans cs (of w[i]
// bytes a value, n values each), wireChunk values of each (fewer at the
// end) at a time, in order; it stops at the first read error or when f
// returns false.
func columns(r io.ReaderAt, n int, cs []span, w []int, f func(k int, b [][]byte) bool) error {
	b := make([][]byte, len(cs))
	bufs := make([][]byte, len(cs))
	whole, _ := r.(wireBytes)
	for i := 0; i < n; i += wireChunk {
		k := min(wireChunk, n-i)
		for c, s := range cs {
			off, m := s.off+int64(i*w[c]), k*w[c]
			if whole != nil {
				b[c] = whole[off : off+int64(m)]
				continue
			}
			if bufs[c] == nil {
				bufs[c] = make([]byte, min(n, wireChunk)*w[c])
			}
			b[c] = bufs[c][:m]
			if _, err := r.ReadAt(b[c], off); err != nil {
				return fmt.Errorf("snapshot: reading a part: %w", err)
			}
		}
		if !f(k, b) {
			return nil
		}
	}
	return nil
}

// UnmarshalBinary decodes what MarshalBinary encoded; a corrupt or foreign
// blob is an error, never a panic.
func (p *Part) UnmarshalBinary(data []byte) error {
	return p.UnmarshalFrom(wireBytes(bytes.Clone(data)), int64(len(data)))
}

// UnmarshalFrom decodes what MarshalBinary encoded, size bytes read from r,
// which must read the same bytes until the part is taken or dropped: its
// columns (most of it) are checked here and read again, wireChunk values
// at a time, when a decoder takes the part, never held whole. (In the
// browser, r reads the buffer the part worker sent: copied whole into the
// analysis worker's memory and then into the part's columns, a part of 184
// MB cost it 1.5 s, most of it the first writes to fresh memory.) A corrupt
// or foreign blob is an error, never a panic.
func (p *Part) UnmarshalFrom(r io.ReaderAt, size int64) error {
	if size < int64(len(partMagic))+8 {
		return errors.New("snapshot: not a part")
	}
	head := make([]byte, len(partMagic))
	if _, err := r.ReadAt(head, 0); err != nil {
		return fmt.Errorf("snapshot: reading a part: %w", err)
	}
	if string(head) != partMagic {
		return errors.New("snapshot: not a part")
	}
	body := size - 8
	if checkWireSum {
		if err := checkSum(r, body); err != nil {
			return err
		}
	}
	w := &wire{r: r, off: int64(len(partMagic)), end: body}
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
	q.head = w.take(w.count(1))
	q.tail = w.take(w.count(1))
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
	// Rows: checked, and read again as they are when taken (takePart).
	n := w.count(31)
	pw := &partWire{r: r, n: n}
	pw.act, pw.addr, pw.size = w.skip(n), w.skip(8*n), w.skip(8*n)
	pw.stream, pw.tm, pw.stack = w.skip(2*n), w.skip(8*n), w.skip(4*n)
	if w.err != nil {
		return w.err
	}
	maxStack := q.stacksN
	var bad string
	err := columns(r, n, []span{pw.act, pw.stream, pw.stack}, []int{1, 2, 4}, func(k int, b [][]byte) bool {
		act, stream, stack := b[0], b[1], b[2]
		for i := range k {
			if a := act[i]; a >= uint8(KindOther) && int64(a-uint8(KindOther)) >= q.names+int64(len(q.newNames)) {
				bad = "an action out of range"
				return false
			}
			if s := binary.LittleEndian.Uint16(stream[2*i:]); int64(s) >= q.streamsN+int64(len(q.streams)) {
				bad = "a stream out of range"
				return false
			}
			st := StackID(binary.LittleEndian.Uint32(stack[4*i:]))
			if st < NoStack {
				bad = "a stack out of range"
				return false
			}
			maxStack = max(maxStack, int64(st)+1)
		}
		return true
	})
	if err != nil {
		return err
	}
	if bad != "" {
		return errors.New("snapshot: not a part (" + bad + ")")
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
	pw.at, pw.sums, pw.hashes = w.skip(8*pw.ns), w.skip(4*pw.ns), w.skip(8*pw.ns)
	pw.sumTab = make([]StackSummary, w.count(8))
	for i := range pw.sumTab {
		pw.sumTab[i] = StackSummary(w.u64())
	}
	if w.err != nil {
		return w.err
	}
	err = columns(r, pw.ns, []span{pw.at, pw.sums}, []int{8, 4}, func(k int, b [][]byte) bool {
		at, sums := b[0], b[1]
		for j := range k {
			if int(binary.LittleEndian.Uint32(sums[4*j:])) >= len(pw.sumTab) {
				bad = "a summary out of range"
				return false
			}
			if binary.LittleEndian.Uint64(at[8*j:])&lazyFlag != 0 {
				continue
			}
			// A held stack: its frames follow, in order.
			nf := w.count(1)
			if nf == 0 || nf >= math.MaxInt32 {
				w.fail()
				return false
			}
			st := make(Stack, nf)
			for i := range st {
				f := w.uvarint()
				if f >= uint64(q.framesN) {
					w.fail()
					return false
				}
				st[i] = FrameID(f)
			}
			pw.held = append(pw.held, st)
		}
		return true
	})
	if err != nil {
		return err
	}
	if bad != "" {
		return errors.New("snapshot: not a part (" + bad + ")")
	}
	if w.err != nil {
		return w.err
	}
	if w.left() != 0 || maxStack > q.stacksN+int64(pw.ns) {
		return errors.New("snapshot: not a part (trailing bytes or a stack out of range)")
	}
	q.wire = pw
	*p = q
	return nil
}

// checkSum checks the checksum of a part's binary form (n bytes, then the
// checksum) read from r.
func checkSum(r io.ReaderAt, n int64) error {
	h := newWireHash(n)
	var buf []byte
	if whole, ok := r.(wireBytes); ok {
		buf = whole[:n]
		k := len(buf) &^ 7
		h.words(buf[:k])
		buf = buf[k:]
	} else {
		chunk := make([]byte, max(8, min(n, int64(8*wireChunk))&^7))
		for off := int64(0); ; {
			m := int(min(int64(len(chunk)), n-off))
			if _, err := r.ReadAt(chunk[:m], off); err != nil {
				return fmt.Errorf("snapshot: reading a part: %w", err)
			}
			off += int64(m)
			if off == n {
				k := m &^ 7
				h.words(chunk[:k])
				buf = chunk[k:m]
				break
			}
			h.words(chunk[:m]) // a multiple of 8
		}
	}
	var sum [8]byte
	if _, err := r.ReadAt(sum[:], n); err != nil {
		return fmt.Errorf("snapshot: reading a part: %w", err)
	}
	if binary.LittleEndian.Uint64(sum[:]) != h.sum(buf) {
		return errors.New("snapshot: the part is damaged (checksum)")
	}
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

// partWire is an unmarshaled part's rows and stacks, checked: its
// columns are spans of the binary form (little-endian), read from r when
// the part is taken (takePart).
type partWire struct {
	r                                  io.ReaderAt
	n                                  int
	act, addr, size, stream, tm, stack span
	devRows, compRows, userRows        []int32
	dev                                []int64
	comp, user                         []string
	ns                                 int
	at, sums, hashes                   span
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
