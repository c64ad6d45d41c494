package snapshot

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLedHit checks ledHit (in WebAssembly the assembly) against ledHitGo
// and both against the list each rest holds: two caches of the same keys,
// one for each, are fed the same rests, and after every rest both must
// give the same length and stack, or both a miss, and hold the same
// context (last, next); a hit must be the cached key the rest's list is,
// ended by its APPENDS. The keys are frame lists of 1 to 80 frames, many
// sharing their first frames (as real stacks share the allocator's), some
// with 'e' bytes in their memo ids. The rests come in a repeated sequence
// (so that most are predicted), and each key of some lengths is then
// given with each of its bytes changed in turn, both where it is predicted
// and where only lead can find it, cut short by a frame, cut before its
// APPENDS (the APPENDS after the rest's end) and with a frame more.
func TestLedHit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 11))
	frame := func(l []byte, pe int) []byte {
		id := func() byte {
			if pe > 0 && r.IntN(pe) == 0 {
				return opAppends
			}
			return byte(r.IntN(256))
		}
		if r.IntN(3) == 0 {
			return append(l, opLongBinGet, id(), id(), id(), id())
		}
		return append(l, opBinGet, id())
	}
	prefixes := make([][]byte, 6)
	for i := range prefixes {
		for range 4 + i {
			prefixes[i] = frame(prefixes[i], 0)
		}
	}
	var keys [][]byte
	seen := map[string]bool{}
	for len(keys) < 1200 {
		var l []byte
		if r.IntN(2) == 0 {
			l = append(l, prefixes[r.IntN(len(prefixes))]...)
		}
		pe := []int{0, 30, 4}[r.IntN(3)]
		for range 1 + r.IntN(80) {
			l = frame(l, pe)
		}
		if !seen[string(l)] {
			seen[string(l)] = true
			keys = append(keys, l)
		}
	}
	ca, cg := newStackCache(), newStackCache()
	mapped := map[string]StackID{}
	for i, k := range keys {
		if i%8 != 7 { // a few not cached
			ca.put(string(k), StackID(i))
			cg.put(string(k), StackID(i))
			mapped[string(k)] = StackID(i)
		}
	}
	// want is the list rest holds, if a cached key of 8 bytes or more
	// (the keys ledHit finds, but for those lead does not hold: maxLed):
	// its length and stack.
	want := func(rest []byte) (int, StackID) {
		q := listEnd(rest)
		if q < 8 || len(rest) <= 8 {
			return -1, NoStack
		}
		if id, ok := mapped[string(rest[:q])]; ok {
			return q, id
		}
		return -1, NoStack
	}
	hits, predicted, looks := 0, 0, 0
	// look gives rest to both caches as cacheLook does (ledHit, then
	// find where it misses) and checks them.
	look := func(rest []byte, what string) {
		t.Helper()
		_, pi := cg.predicted(rest)
		at := nextSlot(cg.last) // where a hit is noted
		p, id := ledHit(ca, rest)
		gp, gid := ledHitGo(cg, rest)
		if p != gp || id != gid || ca.last != cg.last {
			t.Fatalf("%s, rest %q: ledHit %d, %d, last %v; ledHitGo %d, %d, last %v", what, rest, p, id, ca.last, gp, gid, cg.last)
		}
		if wp, wid := want(rest); p >= 0 && (p != wp || id != wid) {
			t.Fatalf("%s, rest %q: ledHit %d, %d; want %d, %d", what, rest, p, id, wp, wid)
		}
		if p >= 0 {
			hits++
			if pi >= 0 {
				predicted++
			}
		} else {
			ca.find(rest)
			cg.find(rest)
		}
		if looks++; looks%256 == 0 && !slices.Equal(ca.next, cg.next) || ca.next != nil && ca.next[at] != cg.next[at] {
			t.Fatalf("%s, rest %q: the caches' next tables differ", what, rest)
		}
	}
	ended := func(l []byte, tail ...byte) []byte {
		return append(append(append([]byte(nil), l...), opAppends), tail...)
	}
	var seq [][]byte
	for len(seq) < 300 {
		if i := r.IntN(len(keys)); i%8 != 7 || len(seq)%50 == 0 { // cached, but for a few
			seq = append(seq, keys[i])
		}
	}
	for round := range 8 {
		for _, k := range seq {
			rest := ended(k, opBinGet, 3)
			if round > 0 && r.IntN(30) == 0 { // another frame somewhere
				i := r.IntN(len(k)/2) * 2
				rest[i+1] ^= byte(1 + r.IntN(255))
			}
			look(rest, "sequence")
		}
	}
	// Each byte of a key changed, predicted (after the two keys before
	// it) or not (after two others), and the key cut short by its last
	// frame, and with one frame more.
	for i, k := range keys {
		if i%8 == 7 || len(k) < 8 || i%7 != 0 && len(k) > 24 {
			continue
		}
		a, b := keys[(i+1)%len(keys)], keys[(i+2)%len(keys)]
		for _, pre := range [][2][]byte{{a, b}, {b, a}} {
			// a, b, k: k follows a, b now, and not b, a.
			look(ended(a), "a")
			look(ended(b), "b")
			look(ended(k), "k")
			for j := range k {
				look(ended(pre[0]), "before")
				look(ended(pre[1]), "before")
				c := ended(k, opMark)
				c[j] ^= 1 << r.IntN(8)
				look(c, "changed")
			}
			look(ended(pre[0]), "before")
			look(ended(pre[1]), "before")
			look(ended(k)[:len(k)], "cut before its APPENDS") // the APPENDS after rest's end
			look(ended(pre[0]), "before")
			look(ended(pre[1]), "before")
			look(ended(k[:len(k)-2]), "short")
			look(ended(pre[0]), "before")
			look(ended(pre[1]), "before")
			look(ended(frame(append([]byte(nil), k...), 4)), "longer")
		}
	}
	t.Logf("%d hits, %d predicted", hits, predicted)
	if hits < 20000 || predicted < 500 || hits-predicted < 10000 {
		t.Errorf("%d hits, %d predicted: the rests miss the cases", hits, predicted)
	}
}
