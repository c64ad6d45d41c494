package snapshot

import (
	"fmt"
	"testing"
)

// TestSumIndexWidens gives a table more distinct summaries than a narrow
// summary column holds: every stack keeps its own summary (the column
// widens at the summary of index maxNarrowSums), including stacks pushed
// before, and summaries met again take their first index.
func TestSumIndexWidens(t *testing.T) {
	var s Stacks
	s.init()
	n := maxNarrowSums + 3*pageSize/2
	sum := func(i int) StackSummary { return StackSummary(uint64(i)*0x9e3779b97f4a7c15 | 1) }
	// Stack i's fold has site i, its summary sum(i).
	finish := func(_, _ uint16, site FrameID) StackSummary { return sum(int(site)) }
	push := func(h uint64, i int) StackID {
		id, _ := s.addLazy(h, lazyAt(int64(h), 5, 1), 1, finish, 0, 0, FrameID(i))
		return id
	}
	ids := make([]StackID, n)
	for i := range n {
		ids[i] = push(uint64(i)*7+1, i)
		if i == maxNarrowSums-2 && s.sum.isWide {
			t.Fatalf("the column widened at %d summaries", len(s.sumTab))
		}
	}
	if !s.sum.isWide {
		t.Fatalf("%d summaries: the column is still narrow", len(s.sumTab))
	}
	again := push(uint64(n)*7+1, 7)
	for i, id := range append(ids, again) {
		want := sum(min(i, n-1))
		if i == n {
			want = sum(7)
		}
		if got := s.Summary(id); got != want {
			t.Fatalf("stack %d (id %d): summary %#x, want %#x", i, id, got, want)
		}
	}
	if s.sum.at(int(again)) != s.sum.at(int(ids[7])) {
		t.Fatalf("summary met again: index %d, first %d", s.sum.at(int(again)), s.sum.at(int(ids[7])))
	}
}

// TestSumAppendMapped appends stretches of a column to another (a split
// decode's part), each narrow or wide, mapping every value, from any
// place (whole pages are taken when both widths match) and checks every
// value against a plain slice.
func TestSumAppendMapped(t *testing.T) {
	for _, dstWide := range []bool{false, true} {
		for _, srcWide := range []bool{false, true} {
			for _, cut := range [][3]int{{0, 0, 3 * pageSize}, {5, 17, 2*pageSize + 9}, {pageSize + 3, 0, 3*pageSize - 1}, {100, pageSize, pageSize + 50}} {
				name := fmt.Sprintf("dst wide %v, src wide %v, cut %v", dstWide, srcWide, cut)
				pre, i, j := cut[0], cut[1], cut[2]
				var dst, src sumColumn
				var want []uint32
				for k := range pre {
					dst.push(uint32(k % 1000))
					want = append(want, uint32(k%1000))
				}
				if dstWide {
					dst.widen()
				}
				srcVals := make([]uint32, 3*pageSize)
				for k := range srcVals {
					srcVals[k] = uint32(k*7) % 5000
					src.push(srcVals[k])
				}
				if srcWide {
					src.widen()
				}
				m := make([]uint32, 5000)
				for k := range m {
					m[k] = uint32(k*3+1) % maxNarrowSums
					if dstWide {
						m[k] += maxNarrowSums
					}
				}
				for k := i; k < j; k++ {
					want = append(want, m[srcVals[k]])
				}
				dst.appendMapped(&src, i, j, m)
				if dst.len() != len(want) {
					t.Fatalf("%s: %d values, want %d", name, dst.len(), len(want))
				}
				for k, w := range want {
					if got := dst.at(k); got != w {
						t.Fatalf("%s: value %d is %d, want %d", name, k, got, w)
					}
				}
				// The column takes more values after.
				for k := range pageSize + 1 {
					v := uint32(k % 3000)
					if dst.free() > 0 {
						dst.put(v)
					} else {
						dst.push(v)
					}
					want = append(want, v)
				}
				for k, w := range want {
					if got := dst.at(k); got != w {
						t.Fatalf("%s, pushed after: value %d is %d, want %d", name, k, got, w)
					}
				}
			}
		}
	}
}
