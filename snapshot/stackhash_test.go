package snapshot

import (
	"bytes"
	"hash/maphash"
	"math/rand/v2"
	"testing"
)

// TestStackHashes hashes every frame list of up to 3 frames over 40 frame
// IDs (and some long ones) with both stack hashes: distinct lists must get
// distinct hashes (order, length and a zero frame all count), and another
// seed other hashes.
func TestStackHashes(t *testing.T) {
	var lists []Stack
	lists = append(lists, Stack{})
	for a := range 40 {
		lists = append(lists, Stack{FrameID(a)})
		for b := range 40 {
			lists = append(lists, Stack{FrameID(a), FrameID(b)})
			for c := range 40 {
				lists = append(lists, Stack{FrameID(a), FrameID(b), FrameID(c)})
			}
		}
	}
	for n := 4; n < 200; n++ {
		st := make(Stack, n)
		for i := range st {
			st[i] = FrameID((i * 7) % 600)
		}
		lists = append(lists, st, append(Stack{1<<31 - 1}, st...))
	}
	s1, s2 := maphash.MakeSeed(), maphash.MakeSeed()
	x1, x2 := maphash.Comparable(s1, 0), maphash.Comparable(s2, 0)
	for _, h := range []struct {
		name   string
		f1, f2 func(Stack) uint64
	}{
		{"maphash", func(st Stack) uint64 { return stackHashMaphash(s1, st) }, func(st Stack) uint64 { return stackHashMaphash(s2, st) }},
		{"xx", func(st Stack) uint64 { return stackHashXX(x1, st) }, func(st Stack) uint64 { return stackHashXX(x2, st) }},
	} {
		seen := map[uint64]int{}
		same := 0
		for i, st := range lists {
			v := h.f1(st)
			if j, ok := seen[v]; ok {
				t.Fatalf("%s: %v and %v hash alike", h.name, lists[j], st)
			}
			seen[v] = i
			if h.f1(append(Stack(nil), st...)) != v {
				t.Fatalf("%s: %v hashes differently twice", h.name, st)
			}
			if h.f2(st) == v {
				same++
			}
		}
		if same > 0 {
			t.Errorf("%s: %d of %d lists hash alike under two seeds", h.name, same, len(lists))
		}
	}
}

// TestStackCacheKeys hashes byte strings with the stack cache's hash in
// WebAssembly (all of up to 2 bytes, so also ones that differ only by
// trailing zeros, and 3 to 40 bytes long ones that differ in one byte at
// each place: the 8-byte steps and the zero-filled last one): no two
// alike. Both ways of the cache find what was put, by
// content, and nothing else.
func TestStackCacheKeys(t *testing.T) {
	var keys [][]byte
	keys = append(keys, []byte{})
	for a := range 256 {
		keys = append(keys, []byte{byte(a)})
		for b := range 256 {
			keys = append(keys, []byte{byte(a), byte(b)})
		}
	}
	for n := 3; n <= 40; n++ {
		base := make([]byte, n)
		for i := range base {
			base[i] = byte('h' + i)
		}
		keys = append(keys, base)
		for i := range n {
			k := append([]byte(nil), base...)
			k[i] ^= 0x40
			keys = append(keys, k)
		}
	}
	seed := maphash.Comparable(maphash.MakeSeed(), 0)
	seen := map[uint64]int{}
	for i, k := range keys {
		h := bytesHashXX(seed, k)
		if j, ok := seen[h]; ok {
			t.Fatalf("%q and %q hash alike", keys[j], k)
		}
		seen[h] = i
	}
	for name, way := range map[string]struct {
		get func(*stackCache, []byte) (StackID, bool)
		put func(*stackCache, string, StackID)
	}{
		"map":    {(*stackCache).getMap, (*stackCache).putMap},
		"hashed": {(*stackCache).getHashed, (*stackCache).putHashed},
	} {
		c := newStackCache()
		for i, k := range keys[:1000] {
			way.put(c, string(k), StackID(i))
		}
		for i, k := range keys {
			id, ok := way.get(c, append([]byte(nil), k...))
			if ok != (i < 1000) || ok && id != StackID(i) {
				t.Fatalf("%s: key %q: get gives %d, %v; put %v", name, k, id, ok, i < 1000)
			}
		}
		if c.len() != 1000 {
			t.Errorf("%s: len %d, want 1000", name, c.len())
		}
	}
}

// TestStackCacheFind compares findHashed, the one-pass search of
// WebAssembly, with findMap, an APPENDS search then a map lookup per
// candidate, on frame lists of BINGET and LONG_BINGET memo references
// whose id bytes are often 'e' (a false end), with and without a cached
// key, each followed by APPENDS and more bytes or cut short: the same end,
// stack and verdict for each.
func TestStackCacheFind(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 4))
	var pe int // 1 in pe id bytes is 'e' (never for 0)
	idByte := func() byte {
		if pe > 0 && r.IntN(pe) == 0 {
			return opAppends
		}
		if b := byte(r.IntN(256)); b != opAppends {
			return b
		}
		return 0
	}
	var lists [][]byte
	seen := map[string]bool{}
	for len(lists) < 3000 {
		var l []byte
		pe = []int{0, 40, 4}[r.IntN(3)]
		for range r.IntN(40) {
			if r.IntN(3) == 0 {
				l = append(l, opLongBinGet, idByte(), idByte(), idByte(), idByte())
			} else {
				l = append(l, opBinGet, idByte())
			}
		}
		if !seen[string(l)] { // putHashed and putMap differ on a second put
			seen[string(l)] = true
			lists = append(lists, l)
		}
	}
	hashed, mapped := newStackCache(), newStackCache()
	for i, l := range lists {
		if i%2 == 0 {
			hashed.putHashed(string(l), StackID(i))
			mapped.putMap(string(l), StackID(i))
		}
	}
	hits, falseEnds := 0, 0
	for i, l := range lists {
		var rests [][]byte
		rests = append(rests, l, append(append(append([]byte(nil), l...), opAppends), "h\x07e"[:r.IntN(4)]...))
		if len(l) > 0 {
			rests = append(rests, l[:r.IntN(len(l))])
		}
		rests = append(rests, append([]byte{opAppends}, l...), append(append([]byte(nil), l...), opAppends, opAppends))
		for _, rest := range rests {
			p1, id1, ok1 := hashed.findHashed(rest)
			p2, id2, ok2 := mapped.findMap(rest)
			if p1 != p2 || id1 != id2 || ok1 != ok2 {
				t.Fatalf("list %d, rest %q: findHashed %d, %d, %v; findMap %d, %d, %v", i, rest, p1, id1, ok1, p2, id2, ok2)
			}
			if ok1 {
				hits++
				if int(id1) != i && !bytes.Equal(lists[id1], rest[:p1]) {
					t.Fatalf("rest %q: stack %d of another key", rest, id1)
				}
			}
			if p1 >= 0 && p1 < len(l) {
				falseEnds++
			}
		}
	}
	t.Logf("%d hits, %d false ends", hits, falseEnds)
	if hits < 1000 || falseEnds < 1000 {
		t.Errorf("%d hits, %d false ends: the lists miss the cases", hits, falseEnds)
	}
}
