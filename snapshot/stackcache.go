package snapshot

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"unsafe"
)

// stackCache is vm.stackCache: the encodings of frame lists (their bytes
// from the MARK to the APPENDS) mapped to their held stacks. A key is
// found by its 64-bit hash (bytesHashXX) and then compared whole, so that
// a hash collision is a miss, never a wrong stack (see get and put). A
// list is first taken to be the one that followed the last two (ledHit,
// find), then looked for by its first 8 bytes (lead): once a training
// loop's stacks are cached, nearly every list is found without a hash.
// (Natively, a map of strings, with a map lookup per candidate end, took
// 0.2 s more CPU on a 1 GiB file of real stacks.)
type stackCache struct {
	seed64   uint64
	idx      map[uint64]int32 // hash -> index in keys and ids
	keys     []string
	ids      []StackID
	keyBytes int
	// words[i] is the first 8 bytes of keys[i] (0 if shorter); slots is
	// an open-addressing table of the indexes + 1 of the keys of 8 bytes
	// or more, placed by their first word (slotOf); led counts them.
	words []uint64
	slots []int32
	led   int
	// last holds the last two keys found by find (-1: none), next
	// what followed two keys, by nextSlot.
	last [2]int32
	next []nextKey
}

func newStackCache() *stackCache {
	return &stackCache{seed64: maphash.Comparable(maphash.MakeSeed(), 0), idx: map[uint64]int32{}, last: [2]int32{-1, -1}}
}

func (c *stackCache) len() int { return len(c.keys) }

// lookup finds the list whose items follow its MARK in rest: the position
// in rest of the APPENDS that ends it and its stack, if it is a cached key.
// The items are parsed only if need be: first, each APPENDS byte ('e'),
// which may also be a byte of a memo id, ends a candidate (find). A
// candidate equal to a cached key is the list: the key is whole opcodes
// from the MARK on, so the 'e' after it is the APPENDS. After
// maxCandidates, the opcodes are parsed to the APPENDS.
func (c *stackCache) lookup(rest []byte) (int, StackID, bool) {
	p, id, ok := c.find(rest)
	if ok || p < 0 {
		return p, id, ok
	}
	q := listEnd(rest)
	if q <= p {
		return -1, NoStack, false // no APPENDS, or a candidate tried already
	}
	id, ok = c.get(rest[:q])
	return q, id, ok
}

// listEnd returns the position in rest of the APPENDS that ends a list of
// memo references (rest follows its MARK), or -1 if rest holds anything
// else before it or no APPENDS.
func listEnd(rest []byte) int {
	q := 0
	for q < len(rest) && rest[q] != opAppends {
		switch rest[q] {
		case opBinGet:
			q += 2
		case opLongBinGet:
			q += 5
		default:
			return -1
		}
	}
	if q >= len(rest) {
		return -1
	}
	return q
}

// get returns the stack whose encoding is k.
func (c *stackCache) get(k []byte) (StackID, bool) {
	return c.stack(c.probe(bytesHashXX(c.seed64, k), k))
}

// stack returns the stack of key i, if i >= 0.
func (c *stackCache) stack(i int32) (StackID, bool) {
	if i < 0 {
		return NoStack, false
	}
	return c.ids[i], true
}

// probe returns the index of key k, whose bytesHashXX is h, or -1.
func (c *stackCache) probe(h uint64, k []byte) int32 {
	i, ok := c.idx[h]
	if !ok || !sameBytes(k, c.keys[i]) {
		return -1
	}
	return i
}

// put adds the encoding k of stack id, but for a second key of the same
// hash.
func (c *stackCache) put(k string, id StackID) {
	h := bytesHashXX(c.seed64, unsafe.Slice(unsafe.StringData(k), len(k)))
	if _, ok := c.idx[h]; ok {
		return
	}
	i := int32(len(c.keys))
	c.idx[h] = i
	c.keys, c.ids = append(c.keys, k), append(c.ids, id)
	c.keyBytes += len(k)
	var w uint64
	if len(k) >= 8 {
		w = binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(k), 8))
		if 2*(c.led+1) > len(c.slots) {
			c.slots = make([]int32, max(1024, 2*len(c.slots)))
			c.led = 0
			for j, kj := range c.keys[:i] {
				if len(kj) >= 8 {
					c.slot(c.words[j], int32(j))
				}
			}
		}
		c.slot(w, i)
	}
	c.words = append(c.words, w)
}

