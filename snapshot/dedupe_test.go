package snapshot

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestDedupeFrom merges tables of lazy and held stacks whose hashes fall in
// three buckets (the first and the last among them) and share their 32-bit
// fragments (and, with fragments of 2 bits, most of them) without being the
// same hash, on one goroutine and on two, and compares the new IDs with the rule worked out with a map: in ID
// order, a stack merges into the first earlier kept one of the same hash
// and depth (frame by frame for two held ones), the kept ones numbered in
// order. The same tables with every hash different (none merges) must come
// back unchanged.
func TestDedupeFrom(t *testing.T) {
	for _, two := range []bool{false, true} {
		for _, bits := range []int{32, 2} {
			for _, repeats := range []bool{true, false} {
				t.Run(fmt.Sprintf("two %v, fragments of %d bits, repeats %v", two, bits, repeats), func(t *testing.T) {
					if two {
						defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
						defer func(old int) { dedupeTwoMin = old }(dedupeTwoMin)
						dedupeTwoMin = 0
					}
					defer func(old uint32) { dedupeFragMask = old }(dedupeFragMask)
					dedupeFragMask = uint32(1<<bits - 1)
					testDedupeFrom(t, repeats)
				})
			}
		}
	}
}

func testDedupeFrom(t *testing.T, repeats bool) {
	r := rand.New(rand.NewPCG(3, 4))
	var tab Stacks
	tab.init()
	type stack struct {
		h      uint64
		lazy   bool
		depth  int
		frames Stack
	}
	st := []stack{{}} // the empty stack
	seen := map[uint64]bool{}
	const n = 3*pageSize + 123
	buckets := []uint64{0, 7, dedupeBuckets - 1}
	for range n {
		var h uint64
		if repeats {
			// 3 buckets, 3 middles, 3 fragments: 27 hashes, each
			// sharing its fragment with 8 others.
			h = buckets[r.IntN(3)]<<(64-dedupeBucketBits) | uint64(r.IntN(3))<<40 | uint64(0x9e3779b9*uint32(1+r.IntN(3)))
		} else {
			for h == 0 || seen[h] {
				h = buckets[r.IntN(3)]<<(64-dedupeBucketBits) | r.Uint64()>>dedupeBucketBits
			}
			seen[h] = true
		}
		s := stack{h: h, lazy: r.IntN(4) > 0, depth: 1 + r.IntN(2)}
		if s.lazy {
			tab.push(lazyAt(int64(len(st))*64, 40, s.depth), 0, h)
			if tab.lazyFrom == 0 {
				tab.lazyFrom = StackID(len(st))
			}
		} else {
			for range s.depth {
				s.frames = append(s.frames, FrameID(r.IntN(2)))
			}
			tab.push(tab.hold(s.frames), 0, h)
		}
		st = append(st, s)
	}
	// The rule, with a map from hash and depth to the kept stacks.
	type key struct {
		h     uint64
		depth int
	}
	kept := map[key][]int{}
	want := make([]StackID, len(st))
	next := StackID(1)
	for id := 1; id < len(st); id++ {
		x := st[id]
		k := key{x.h, x.depth}
		want[id] = -1
		for _, y := range kept[k] {
			if x.lazy || st[y].lazy || slices.Equal(x.frames, st[y].frames) {
				want[id] = want[y]
				break
			}
		}
		if want[id] < 0 {
			kept[k] = append(kept[k], id)
			want[id] = next
			next++
		}
	}
	rep := tab.dedupeFrom(1)
	if !repeats {
		if rep != nil || tab.count != len(st) {
			t.Fatalf("distinct hashes: %d stacks of %d left, rep %v", tab.count, len(st), rep != nil)
		}
		return
	}
	if rep == nil {
		t.Fatal("nothing merged")
	}
	if len(rep) != len(st)-1 {
		t.Fatalf("%d new IDs for %d stacks", len(rep), len(st)-1)
	}
	for id := 1; id < len(st); id++ {
		if rep[id-1] != want[id] {
			t.Fatalf("stack %d: new ID %d, want %d", id, rep[id-1], want[id])
		}
	}
	if tab.count != int(next) {
		t.Fatalf("%d stacks left, want %d", tab.count, next)
	}
	for id := 1; id < len(st); id++ {
		if tab.hashes.at(int(want[id])) != st[id].h || tab.Depth(want[id]) != st[id].depth {
			t.Fatalf("stack %d (now %d): hash or depth lost", id, want[id])
		}
	}
}

