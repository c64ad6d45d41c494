package snapshot

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
)

// frameTarget is the frame size Python's pickler aims for (protocol 4+).
const frameTarget = 64 * 1024

// batchSize is how many items Python's pickler puts in one APPENDS/SETITEMS.
const batchSize = 1000

// pickler writes pickle opcodes the way CPython's pickle module does for
// dict/list/tuple/str/int/float/bool/None/bytes, at protocols 0 to 5,
// including FRAME opcodes at protocol 4+ and memo PUT/MEMOIZE/GET.
type pickler struct {
	w     io.Writer
	proto int
	buf   []byte
	// frameStart is the offset in buf of the current frame's payload
	// (protocol 4+), after the 9 bytes reserved for the FRAME header.
	frameStart int
	nmemo      int
	err        error
}

func newPickler(w io.Writer, proto int) (*pickler, error) {
	if proto < 0 || proto > 5 {
		return nil, fmt.Errorf("pickle protocol %d: want 0..5", proto)
	}
	p := &pickler{w: w, proto: proto, buf: make([]byte, 0, 2*frameTarget)}
	if proto >= 2 {
		p.buf = append(p.buf, opProto, byte(proto))
	}
	p.startFrame()
	return p, nil
}

func (p *pickler) startFrame() {
	if p.proto >= 4 {
		p.buf = append(p.buf, make([]byte, 9)...)
		p.frameStart = len(p.buf)
	}
}

// endFrame fills in the header of the current frame, or drops it if empty.
func (p *pickler) endFrame() {
	if p.proto < 4 {
		return
	}
	n := len(p.buf) - p.frameStart
	if n == 0 {
		p.buf = p.buf[:p.frameStart-9]
		return
	}
	h := p.buf[p.frameStart-9 : p.frameStart]
	h[0] = opFrame
	binary.LittleEndian.PutUint64(h[1:], uint64(n))
}

// boundary is called between opcodes: it closes a full frame and flushes.
func (p *pickler) boundary() {
	if p.proto >= 4 {
		if len(p.buf)-p.frameStart < frameTarget {
			return
		}
		p.endFrame()
	} else if len(p.buf) < frameTarget {
		return
	}
	p.flush()
	p.startFrame()
}

func (p *pickler) flush() {
	if p.err == nil && len(p.buf) > 0 {
		_, p.err = p.w.Write(p.buf)
	}
	p.buf = p.buf[:0]
}

// finish writes STOP and flushes everything.
func (p *pickler) finish() error {
	p.op(opStop)
	p.endFrame()
	p.flush()
	return p.err
}

func (p *pickler) op(b byte) {
	p.buf = append(p.buf, b)
	p.boundary()
}

// memoize records the object just written in the memo and returns its id.
func (p *pickler) memoize() int {
	id := p.nmemo
	p.nmemo++
	switch {
	case p.proto >= 4:
		p.buf = append(p.buf, opMemoize)
	case p.proto >= 1 && id < 256:
		p.buf = append(p.buf, opBinPut, byte(id))
	case p.proto >= 1:
		p.buf = append(p.buf, opLongBinPut)
		p.buf = binary.LittleEndian.AppendUint32(p.buf, uint32(id))
	default:
		p.buf = append(p.buf, opPut)
		p.buf = strconv.AppendInt(p.buf, int64(id), 10)
		p.buf = append(p.buf, '\n')
	}
	p.boundary()
	return id
}

// get pushes memo entry id.
func (p *pickler) get(id int) {
	switch {
	case p.proto >= 1 && id < 256:
		p.buf = append(p.buf, opBinGet, byte(id))
	case p.proto >= 1:
		p.buf = append(p.buf, opLongBinGet)
		p.buf = binary.LittleEndian.AppendUint32(p.buf, uint32(id))
	default:
		p.buf = append(p.buf, opGet)
		p.buf = strconv.AppendInt(p.buf, int64(id), 10)
		p.buf = append(p.buf, '\n')
	}
	p.boundary()
}

func (p *pickler) none() { p.op(opNone) }

func (p *pickler) bool(b bool) {
	if p.proto >= 2 {
		if b {
			p.op(opNewTrue)
		} else {
			p.op(opNewFalse)
		}
		return
	}
	if b {
		p.buf = append(p.buf, "I01\n"...)
	} else {
		p.buf = append(p.buf, "I00\n"...)
	}
	p.boundary()
}

func (p *pickler) int(v int64) {
	switch {
	case p.proto >= 1 && v >= 0 && v < 256:
		p.buf = append(p.buf, opBinInt1, byte(v))
	case p.proto >= 1 && v >= 0 && v < 65536:
		p.buf = append(p.buf, opBinInt2, byte(v), byte(v>>8))
	case p.proto >= 1 && v >= math.MinInt32 && v <= math.MaxInt32:
		p.buf = append(p.buf, opBinInt)
		p.buf = binary.LittleEndian.AppendUint32(p.buf, uint32(v))
	case p.proto >= 2:
		p.buf = append(p.buf, opLong1)
		p.buf = appendLong(p.buf, big.NewInt(v))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		p.buf = append(p.buf, opInt)
		p.buf = strconv.AppendInt(p.buf, v, 10)
		p.buf = append(p.buf, '\n')
	default:
		p.buf = append(p.buf, opLong)
		p.buf = strconv.AppendInt(p.buf, v, 10)
		p.buf = append(p.buf, 'L', '\n')
	}
	p.boundary()
}