// find looks for the list after a MARK among the cached keys: it is
// first taken to be the one that followed the last two lists the last
// time (predicted: real training loops repeat their sequence of stacks),
// then looked for by its first 8 bytes (lead), then by findHashed.
func (c *stackCache) find(rest []byte) (int, StackID, bool) {
	p, i := c.predicted(rest)
	if i < 0 {
		p, i = c.lead(rest)
	}
	if i < 0 {
		p, i = c.findHashedAt(rest)
	}
	// The context: the last two keys found, and what followed them.
	if i >= 0 && c.last[0] >= 0 && c.last[1] >= 0 {
		if c.next == nil {
			c.next = make([]nextKey, nextKeys)
		}
		c.next[nextSlot(c.last)] = nextKey{after: c.last, key: i}
	}
	c.last = [2]int32{c.last[1], i}
	id, ok := c.stack(i)
	return p, id, ok
}

// ledHitGo is find's first two steps (predicted, then lead) for keys of
// 8 bytes or more, whole and without a call (calls cost in WebAssembly,
// and once a training loop's stacks are cached, nearly every list is
// found so): the key's length (the APPENDS) and stack, noted as find
// notes a key found, or -1, having changed nothing (find then looks
// again, through findHashed), as it does for the one key whose note
// would make the table of what followed two keys (c.next; find makes
// it: an allocation is not for assembly). In WebAssembly
// ledHit is this function in assembly (ledhit_wasm.s), natively it is
// this function.
func ledHitGo(c *stackCache, rest []byte) (int, StackID) {
	n, i := ledFindGo(c, rest)
	if i < 0 || !c.ledNote(i) {
		return -1, NoStack
	}
	return n, c.ids[i]
}

// ledFindGo is ledHitGo's search: the key's length and index, or -1,
// having changed nothing.
func ledFindGo(c *stackCache, rest []byte) (int, int32) {
	if len(rest) <= 8 {
		return -1, -1
	}
	pa := unsafe.Pointer(unsafe.SliceData(rest))
	if c.next != nil && c.last[0] >= 0 && c.last[1] >= 0 {
		if e := &c.next[nextSlot(c.last)]; e.after == c.last {
			k := c.keys[e.key]
			if n := len(k); n >= 8 && n < len(rest) && rest[n] == opAppends && sameFrom(pa, unsafe.Pointer(unsafe.StringData(k)), 0, n) {
				return n, e.key
			}
		}
	}
	if c.led == 0 {
		return -1, -1
	}
	w := binary.LittleEndian.Uint64(rest)
	mask := uint32(len(c.slots) - 1)
	for s := slotOf(w) & mask; c.slots[s] != 0; s = (s + 1) & mask {
		j := c.slots[s] - 1
		if c.words[j] != w {
			continue
		}
		k := c.keys[j]
		if n := len(k); n < len(rest) && rest[n] == opAppends && sameFrom(pa, unsafe.Pointer(unsafe.StringData(k)), 8, n) {
			return n, j
		}
	}
	return -1, -1
}

// ledNote notes key i found as find does (c.next, c.last), or reports
// false, having changed nothing, where c.next is to be made.
func (c *stackCache) ledNote(i int32) bool {
	if c.last[0] >= 0 && c.last[1] >= 0 {
		if c.next == nil {
			return false // find makes it, finding the key again
		}
		c.next[nextSlot(c.last)] = nextKey{after: c.last, key: i}
	}
	c.last = [2]int32{c.last[1], i}
	return true
}

// sameFrom reports whether the n bytes at a and b are the same from byte
// from on, 8 at a time (n >= 8): sameBytes, small enough to inline.
func sameFrom(a, b unsafe.Pointer, from, n int) bool {
	for ; from+8 <= n; from += 8 {
		if *(*uint64)(unsafe.Add(a, from)) != *(*uint64)(unsafe.Add(b, from)) {
			return false
		}
	}
	return *(*uint64)(unsafe.Add(a, n-8)) == *(*uint64)(unsafe.Add(b, n-8))
}

// nextKey is an entry of stackCache.next: key followed the keys after.
type nextKey struct {
	after [2]int32
	key   int32
}

// nextKeys is the size of stackCache.next (a power of 2).
const nextKeys = 1 << 12

// nextSlot places a pair of keys in stackCache.next.
func nextSlot(after [2]int32) uint32 {
	return (uint32(after[0])*0x9E3779B1 ^ uint32(after[1])*0x85EBCA77) >> 20
}

