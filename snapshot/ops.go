package snapshot

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"
)

// ops runs one opcode each (after the opcode byte was read); nil entries
// are unknown opcodes. STOP is handled by run. The fast path of vm.fast
// runs the common ones first; these are the complete versions.
var ops [256]func(*vm) error

func init() {
	ops = [256]func(*vm) error{
		opMark: (*vm).opMark, opPop: (*vm).opPop, opPopMark: (*vm).opPopMark, opDup: (*vm).opDup,
		opProto: (*vm).opProto, opFrame: (*vm).opFrame,
		opNone: (*vm).opNone, opNewTrue: (*vm).opNewTrue, opNewFalse: (*vm).opNewFalse,
		opBinInt: (*vm).opBinInt, opBinInt1: (*vm).opBinInt1, opBinInt2: (*vm).opBinInt2,
		opLong1: (*vm).opLong1, opLong4: (*vm).opLong4, opInt: (*vm).opInt, opLong: (*vm).opLong,
		opBinFloat: (*vm).opBinFloat, opFloat: (*vm).opFloat,
		opShortBinUni: (*vm).opShortBinUnicode, opBinUnicode: (*vm).opBinUnicode, opBinUnicode8: (*vm).opBinUnicode8,
		opUnicode: (*vm).opUnicode, opShortBinString: (*vm).opShortBinString, opBinString: (*vm).opBinString,
		opString: (*vm).opString, opShortBinBytes: (*vm).opShortBinBytes, opBinBytes: (*vm).opBinBytes,
		opBinBytes8: (*vm).opBinBytes8,
		opEmptyDict: (*vm).opEmptyDict, opEmptyList: (*vm).opEmptyList, opEmptyTuple: (*vm).opEmptyTuple,
		opTuple1: (*vm).opTupleN, opTuple2: (*vm).opTupleN, opTuple3: (*vm).opTupleN, opTuple: (*vm).opTuple,
		opList: (*vm).opList, opDict: (*vm).opDict, opAppend: (*vm).opAppend, opAppends: (*vm).opAppends,
		opSetItem: (*vm).opSetItem, opSetItems: (*vm).opSetItems,
		opBinGet: (*vm).opGet, opLongBinGet: (*vm).opGet, opGet: (*vm).opGet,
		opBinPut: (*vm).opPut, opLongBinPut: (*vm).opPut, opPut: (*vm).opPut, opMemoize: (*vm).opMemoize,
	}
	for _, op := range []byte{opGlobal, opStackGlobal, opReduce, opBuild, opNewObj, opNewObjEx, opInst, opObj,
		opPersID, opBinPersID, opExt1, opExt2, opExt4, opByteArray8, opNextBuffer, opReadOnlyBuffer,
		opEmptySet, opAddItems, opFrozenSet} {
		ops[op] = (*vm).refuse
	}
}

// refuse rejects the opcodes a memory snapshot never has.
func (v *vm) refuse() error {
	switch v.op {
	case opByteArray8, opNextBuffer, opReadOnlyBuffer:
		return v.fail(ErrUnsafe, "refusing %s: bytearrays and out-of-band buffers never occur in a memory snapshot", opNames[v.op])
	case opEmptySet, opAddItems, opFrozenSet:
		return v.fail(ErrUnsafe, "refusing %s: sets never occur in a memory snapshot", opNames[v.op])
	}
	return v.fail(ErrUnsafe, "refusing %s: it imports or calls Python code, which a memory snapshot never needs", opNames[v.op])
}

func (v *vm) unknownOp(op byte) error { return v.corrupt("unknown opcode 0x%02x", op) }

func (v *vm) opMark() error {
	if len(v.marks) >= maxMarks {
		return v.corrupt("more than %d nested MARKs", maxMarks)
	}
	v.marks = append(v.marks, len(v.stack))
	return nil
}

func (v *vm) opPop() error {
	_, err := v.pop()
	return err
}

