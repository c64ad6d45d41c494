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
// (all of up to 2 bytes, so also ones that differ only by trailing zeros,
// and 3 to 40 bytes long ones that differ in one byte at each place: the
// 8-byte steps and the zero-filled last one): no two alike. The cache
// finds what was put, by content, and nothing else.
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
	c := newStackCache()
	for i, k := range keys[:1000] {
		c.put(string(k), StackID(i))
	}
	for i, k := range keys {
		id, ok := c.get(append([]byte(nil), k...))
		if ok != (i < 1000) || ok && id != StackID(i) {
			t.Fatalf("key %q: get gives %d, %v; put %v", k, id, ok, i < 1000)
		}
	}
	if c.len() != 1000 {
		t.Errorf("len %d, want 1000", c.len())
	}
}

// TestStackCacheFind compares findHashed, a one-pass search, with
// findRef, an APPENDS search then a map lookup per candidate, on frame lists of BINGET and LONG_BINGET memo references
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
		if !seen[string(l)] { // put leaves out a second key of the same hash
			seen[string(l)] = true
			lists = append(lists, l)
		}
	}
	hashed, mapped := halfCached(lists)
	hits, falseEnds := 0, 0
	// findRef: each of the first maxCandidates 'e' bytes ends a
	// candidate, the first one cached is the list; an empty candidate,
	// one starting right after the last, ends the search.
	findRef := func(rest []byte) (int, StackID, bool) {
		p, from := -1, 0
		for range maxCandidates {
			j := bytes.IndexByte(rest[from:], opAppends)
			if j <= 0 {
				break
			}
			p = from + j
			if id, ok := mapped[string(rest[:p])]; ok {
				return p, id, true
			}
			from = p + 1
		}
		return p, NoStack, false
	}
	for i, l := range lists {
		var rests [][]byte
		rests = append(rests, l, append(append(append([]byte(nil), l...), opAppends), "h\x07e"[:r.IntN(4)]...))
		if len(l) > 0 {
			rests = append(rests, l[:r.IntN(len(l))])
		}
		rests = append(rests, append([]byte{opAppends}, l...), append(append([]byte(nil), l...), opAppends, opAppends))
		for _, rest := range rests {
			p1, id1, ok1 := hashed.findHashed(rest)
			p2, id2, ok2 := findRef(rest)
			if p1 != p2 || id1 != id2 || ok1 != ok2 {
				t.Fatalf("list %d, rest %q: findHashed %d, %d, %v; findRef %d, %d, %v", i, rest, p1, id1, ok1, p2, id2, ok2)
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

// TestStackCacheLookup checks lookup's way of finding a frame list, with
// each find (findHashed, find, and find after ledHit as cacheLook
// does), against what it must find: the list ends at the first
// APPENDS among its opcodes, and it is found if and only if its items
// are a cached key, with that key's stack. The lists are those of
// TestStackCacheFind (memo ids often holding 'e' bytes, up to 40 items),
// in rests that end the list and go on, cut it short, or start with
// APPENDS, and then in a repeated sequence; lead must have found most of
// the hits, find's prediction many, and ledHit every one lead found
// but one (the one whose note makes stackCache.next: find makes it).
func TestStackCacheLookup(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	idByte := func(pe int) byte {
		if pe > 0 && r.IntN(pe) == 0 {
			return opAppends
		}
		return byte(r.IntN(256))
	}
	var lists [][]byte
	seen := map[string]bool{}
	for len(lists) < 4000 {
		var l []byte
		pe := []int{0, 40, 4}[r.IntN(3)]
		for range 1 + r.IntN(40) { // frameRun caches no empty list
			if r.IntN(3) == 0 {
				l = append(l, opLongBinGet, idByte(pe), idByte(pe), idByte(pe), idByte(pe))
			} else {
				l = append(l, opBinGet, idByte(pe))
			}
		}
		if !seen[string(l)] {
			seen[string(l)] = true
			lists = append(lists, l)
		}
	}
	hashed, mapped := halfCached(lists)
	ledded, _ := halfCached(lists) // its own prediction's context
	ledHits := 0
	ledFind := func(rest []byte) (int, StackID, bool) {
		if p, id := ledHit(ledded, rest); p >= 0 {
			ledHits++
			return p, id, true
		}
		return ledded.find(rest)
	}
	// want parses rest as memo references up to an APPENDS.
	want := func(rest []byte) (int, StackID, bool) {
		q := 0
		for q < len(rest) && rest[q] != opAppends {
			switch rest[q] {
			case opBinGet:
				q += 2
			case opLongBinGet:
				q += 5
			default:
				return -1, NoStack, false
			}
		}
		if q >= len(rest) {
			return -1, NoStack, false
		}
		id, ok := mapped[string(rest[:q])]
		return q, id, ok
	}
	ways := []struct {
		name string
		c    *stackCache
		find func([]byte) (int, StackID, bool)
		get  func([]byte) (StackID, bool)
	}{
		{"findHashed", hashed, hashed.findHashed, hashed.get},
		{"find", hashed, hashed.find, hashed.get},
		{"ledHit", ledded, ledFind, ledded.get},
	}
	hits, led, predicted := 0, 0, 0
	check := func(rest []byte) {
		if _, i := hashed.predicted(rest); i >= 0 {
			predicted++
		}
		if _, i := hashed.lead(rest); i >= 0 {
			led++
		}
		for _, w := range ways {
			// lookup, with this find and get
			p, id, ok := w.find(rest)
			if !ok && p >= 0 {
				if q := listEnd(rest); q > p {
					id, ok = w.get(rest[:q])
					p = q
				}
			}
			wp, wid, wok := want(rest)
			if ok != wok || ok && (p != wp || id != wid) {
				t.Fatalf("%s, rest %q: found %d, %d, %v; want %d, %d, %v", w.name, rest, p, id, ok, wp, wid, wok)
			}
			if ok && w.name == "findHashed" {
				hits++
			}
		}
	}
	for _, l := range lists {
		tail := []byte("h\x07e\x00j")[:r.IntN(6)]
		rests := [][]byte{l, append(append(append([]byte(nil), l...), opAppends), tail...),
			append([]byte{opAppends}, l...), append(append([]byte(nil), l...), opAppends, opAppends)}
		if len(l) > 0 {
			rests = append(rests, l[:r.IntN(len(l))], append(append([]byte(nil), l[:r.IntN(len(l))]...), opAppends, 'h'))
			// l with one byte changed, the last or another
			for _, i := range []int{len(l) - 1, r.IntN(len(l))} {
				c := append(append([]byte(nil), l...), opAppends)
				c[i] ^= 1 << r.IntN(8)
				rests = append(rests, c)
			}
		}
		for _, rest := range rests {
			check(rest)
		}
	}
	// A sequence of lists repeated, as a training loop's: find predicts
	// the next one, which is sometimes cut short, longer, or another first
	// frame.
	var seq [][]byte
	for i := 0; i < 600; i += 2 { // cached, but for a few
		seq = append(seq, lists[i+b2i(i%50 == 0)])
	}
	for range 4 {
		for _, l := range seq {
			rest := append(append([]byte(nil), l...), opAppends, opBinGet)
			switch r.IntN(20) {
			case 0:
				rest = append(append([]byte(nil), l[:r.IntN(len(l))]...), opAppends)
			case 1:
				rest = append(append([]byte(nil), l...), opBinGet, 7, opAppends)
			case 2:
				rest[1] ^= 1 // another first frame
			}
			check(rest)
		}
	}
	t.Logf("%d hits, %d by lead, %d predicted, %d by ledHit", hits, led, predicted, ledHits)
	if hits < 1500 || led < hits*3/4 || predicted < 250 || ledHits < led-1 {
		t.Errorf("%d hits, %d by lead, %d predicted, %d by ledHit: the lists miss the cases", hits, led, predicted, ledHits)
	}
}

// TestSameBytes compares byte strings of 0 to 40 bytes with themselves
// and with each one-byte change, and strings of other lengths.
func TestSameBytes(t *testing.T) {
	for n := range 41 {
		a := make([]byte, n)
		for i := range a {
			a[i] = byte(i*37 + n)
		}
		if !sameBytes(a, string(a)) {
			t.Fatalf("%q differs from itself", a)
		}
		if sameBytes(a, string(append(append([]byte(nil), a...), 0))) || n > 0 && sameBytes(a, string(a[:n-1])) {
			t.Fatalf("%q: same as a string of another length", a)
		}
		for i := range n {
			b := append([]byte(nil), a...)
			b[i] ^= 1
			if sameBytes(a, string(b)) {
				t.Fatalf("%q and %q: same", a, b)
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// halfCached returns a stack cache that knows every other list of lists
// (list i as StackID(i)), and a map of the same.
func halfCached(lists [][]byte) (*stackCache, map[string]StackID) {
	c, m := newStackCache(), map[string]StackID{}
	for i, l := range lists {
		if i%2 == 0 {
			c.put(string(l), StackID(i))
			m[string(l)] = StackID(i)
		}
	}
	return c, m
}
