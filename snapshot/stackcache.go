package snapshot

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"unsafe"
)

// stackCache is vm.stackCache: the encodings of frame lists (their bytes
// from the MARK to the APPENDS) mapped to their held stacks. Natively a
// map of strings; in WebAssembly, where Go's string hash is its slow path,
// a key is found by its 64-bit hash (bytesHashXX) and then compared
// whole, so that a hash collision is a miss, never a wrong stack (see
// get and put in stackhash_*.go).
type stackCache struct {
	m        map[string]StackID // natively
	seed64   uint64
	idx      map[uint64]int32 // in wasm: hash -> index in keys and ids
	keys     []string
	ids      []StackID
	keyBytes int
}

func newStackCache() *stackCache {
	return &stackCache{m: map[string]StackID{}, seed64: maphash.Comparable(maphash.MakeSeed(), 0), idx: map[uint64]int32{}}
}

func (c *stackCache) len() int { return len(c.m) + len(c.keys) }

// getHashed and putHashed are get and put in WebAssembly.
func (c *stackCache) getHashed(k []byte) (StackID, bool) {
	return c.probe(bytesHashXX(c.seed64, k), k)
}

// probe returns the stack of key k, whose bytesHashXX is h.
func (c *stackCache) probe(h uint64, k []byte) (StackID, bool) {
	i, ok := c.idx[h]
	if !ok || c.keys[i] != string(k) {
		return NoStack, false
	}
	return c.ids[i], true
}

// putHashed leaves out a second key of the same hash.
func (c *stackCache) putHashed(k string, id StackID) {
	h := bytesHashXX(c.seed64, unsafe.Slice(unsafe.StringData(k), len(k)))
	if _, ok := c.idx[h]; ok {
		return
	}
	c.idx[h] = int32(len(c.keys))
	c.keys, c.ids = append(c.keys, k), append(c.ids, id)
	c.keyBytes += len(k)
}

// getMap and putMap are get and put natively.
func (c *stackCache) getMap(k []byte) (StackID, bool) {
	id, ok := c.m[string(k)]
	return id, ok
}

func (c *stackCache) putMap(k string, id StackID) {
	c.m[k] = id
	c.keyBytes += len(k)
}

// bytesHashXX is XXH64's step over b's 8-byte pieces, the last one
// zero-filled, then b's length and XXH64's final mix (see stackHashXX).
// findHashed computes the same over a list's bytes as it scans them.
func bytesHashXX(seed uint64, b []byte) uint64 {
	h := seed + xxP5
	i := 0
	for ; i+8 <= len(b); i += 8 {
		h = xxMerge(h, binary.LittleEndian.Uint64(b[i:]))
	}
	if i < len(b) {
		h = xxMerge(h, tailWord(b[i:]))
	}
	return keyHashEnd(h, len(b))
}

// keyHashEnd ends bytesHashXX of n bytes from the state h.
func keyHashEnd(h uint64, n int) uint64 { return xxAvalanche(h ^ uint64(n)*xxP1) }

// tailWord returns the up to 8 bytes of b as a little-endian word.
func tailWord(b []byte) uint64 {
	var w uint64
	for j := len(b) - 1; j >= 0; j-- {
		w = w<<8 | uint64(b[j])
	}
	return w
}

// findMap and findHashed are find natively and in WebAssembly: rest
// follows a list's MARK, and each of its first maxCandidates APPENDS
// bytes ('e', which may also be a byte of a memo id) ends a candidate
// key; the first candidate that is a cached key gives its end p and
// stack. Without one, p is the end of the last candidate tried, or -1.
// A candidate is empty or starts right after the last one ends the
// search. findHashed finds the 'e' bytes and hashes the candidates in
// one pass of 8-byte words.
func (c *stackCache) findMap(rest []byte) (p int, id StackID, ok bool) {
	p, from := -1, 0
	for range maxCandidates {
		j := indexAppends(rest[from:])
		if j <= 0 {
			break
		}
		p = from + j
		if id, ok = c.getMap(rest[:p]); ok {
			return p, id, true
		}
		from = p + 1
	}
	return p, NoStack, false
}

func (c *stackCache) findHashed(rest []byte) (p int, id StackID, ok bool) {
	const ones, highs, es = 0x0101010101010101, 0x8080808080808080, 0x0101010101010101 * opAppends
	p, from, tries := -1, 0, 0
	h := c.seed64 + xxP5 // over rest[:i]
	for i := 0; i < len(rest); i += 8 {
		var w uint64
		if i+8 <= len(rest) {
			w = binary.LittleEndian.Uint64(rest[i:])
		} else {
			w = tailWord(rest[i:])
		}
		x := w ^ es // the zeros past the end are no 'e'
		// The lowest set bit marks the first zero byte of x exactly; x
		// gets the bytes up to a candidate set before the next search.
		for t := (x - ones) &^ x & highs; t != 0; t = (x - ones) &^ x & highs {
			k := bits.TrailingZeros64(t) / 8
			q := i + k
			if q == from {
				return p, NoStack, false
			}
			p = q
			hq := h
			if k > 0 {
				hq = xxMerge(h, w&(1<<(8*k)-1))
			}
			if id, ok = c.probe(keyHashEnd(hq, q), rest[:q]); ok {
				return p, id, true
			}
			if tries++; tries == maxCandidates {
				return p, NoStack, false
			}
			from = q + 1
			x |= 1<<(8*(k+1)) - 1
		}
		h = xxMerge(h, w)
	}
	return p, NoStack, false
}
