package snapshot

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"
)

// leadKeys are the memo references a leadPairs test notes: the key at
// each place (nil: none) with its code, and the action at each slot of
// vm.eacts with its code.
type leadKeys struct {
	keys  [8][]byte
	codes [8]uint8
	acts  [16][]byte
	acode [16]uint8
}

// leadPairsPlain is leadPairsGo written plainly from the pickle format,
// one pair a round, keys and actions compared byte by byte with the
// references that were noted, ints decoded by a switch on the opcode:
// the reference for TestEntryRunLeadPairs.
func leadPairsPlain(lk *leadKeys, last int64, d []byte, p, limit, i int, l *entryLead) (int, int, bool) {
	limit = min(limit, len(d))
	at := func(b []byte, p int) bool { return b != nil && bytes.HasPrefix(d[p:], b) }
	if i == 0 && p+16 <= limit && at(lk.keys[0], p) {
		r := p + len(lk.keys[0])
		if s := d[r+1] & 15; at(lk.acts[s], r) {
			l[keyAction], p, i = int64(lk.acode[s]), r+len(lk.acts[s]), 1
		}
	}
	for i > 0 && i < 8 && p+16 <= limit {
		code := lk.codes[i]
		if !at(lk.keys[i], p) || code < keyAddr || code > keyTimeUS {
			break
		}
		r := p + len(lk.keys[i])
		var n int64
		var next int
		switch d[r] {
		case opBinInt1:
			n, next = int64(d[r+1]), r+2
		case opBinInt2:
			n, next = int64(binary.LittleEndian.Uint16(d[r+1:])), r+3
		case opBinInt:
			n, next = int64(int32(binary.LittleEndian.Uint32(d[r+1:]))), r+5
		case opLong1:
			w := int(d[r+1])
			if w < 1 || w > 8 {
				return leadEnd(lk, d, p, limit, i)
			}
			var u uint64
			for j := w - 1; j >= 0; j-- {
				u = u<<8 | uint64(d[r+2+j])
			}
			n, next = int64(u<<(64-8*w))>>(64-8*w), r+2+w // two's complement
		default:
			return leadEnd(lk, d, p, limit, i)
		}
		if code == keyStream {
			if n != last {
				break
			}
			n = -1
		}
		l[code], p, i = n, next, i+1
	}
	return leadEnd(lk, d, p, limit, i)
}

// leadEnd is leadPairsPlain's result at the pair it stopped at.
func leadEnd(lk *leadKeys, d []byte, p, limit, i int) (int, int, bool) {
	return p, i, i > 0 && i < 8 && p+16 <= limit && lk.codes[i] == keyFrames && bytes.HasPrefix(d[p:], lk.keys[i])
}

// leadRef is a random memo reference: BINGET, or LONG_BINGET (an id
// whose low byte is low when it is to fall in a given vm.eacts slot).
func leadRef(r *rand.Rand) []byte {
	if r.IntN(2) == 0 {
		return []byte{opBinGet, byte(r.IntN(256))}
	}
	return binary.LittleEndian.AppendUint32([]byte{opLongBinGet}, uint32(r.IntN(1<<20))<<r.IntN(12))
}

// leadInt appends n as a random int opcode that holds it, or (one time
// in twelve) an int opcode leadPairs leaves to the full path or another
// opcode.
func leadInt(r *rand.Rand, d []byte, n int64) []byte {
	if r.IntN(12) == 0 {
		switch r.IntN(4) {
		case 0:
			return append(d, opLong1, 0) // LONG1 of no bytes (0)
		case 1:
			return append(append(d, opLong1, 9), make([]byte, 9)...)
		case 2:
			return append(d, opNone)
		default:
			return append(d, opBinFloat, 1, 2, 3, 4, 5, 6, 7, 8)
		}
	}
	var forms []int
	if n >= 0 && n < 1<<8 {
		forms = append(forms, 1)
	}
	if n >= 0 && n < 1<<16 {
		forms = append(forms, 2)
	}
	if n == int64(int32(n)) {
		forms = append(forms, 4)
	}
	forms = append(forms, 8) // LONG1
	switch forms[r.IntN(len(forms))] {
	case 1:
		return append(d, opBinInt1, byte(n))
	case 2:
		return binary.LittleEndian.AppendUint16(append(d, opBinInt2), uint16(n))
	case 4:
		return binary.LittleEndian.AppendUint32(append(d, opBinInt), uint32(n))
	}
	w := 1 // the fewest bytes of n in two's complement, or more
	for w < 8 && int64(uint64(n)<<(64-8*w))>>(64-8*w) != n {
		w++
	}
	w += r.IntN(9 - w)
	d = append(d, opLong1, byte(w))
	for j := range w {
		d = append(d, byte(uint64(n)>>(8*j)))
	}
	return d
}