func (v *vm) opPopMark() error {
	_, err := v.popMark()
	return err
}

func (v *vm) opDup() error {
	t, err := v.top()
	if err != nil {
		return err
	}
	v.share(*t)
	v.push(*t)
	return nil
}

func (v *vm) opProto() error {
	b, err := v.need(1)
	if err != nil {
		return err
	}
	if b[0] > 5 {
		return v.corrupt("unsupported pickle protocol %d (0-5 exist)", b[0])
	}
	v.proto = int(b[0])
	return nil
}

func (v *vm) opFrame() error {
	b, err := v.need(8)
	if err != nil {
		return err
	}
	if v.partial {
		return nil
	}
	n := binary.LittleEndian.Uint64(b)
	if n > uint64(v.in.left()) {
		return &DecodeError{Offset: v.opOff, Op: "FRAME", Kind: ErrTruncated,
			Msg: fmt.Sprintf("frame of %d bytes but only %d are left", n, v.in.left())}
	}
	v.frameEnd, v.frameOff = v.in.abs()+int64(min(n, math.MaxInt32)), v.opOff
	return nil
}

func (v *vm) opNone() error     { v.push(val{k: kNone}); return nil }
func (v *vm) opNewTrue() error  { v.push(val{k: kBool, n: 1}); return nil }
func (v *vm) opNewFalse() error { v.push(val{k: kBool}); return nil }

// fixed pushes the value made of the opcode's n-byte argument.
func (v *vm) fixed(n int, make func(b []byte) val) error {
	b, err := v.need(n)
	if err != nil {
		return err
	}
	v.push(make(b))
	return nil
}

func (v *vm) opBinInt() error {
	return v.fixed(4, func(b []byte) val { return val{k: kInt, n: int64(int32(binary.LittleEndian.Uint32(b)))} })
}

func (v *vm) opBinInt1() error {
	return v.fixed(1, func(b []byte) val { return val{k: kInt, n: int64(b[0])} })
}

func (v *vm) opBinInt2() error {
	return v.fixed(2, func(b []byte) val { return val{k: kInt, n: int64(binary.LittleEndian.Uint16(b))} })
}

func (v *vm) opLong1() error {
	b, err := v.need(1)
	if err != nil {
		return err
	}
	if b, err = v.need(int(b[0])); err != nil {
		return err
	}
	v.pushLong(b)
	return nil
}

func (v *vm) opLong4() error {
	b, err := v.need(4)
	if err != nil {
		return err
	}
	n := int32(binary.LittleEndian.Uint32(b))
	if n < 0 {
		return v.corrupt("negative length %d", n)
	}
	if b, err = v.needLen(uint64(n)); err != nil {
		return err
	}
	v.pushLong(b)
	return nil
}

// opInt is INT: a decimal line, or 00/01 for False/True.
func (v *vm) opInt() error {
	b, err := v.line(maxIntDigits + 2)
	if err != nil {
		return err
	}
	switch string(b) {
	case "01":
		v.push(val{k: kBool, n: 1})
		return nil
	case "00":
		v.push(val{k: kBool})
		return nil
	}
	return v.pushText(b)
}

// opLong is LONG: a decimal line with an optional L suffix.
func (v *vm) opLong() error {
	b, err := v.line(maxIntDigits + 2)
	if err != nil {
		return err
	}
	if len(b) > 0 && b[len(b)-1] == 'L' {
		b = b[:len(b)-1]
	}
	return v.pushText(b)
}

// pushText pushes a decimal integer of at most maxIntDigits digits.
func (v *vm) pushText(b []byte) error {
	if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		v.push(val{k: kInt, n: i})
		return nil
	}
	if len(b) > maxIntDigits+1 {
		return v.fail(ErrTooLarge, "an integer of %d digits (at most %d are read)", len(b), maxIntDigits)
	}
	x, ok := new(big.Int).SetString(string(b), 10)
	if !ok {
		return v.corrupt("bad integer %q", b)
	}
	v.pushBig(x)
	return nil
}