// uint writes an unsigned 64-bit value as a Python int.
func (p *pickler) uint(v uint64) {
	if v <= math.MaxInt64 {
		p.int(int64(v))
		return
	}
	p.bigInt(new(big.Int).SetUint64(v))
}

func (p *pickler) bigInt(v *big.Int) {
	if v.IsInt64() {
		p.int(v.Int64())
		return
	}
	if p.proto >= 2 {
		enc := appendLong(nil, v) // length byte + payload
		if n := len(enc) - 1; n < 256 {
			p.buf = append(p.buf, opLong1)
			p.buf = append(p.buf, enc...)
		} else {
			p.buf = append(p.buf, opLong4)
			p.buf = binary.LittleEndian.AppendUint32(p.buf, uint32(n))
			p.buf = append(p.buf, enc[1:]...)
		}
	} else {
		p.buf = append(p.buf, opLong)
		p.buf = v.Append(p.buf, 10)
		p.buf = append(p.buf, 'L', '\n')
	}
	p.boundary()
}

// appendLong appends a LONG1-style length byte (truncated for long values;
// callers of LONG4 drop it) and the minimal little-endian two's complement
// of v, as Python's encode_long does (0 is the empty string).
func appendLong(dst []byte, v *big.Int) []byte {
	if v.Sign() == 0 {
		return append(dst, 0)
	}
	var payload []byte
	if v.Sign() > 0 {
		be := v.Bytes()
		for i := len(be) - 1; i >= 0; i-- {
			payload = append(payload, be[i])
		}
		if payload[len(payload)-1]&0x80 != 0 {
			payload = append(payload, 0)
		}
	} else {
		// Two's complement: find the smallest n with -2^(8n-1) <= v.
		n := (v.BitLen() + 8) / 8
		m := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
		m.Add(m, v)
		be := m.Bytes()
		payload = make([]byte, n)
		for i := range be {
			payload[i] = be[len(be)-1-i]
		}
		for i := len(be); i < n; i++ {
			payload[i] = 0
		}
		// Drop a redundant 0xff byte (e.g. -128 fits in one byte).
		for len(payload) > 1 && payload[len(payload)-1] == 0xff && payload[len(payload)-2]&0x80 != 0 {
			payload = payload[:len(payload)-1]
		}
	}
	dst = append(dst, byte(len(payload)))
	return append(dst, payload...)
}

func (p *pickler) float(f float64) {
	if p.proto >= 1 {
		p.buf = append(p.buf, opBinFloat)
		p.buf = binary.BigEndian.AppendUint64(p.buf, math.Float64bits(f))
	} else {
		p.buf = append(p.buf, opFloat)
		p.buf = append(p.buf, pyFloatRepr(f)...)
		p.buf = append(p.buf, '\n')
	}
	p.boundary()
}

// pyFloatRepr formats f the way Python's repr does for the values the
// random tests use (finite floats).
func pyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'n' || c == 'i' {
			return s
		}
	}
	return s + ".0"
}

// str writes a str (not memoized; callers memoize).
func (p *pickler) str(s string) {
	switch {
	case p.proto >= 4 && len(s) < 256:
		p.buf = append(p.buf, opShortBinUni, byte(len(s)))
	case p.proto >= 4 && uint64(len(s)) > math.MaxUint32:
		p.buf = append(p.buf, opBinUnicode8)
		p.buf = binary.LittleEndian.AppendUint64(p.buf, uint64(len(s)))
	case p.proto >= 1:
		p.buf = append(p.buf, opBinUnicode)
		p.buf = binary.LittleEndian.AppendUint32(p.buf, uint32(len(s)))
	default:
		p.buf = append(p.buf, opUnicode)
		p.buf = appendRawUnicodeEscape(p.buf, s)
		p.buf = append(p.buf, '\n')
		p.boundary()
		return
	}
	p.buf = append(p.buf, s...)
	p.boundary()
}

// appendRawUnicodeEscape encodes s as Python's raw-unicode-escape codec
// does for protocol 0 UNICODE, additionally escaping '\\', '\n' and '\r'
// the way pickle.py does.
func appendRawUnicodeEscape(dst []byte, s string) []byte {
	for _, r := range s {
		switch {
		case r == '\\':
			dst = append(dst, `\u005c`...)
		case r == '\n':
			dst = append(dst, `\u000a`...)
		case r == '\r':
			dst = append(dst, `\u000d`...)
		case r == 0x1a:
			dst = append(dst, `\u001a`...)
		case r < 0x100:
			dst = append(dst, byte(r))
		case r < 0x10000:
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = fmt.Appendf(dst, `\U%08x`, r)
		}
	}
	return dst
}