// TestEntryRunLeadPairs runs leadPairs and leadPairsPlain over random
// entries' leading pairs: keys noted at each place (BINGET or
// LONG_BINGET, any of the codes, or none), actions noted in some slots,
// pairs whose key or action is another reference, ints of every form
// that holds the value (LONG1 of 1 to 8 bytes, negative values), forms
// the fast path leaves (LONG1 of 0 or 9 bytes, other opcodes), the stream
// equal to the last one or not, a frames key after the ints or not, and
// limits anywhere (also beyond the input), from the first pair or a later
// one. In WebAssembly leadPairs is assembly: it must also agree with
// leadPairsGo. Every result (position, index, frames, the values) must
// agree.
func TestEntryRunLeadPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for k := range 3000 {
		var lk leadKeys
		v := &vm{lastStream: []int64{0, 1, 7, -3, 1 << 40}[r.IntN(5)]}
		v.lastStreamIdx = 3
		codes := []uint8{keyAddr, keySize, keyStream, keyTimeUS}
		r.Shuffle(len(codes), func(a, b int) { codes[a], codes[b] = codes[b], codes[a] })
		lk.keys[0], lk.codes[0] = leadRef(r), keyAction
		for j := 1; j < 8; j++ {
			switch c := r.IntN(10); {
			case j <= len(codes) && c < 8:
				lk.codes[j] = codes[j-1]
			case c < 9:
				lk.codes[j] = []uint8{keyAddr, keySize, keyStream, keyTimeUS, keyFrames, keyAction}[r.IntN(6)]
			default:
				continue // nothing noted
			}
			lk.keys[j] = leadRef(r)
		}
		if j := len(codes) + 1; r.IntN(3) != 0 {
			lk.keys[j], lk.codes[j] = leadRef(r), keyFrames
		}
		for s := range lk.acts {
			if r.IntN(3) != 0 {
				b := leadRef(r)
				b[1] = b[1]&^15 | byte(s) // the memo id's low bits: slot s
				lk.acts[s], lk.acode[s] = b, uint8(r.IntN(6))
			}
		}
		if k%50 == 49 {
			lk.keys[0] = nil // no action key noted
		}
		for j, b := range lk.keys {
			if b != nil {
				v.ekeys[j] = noteKey(b, lk.codes[j], int64(j))
			}
		}
		for s, b := range lk.acts {
			if b != nil {
				v.eacts[s] = noteKey(b, lk.acode[s], 0)
			}
		}

		// The entry: pair 0 the action, then ints, then the frames key
		// or anything, each key (and action) mostly the noted one.
		d := make([]byte, r.IntN(4))
		starts := []int{len(d)}
		if r.IntN(16) != 0 && lk.keys[0] != nil {
			d = append(d, lk.keys[0]...)
		} else {
			d = append(d, leadRef(r)...)
		}
		if s := r.IntN(16); r.IntN(10) != 0 && lk.acts[s] != nil {
			d = append(d, lk.acts[s]...)
		} else {
			d = append(d, leadRef(r)...)
		}
		for j := 1; j < 9; j++ {
			starts = append(starts, len(d))
			if lk.keys[j&7] != nil && r.IntN(20) != 0 {
				d = append(d, lk.keys[j&7]...)
			} else {
				d = append(d, leadRef(r)...)
			}
			if lk.codes[j&7] == keyFrames && r.IntN(4) != 0 {
				d = append(d, opEmptyList, opMemoize, opMark)
				break
			}
			n := int64(r.Uint64() >> r.IntN(64))
			if r.IntN(3) == 0 {
				n = -n
			}
			if lk.codes[j&7] == keyStream && r.IntN(6) != 0 {
				n = v.lastStream
			}
			d = leadInt(r, d, n)
		}
		for range r.IntN(24) {
			d = append(d, byte(r.IntN(256)))
		}
		limit := len(d)
		if k%3 == 0 {
			limit = r.IntN(len(d) + 8) // within the input, or beyond it
		}
		i := 0
		if k%4 == 3 {
			i = r.IntN(len(starts))
		}
		p := starts[i]
		var l0 entryLead
		for c := range l0 {
			l0[c] = int64(r.Uint64())
		}
		l, wl := l0, l0
		q, j, frames := leadPairs(v, d, p, limit, i, &l)
		wq, wj, wframes := leadPairsPlain(&lk, v.lastStream, d, p, limit, i, &wl)
		if q != wq || j != wj || frames != wframes || l != wl {
			t.Fatalf("entry %d from pair %d at %d (limit %d of %d): leadPairs %d %d %v %v, plainly %d %d %v %v\n% x",
				k, i, p, limit, len(d), q, j, frames, l, wq, wj, wframes, wl, d)
		}
		// In WebAssembly leadPairs is assembly: it must leave what
		// leadPairsGo leaves (natively they are one).
		if runtime.GOARCH == "wasm" {
			gl := l0
			gq, gj, gframes := leadPairsGo(v, d, p, limit, i, &gl)
			if q != gq || j != gj || frames != gframes || l != gl {
				t.Fatalf("entry %d: leadPairs %d %d %v %v, leadPairsGo %d %d %v %v", k, q, j, frames, l, gq, gj, gframes, gl)
			}
		}
	}
}