func (v *vm) opBinFloat() error {
	return v.fixed(8, func(b []byte) val { return val{k: kFloat, n: int64(binary.BigEndian.Uint64(b))} })
}

func (v *vm) opFloat() error {
	b, err := v.line(maxStringBytes)
	if err != nil {
		return err
	}
	f, perr := strconv.ParseFloat(string(b), 64)
	if perr != nil {
		return v.corrupt("bad float %q", b)
	}
	v.push(val{k: kFloat, n: int64(math.Float64bits(f))})
	return nil
}

// lenPrefixed reads a w-byte little-endian length (1, 4 or 8) and then
// that many bytes.
func (v *vm) lenPrefixed(w int) ([]byte, error) {
	b, err := v.need(w)
	if err != nil {
		return nil, err
	}
	switch w {
	case 1:
		return v.need(int(b[0]))
	case 4:
		return v.needLen(uint64(binary.LittleEndian.Uint32(b)))
	}
	return v.needLen(binary.LittleEndian.Uint64(b))
}

func (v *vm) opShortBinUnicode() error { return v.unicode(1) }
func (v *vm) opBinUnicode() error      { return v.unicode(4) }
func (v *vm) opBinUnicode8() error     { return v.unicode(8) }

func (v *vm) unicode(w int) error {
	b, err := v.lenPrefixed(w)
	if err != nil {
		return err
	}
	return v.str(b)
}

// opUnicode is UNICODE: a raw-unicode-escape line.
func (v *vm) opUnicode() error {
	b, err := v.line(maxStringBytes)
	if err != nil {
		return err
	}
	s, err := v.rawUnicodeEscape(b)
	if err != nil {
		return err
	}
	return v.pushStr([]byte(s))
}

// Python 2 str opcodes decode as text, as gopickle does.
func (v *vm) opShortBinString() error { return v.unicode(1) }

func (v *vm) opBinString() error {
	b, err := v.need(4)
	if err != nil {
		return err
	}
	n := int32(binary.LittleEndian.Uint32(b))
	if n < 0 {
		return v.corrupt("negative length %d", n)
	}
	if b, err = v.needLen(uint64(n)); err != nil {
		return err
	}
	return v.str(b)
}

// opString is STRING: a quoted, escaped line.
func (v *vm) opString() error {
	b, err := v.line(maxStringBytes)
	if err != nil {
		return err
	}
	if len(b) < 2 || b[0] != b[len(b)-1] || (b[0] != '\'' && b[0] != '"') {
		return v.corrupt("STRING argument is not quoted")
	}
	s, err := strconv.Unquote(`"` + string(b[1:len(b)-1]) + `"`)
	if err != nil {
		return v.corrupt("bad STRING escape")
	}
	return v.str([]byte(s))
}

func (v *vm) opShortBinBytes() error { return v.binBytes(1) }
func (v *vm) opBinBytes() error      { return v.binBytes(4) }
func (v *vm) opBinBytes8() error     { return v.binBytes(8) }

