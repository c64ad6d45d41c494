package snapshot

import (
	"hash/maphash"
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
