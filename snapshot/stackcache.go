package snapshot

import (
	"encoding/binary"
	"hash/maphash"
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
	i, ok := c.idx[bytesHashXX(c.seed64, k)]
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
