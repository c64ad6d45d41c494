package snapshot

import (
	"encoding/binary"
	"hash/maphash"
	"unsafe"
)

// stackCache is vm.stackCache: the encodings of frame lists (their bytes
// from the MARK to the APPENDS) mapped to their held stacks. A key is
// found by its 64-bit hash (bytesHash: in WebAssembly Go's string hash is
// a slow path) and then compared whole, so a hash collision is a miss,
// never a wrong stack.
type stackCache struct {
	seed     maphash.Seed
	seed64   uint64
	idx      map[uint64]int32 // hash -> index in keys and ids
	keys     []string
	ids      []StackID
	keyBytes int
}

func newStackCache() *stackCache {
	seed := maphash.MakeSeed()
	return &stackCache{seed: seed, seed64: maphash.Comparable(seed, 0), idx: map[uint64]int32{}}
}

func (c *stackCache) len() int { return len(c.keys) }

// get returns the stack whose encoding is k.
func (c *stackCache) get(k []byte) (StackID, bool) {
	i, ok := c.idx[c.hash(k)]
	if !ok || c.keys[i] != string(k) {
		return NoStack, false
	}
	return c.ids[i], true
}

// put adds the encoding k of stack id (a second key of the same hash is
// left out).
func (c *stackCache) put(k string, id StackID) {
	h := c.hash(unsafe.Slice(unsafe.StringData(k), len(k)))
	if _, ok := c.idx[h]; ok {
		return
	}
	c.idx[h] = int32(len(c.keys))
	c.keys, c.ids = append(c.keys, k), append(c.ids, id)
	c.keyBytes += len(k)
}

// bytesHashXX is XXH64's steps over b's 8- and 4-byte pieces and the
// rest, and its final mix (see stackHashXX).
func bytesHashXX(seed uint64, b []byte) uint64 {
	h := seed + xxP5 + uint64(len(b))
	i := 0
	for ; i+8 <= len(b); i += 8 {
		h = xxMerge(h, binary.LittleEndian.Uint64(b[i:]))
	}
	if i+4 <= len(b) {
		h = xxTail4(h, uint64(binary.LittleEndian.Uint32(b[i:])))
		i += 4
	}
	for ; i < len(b); i++ {
		h ^= uint64(b[i]) * xxP5
		h = rotl(h, 11) * xxP1
	}
	return xxAvalanche(h)
}
