package snapshot

import (
	"fmt"
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