func (v *vm) binBytes(w int) error {
	b, err := v.lenPrefixed(w)
	if err != nil {
		return err
	}
	if err := v.budget.charge(int64(len(b))+24, v); err != nil {
		return err
	}
	v.bytes = append(v.bytes, append([]byte{}, b...))
	v.push(val{k: kBytes, n: int64(len(v.bytes) - 1)})
	return nil
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

func (v *vm) opEmptyDict() error { return v.pushObj(oDictFresh, 0) }

// opEmptyList remembers where the list starts (mod 2^31), for lazy stacks.
func (v *vm) opEmptyList() error { return v.pushObj(oListFresh, int(v.opOff&math.MaxInt32)) }

func (v *vm) pushObj(k okind, idx int) error {
	x, err := v.newObj(k, idx)
	if err != nil {
		return err
	}
	v.push(x)
	return nil
}

func (v *vm) opEmptyTuple() error {
	x, err := v.newGen(oTuple, nil)
	if err != nil {
		return err
	}
	v.push(x)
	return nil
}

func (v *vm) opTupleN() error {
	n := int(v.op-opTuple1) + 1
	if v.under(n) {
		return v.corrupt("stack underflow")
	}
	items := append([]val(nil), v.stack[len(v.stack)-n:]...)
	v.stack = v.stack[:len(v.stack)-n]
	x, err := v.newGen(oTuple, items)
	if err != nil {
		return err
	}
	v.push(x)
	return nil
}

func (v *vm) opTuple() error {
	items, err := v.popMark()
	if err != nil {
		return err
	}
	x, err := v.newGen(oTuple, append([]val(nil), items...))
	if err != nil {
		return err
	}
	v.push(x)
	return nil
}

// opList is LIST: the items above the MARK become a new list (with no
// known start, so it is never a lazy stack).
func (v *vm) opList() error {
	items, err := v.popMark()
	if err != nil {
		return err
	}
	items = append([]val(nil), items...)
	x, err := v.newObj(oListFresh, -1)
	if err != nil {
		return err
	}
	v.push(x)
	if len(items) == 0 {
		return nil
	}
	return v.appendItems(x, items)
}

func (v *vm) opDict() error {
	items, err := v.popMark()
	if err != nil {
		return err
	}
	items = append([]val(nil), items...)
	x, err := v.newObj(oDictFresh, 0)
	if err != nil {
		return err
	}
	v.push(x)
	if len(items) == 0 {
		return nil
	}
	if len(items)%2 != 0 {
		return v.corrupt("odd number of items (%d) for a dict", len(items))
	}
	return v.setItems(x, items)
}

func (v *vm) opAppend() error {
	x, err := v.pop()
	if err != nil {
		return err
	}
	l, err := v.top()
	if err != nil {
		return err
	}
	return v.appendItems(*l, []val{x})
}

func (v *vm) opAppends() error {
	items, err := v.popMark()
	if err != nil {
		return err
	}
	l, err := v.top()
	if err != nil {
		return err
	}
	return v.appendItems(*l, items)
}

func (v *vm) opSetItem() error {
	if v.under(3) {
		return v.corrupt("stack underflow")
	}
	kv := [2]val{v.stack[len(v.stack)-2], v.stack[len(v.stack)-1]}
	v.stack = v.stack[:len(v.stack)-2]
	return v.setItems(v.stack[len(v.stack)-1], kv[:])
}

func (v *vm) opSetItems() error {
	items, err := v.popMark()
	if err != nil {
		return err
	}
	d, err := v.top()
	if err != nil {
		return err
	}
	if len(items)%2 != 0 {
		return v.corrupt("odd number of items (%d) for a dict", len(items))
	}
	return v.setItems(*d, items)
}

// memoID reads the memo id argument of GET/PUT and their binary forms.
func (v *vm) memoID() (int64, error) {
	switch v.op {
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
	b, err := v.line(maxIntDigits + 2)
	if err != nil {
		return 0, err
	}
	id, perr := strconv.ParseInt(string(b), 10, 64)
	if perr != nil || id < 0 {
		return 0, v.corrupt("bad memo id %q", b)
	}
	return id, nil
}

func (v *vm) opGet() error {
	id, err := v.memoID()
	if err != nil {
		return err
	}
	x, err := v.memoGet(id)
	if err != nil {
		return err
	}
	v.push(x)
	return nil
}

func (v *vm) opPut() error {
	if v.memoMax != math.MaxInt {
		return errPartRef // a part counts its memo ids (MEMOIZE only)
	}
	id, err := v.memoID()
	if err != nil {
		return err
	}
	t, err := v.top()
	if err != nil {
		return err
	}
	return v.memoPut(id, *t)
}

func (v *vm) opMemoize() error {
	t, err := v.top()
	if err != nil {
		return err
	}
	return v.memoPut(int64(v.memo.len()), *t)
}