// TestDedupeFewPlaces merges a table of lazy stacks of distinct hashes
// but for three repeats, met pages after their first stacks (places to
// find in the last page, in a middle one and in the first), on one
// goroutine and on two: placeIDs stops once it has found the places,
// which must not be before the last.
func TestDedupeFewPlaces(t *testing.T) {
	for _, two := range []bool{false, true} {
		t.Run(fmt.Sprintf("two %v", two), func(t *testing.T) {
			if two {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
				defer func(old int) { dedupeTwoMin = old }(dedupeTwoMin)
				dedupeTwoMin = 0
			}
			r := rand.New(rand.NewPCG(5, 6))
			var tab Stacks
			tab.init()
			const n = 4*pageSize + 11
			// repeat[id] is the earlier stack whose hash stack id repeats.
			repeat := map[int]int{2*pageSize + 5: 10, pageSize + 9: 3, 4*pageSize + 7: pageSize + 3}
			hs := make([]uint64, n+1)
			for id := 1; id <= n; id++ {
				hs[id] = r.Uint64()
				if e, ok := repeat[id]; ok {
					hs[id] = hs[e]
				}
				tab.push(lazyAt(int64(id)*64, 40, 1), 0, hs[id])
				if tab.lazyFrom == 0 {
					tab.lazyFrom = StackID(id)
				}
			}
			rep := tab.dedupeFrom(1)
			if rep == nil {
				t.Fatal("nothing merged")
			}
			// Kept stacks numbered in order; a repeat takes its first's.
			want, next := make([]StackID, n+1), StackID(1)
			for id := 1; id <= n; id++ {
				if e, ok := repeat[id]; ok {
					want[id] = want[e]
					continue
				}
				want[id] = next
				next++
			}
			for id := 1; id <= n; id++ {
				if rep[id-1] != want[id] {
					t.Fatalf("stack %d: new ID %d, want %d", id, rep[id-1], want[id])
				}
			}
			if tab.count != int(next) {
				t.Fatalf("%d stacks left, want %d", tab.count, next)
			}
		})
	}
}

// TestDedupePasses compares dedupeFrom's passes over a page of hashes
// (countBuckets, scatterFrags, skipUnwanted: four hashes a round, then
// the rest one by one) with one hash at a time, on lengths around
// multiples of four, with hashes in few buckets (the same bucket several
// times in a round) and in any.
func TestDedupePasses(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for n := range 19 {
		for _, few := range []bool{true, false} {
			hs := make([]uint64, n)
			for i := range hs {
				hs[i] = r.Uint64()
				if few {
					hs[i] = uint64(r.IntN(3))<<(64-dedupeBucketBits) | hs[i]>>dedupeBucketBits
				}
			}
			bucket := func(h uint64) int { return int(h >> (64 - dedupeBucketBits)) }
			// countBuckets adds to what the counts hold.
			c := new([dedupeBuckets]int32)
			c[bucket(^uint64(0))] = 5
			countBuckets(hs, c)
			want := make(map[int]int32)
			want[dedupeBuckets-1] = 5
			for _, h := range hs {
				want[bucket(h)]++
			}
			for b := range dedupeBuckets {
				if c[b] != want[b] {
					t.Fatalf("n %d few %v: bucket %d counted %d, want %d", n, few, b, c[b], want[b])
				}
			}
			// scatterFrags: bucket b's fragments in order from fill[b] on.
			fill, start := new([dedupeBuckets]int32), map[int]int32{}
			at := int32(3)
			for b := range dedupeBuckets {
				fill[b], start[b] = at, at
				at += int32(len(hs)) // room for every hash of hs
			}
			frags := make([]uint32, at+int32(len(hs)))
			for i := range frags {
				frags[i] = 0xdead
			}
			mask := uint32(1<<20 - 1)
			scatterFrags(hs, fill, frags, mask)
			wantFrags := slices.Clone(frags)
			for i := range wantFrags {
				wantFrags[i] = 0xdead
			}
			next := maps.Clone(start)
			for _, h := range hs {
				b := bucket(h)
				wantFrags[next[b]] = uint32(h) & mask
				next[b]++
			}
			if !slices.Equal(frags, wantFrags) {
				t.Fatalf("n %d few %v: fragments scattered differ", n, few)
			}
			for b := range dedupeBuckets {
				if fill[b] != next[b] {
					t.Fatalf("n %d few %v: bucket %d filled to %d, want %d", n, few, b, fill[b], next[b])
				}
			}
			// skipUnwanted: from each multiple of 4, the first such
			// index whose round of four holds a wanted bucket, or
			// whose round is short.
			wanted := new([dedupeBuckets]uint8)
			if len(hs) > 0 {
				wanted[bucket(hs[r.IntN(len(hs))])] = 1
			}
			for k := 0; k <= len(hs); k += 4 {
				w := k
				for ; w+4 <= len(hs); w += 4 {
					if slices.ContainsFunc(hs[w:w+4], func(h uint64) bool { return wanted[bucket(h)] != 0 }) {
						break
					}
				}
				if got := skipUnwanted(hs, k, wanted); got != w {
					t.Fatalf("n %d few %v: skipUnwanted from %d = %d, want %d", n, few, k, got, w)
				}
			}
		}
	}
}