// predicted checks whether rest holds the key that followed the last two
// keys found the last time: its length (the APPENDS) and index, or -1.
func (c *stackCache) predicted(rest []byte) (int, int32) {
	if c.next == nil || c.last[0] < 0 || c.last[1] < 0 {
		return -1, -1
	}
	e := c.next[nextSlot(c.last)]
	if e.after != c.last {
		return -1, -1
	}
	return c.holds(rest, e.key, 0)
}

// holds checks whether rest holds key i followed by an APPENDS byte, its
// first from bytes being known to: then the list whose items rest holds
// is that key, as lookup would find (a key is whole memo references, so
// the 'e' bytes inside it are operands, and no shorter key ends at one of
// them). It returns the key's length (the APPENDS) and i, or -1.
func (c *stackCache) holds(rest []byte, i int32, from int) (int, int32) {
	k := c.keys[i]
	if n := len(k); n < len(rest) && rest[n] == opAppends && sameBytes(rest[from:n], k[from:]) {
		return n, i
	}
	return -1, -1
}

// maxLed bounds the keys with the same first 8 bytes in slots: where more
// share them (real stacks all start with the same frames of the
// allocator's own), lead would compare them one by one, and findHashed
// finds the rest.
const maxLed = 4

// slot places key i, whose first 8 bytes are w, in slots, unless maxLed
// keys there start with w.
func (c *stackCache) slot(w uint64, i int32) {
	mask := uint32(len(c.slots) - 1)
	s, same := slotOf(w)&mask, 0
	for ; c.slots[s] != 0; s = (s + 1) & mask {
		if c.words[c.slots[s]-1] == w {
			if same++; same == maxLed {
				return
			}
		}
	}
	c.slots[s] = i + 1
	c.led++
}

// slotOf spreads a key's first word over slots.
func slotOf(w uint64) uint32 { return uint32((w * 0x9E3779B97F4A7C15) >> 32) }

// lead finds a cached key of 8 bytes or more that rest holds, followed by
// APPENDS (see holds), by its first 8 bytes: its length and index, or -1.
func (c *stackCache) lead(rest []byte) (int, int32) {
	if len(rest) <= 8 || c.led == 0 {
		return -1, -1
	}
	w := binary.LittleEndian.Uint64(rest)
	mask := uint32(len(c.slots) - 1)
	for s := slotOf(w) & mask; ; s = (s + 1) & mask {
		i := c.slots[s] - 1
		if i < 0 {
			return -1, -1
		}
		if c.words[i] == w {
			if p, j := c.holds(rest, i, 8); j >= 0 {
				return p, j
			}
		}
	}
}

// sameBytes reports whether a and b (of a's length) hold the same bytes:
// 8 at a time (Go's comparison is a byte loop in WebAssembly), read
// without bounds checks (both have n bytes).
func sameBytes(a []byte, b string) bool {
	n := len(a)
	if len(b) != n {
		return false
	}
	if n < 8 {
		for i := range n {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	pa, pb := unsafe.Pointer(unsafe.SliceData(a)), unsafe.Pointer(unsafe.StringData(b))
	for i := 0; i+8 <= n; i += 8 {
		if *(*uint64)(unsafe.Add(pa, i)) != *(*uint64)(unsafe.Add(pb, i)) {
			return false
		}
	}
	return *(*uint64)(unsafe.Add(pa, n-8)) == *(*uint64)(unsafe.Add(pb, n-8))
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

// findHashed is find's last step: rest follows a list's MARK, and each
// of its first maxCandidates APPENDS bytes ('e', which may also be a byte
// of a memo id) ends a candidate key; the first candidate that is a
// cached key gives its end p and stack. Without one, p is the end of the
// last candidate tried, or -1. A candidate is empty or starts right after
// the last one ends the search. It finds the 'e' bytes and hashes the
// candidates in one pass of 8-byte words.
func (c *stackCache) findHashed(rest []byte) (int, StackID, bool) {
	p, i := c.findHashedAt(rest)
	id, ok := c.stack(i)
	return p, id, ok
}

// findHashedAt is findHashed giving the key's index (-1: none).
func (c *stackCache) findHashedAt(rest []byte) (int, int32) {
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
				return p, -1
			}
			p = q
			hq := h
			if k > 0 {
				hq = xxMerge(h, w&(1<<(8*k)-1))
			}
			if key := c.probe(keyHashEnd(hq, q), rest[:q]); key >= 0 {
				return p, key
			}
			if tries++; tries == maxCandidates {
				return p, -1
			}
			from = q + 1
			x |= 1<<(8*(k+1)) - 1
		}
		h = xxMerge(h, w)
	}
	return p, -1
}