// bytes writes a bytes object (protocol 3+ only).
func (p *pickler) bytes(b []byte) error {
	switch {
	case p.proto < 3:
		return fmt.Errorf("bytes need pickle protocol 3 or later, have %d", p.proto)
	case len(b) < 256:
		p.buf = append(p.buf, opShortBinBytes, byte(len(b)))
	case uint64(len(b)) <= math.MaxUint32:
		p.buf = append(p.buf, opBinBytes)
		p.buf = binary.LittleEndian.AppendUint32(p.buf, uint32(len(b)))
	default:
		p.buf = append(p.buf, opBinBytes8)
		p.buf = binary.LittleEndian.AppendUint64(p.buf, uint64(len(b)))
	}
	p.buf = append(p.buf, b...)
	p.boundary()
	return nil
}

// beginList starts a list: EMPTY_LIST (or MARK LIST at protocol 0) and its
// memo entry.
func (p *pickler) beginList() int {
	if p.proto >= 1 {
		p.buf = append(p.buf, opEmptyList)
	} else {
		p.buf = append(p.buf, opMark, opList)
	}
	return p.memoize()
}

func (p *pickler) beginDict() int {
	if p.proto >= 1 {
		p.buf = append(p.buf, opEmptyDict)
	} else {
		p.buf = append(p.buf, opMark, opDict)
	}
	return p.memoize()
}

// items writes n list items (item(i) writes item i) batched like CPython.
func (p *pickler) items(n int, item func(i int) error, single, multi byte) error {
	if p.proto == 0 {
		for i := range n {
			if err := item(i); err != nil {
				return err
			}
			p.op(single)
		}
		return nil
	}
	for start := 0; start < n; start += batchSize {
		end := min(start+batchSize, n)
		if end-start == 1 {
			if err := item(start); err != nil {
				return err
			}
			p.op(single)
			continue
		}
		p.op(opMark)
		for i := start; i < end; i++ {
			if err := item(i); err != nil {
				return err
			}
		}
		p.op(multi)
	}
	return nil
}

// listItems appends n items to the list on the stack.
func (p *pickler) listItems(n int, item func(i int) error) error {
	return p.items(n, item, opAppend, opAppends)
}

// dictItems sets n key/value pairs in the dict on the stack; pair(i)
// writes key then value.
func (p *pickler) dictItems(n int, pair func(i int) error) error {
	return p.items(n, pair, opSetItem, opSetItems)
}

// tuple writes an n-tuple whose items item(i) writes, and memoizes it as
// CPython does (empty tuples are not memoized).
func (p *pickler) tuple(n int, item func(i int) error) error {
	if n == 0 {
		if p.proto >= 1 {
			p.op(opEmptyTuple)
		} else {
			p.op(opMark)
			p.op(opTuple)
		}
		return nil
	}
	if n <= 3 && p.proto >= 2 {
		for i := range n {
			if err := item(i); err != nil {
				return err
			}
		}
		p.op(opTuple1 + byte(n-1))
		p.memoize()
		return nil
	}
	p.op(opMark)
	for i := range n {
		if err := item(i); err != nil {
			return err
		}
	}
	p.op(opTuple)
	p.memoize()
	return nil
}

// value writes a generic Value without memoizing strings (every container
// is memoized, as CPython does; nothing is shared).
func (p *pickler) value(v Value, depth int) error {
	if depth > 1000 {
		return fmt.Errorf("value nested deeper than 1000")
	}
	switch t := v.(type) {
	case nil:
		p.none()
	case bool:
		p.bool(t)
	case int64:
		p.int(t)
	case int:
		p.int(int64(t))
	case *big.Int:
		p.bigInt(t)
	case float64:
		p.float(t)
	case string:
		p.str(t)
		p.memoize()
	case []byte:
		if err := p.bytes(t); err != nil {
			return err
		}
		p.memoize()
	case List:
		p.beginList()
		return p.listItems(len(t), func(i int) error { return p.value(t[i], depth+1) })
	case Tuple:
		return p.tuple(len(t), func(i int) error { return p.value(t[i], depth+1) })
	case Dict:
		p.beginDict()
		return p.dictItems(len(t), func(i int) error {
			if err := p.value(t[i].Key, depth+1); err != nil {
				return err
			}
			return p.value(t[i].Value, depth+1)
		})
	default:
		return fmt.Errorf("cannot pickle %T", v)
	}
	return nil
}

// EncodeValue pickles a generic Value at the given protocol (0-5) the way
// CPython's pickle.dumps would. Bytes need protocol 3+.
func EncodeValue(w io.Writer, v Value, protocol int) error {
	p, err := newPickler(w, protocol)
	if err != nil {
		return err
	}
	if err := p.value(v, 0); err != nil {
		return err
	}
	return p.finish()
}
