package snapshot

import "encoding/binary"

// entryLead holds the values of a trace entry's leading pairs by key code
// (keyAction to keyTimeUS), as leadPairs reads them: the action's code,
// addr, size and time_us as read, and -1 at keyStream once the stream
// pair is read (its value is then the last stream set). 0 for a key not
// read.
type entryLead [keyTimeUS + 1]int64

// leadPairsGo reads the leading pairs of a trace entry, from its i-th at
// p, whose keys (and action) are the memo references noted in their place
// (vm.ekeys, vm.eacts): as pair 0 the action, then ints for addr, size,
// time_us and the stream (the last stream's value only), into l. It stops
// at the first pair that is anything else, or that would reach 16 bytes
// before limit, and returns its position and index and whether its key is
// the frames key noted in its place. The caller knows that no memo slot
// was stored twice (a reference then names the string it named when
// noted).
//
// It makes no call and takes no branch on the key or the int's opcode: a
// pair's key is tested by its noted mask, the int's form read from
// intForms by arithmetic, and the value stored in l at its key's code.
// In WebAssembly leadPairs is this loop written in WebAssembly
// (leadpairs_wasm.s); natively it is this function.
func leadPairsGo(v *vm, d []byte, p, limit, i int, l *entryLead) (int, int, bool) {
	limit = min(limit, len(d))
	if i == 0 && p+16 <= limit && v.ekeys[0].matches(d, p) {
		r := p + int(v.ekeys[0].n)
		if a := &v.eacts[int(d[r+1])&(len(v.eacts)-1)]; a.matches(d, r) {
			l[keyAction], p, i = int64(a.code), r+int(a.n), 1
		}
	}
	for i > 0 && p+16 <= limit {
		k := &v.ekeys[i&(len(v.ekeys)-1)] // (i == 8: the action's, not an int)
		if !k.matches(d, p) || k.code-keyAddr > keyTimeUS-keyAddr {
			break
		}
		r := p + int(k.n) // r+10 <= limit: n <= 5
		b := d[r : r+10 : r+10]
		f := intForms[b[0]]
		long := uint(f>>intLong1Bit) & 1
		w := uint(f&intWidth) + long*uint(b[1]) // LONG1: its width byte
		sh := (64 - 8*w) & 63                   // (w is tested below)
		u := binary.LittleEndian.Uint64(b[1+long:]) << sh
		n := int64(u >> sh)
		if f&intSigned != 0 {
			n = int64(u) >> sh
		}
		if w-1 >= 8 || (n^v.lastStream)&k.stream != 0 { // w-1 >= 8: also f == 0
			break
		}
		l[k.code] = n | k.stream
		p = r + int(1+long+w)
		i++
	}
	k := &v.ekeys[i&(len(v.ekeys)-1)]
	return p, i, i > 0 && i < len(v.ekeys) && p+16 <= limit && k.code == keyFrames && k.matches(d, p)
}
