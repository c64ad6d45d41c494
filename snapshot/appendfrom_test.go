package snapshot

import (
	"fmt"
	"testing"
)

// TestAppendFrom appends stretches of one column to another, at every kind
// of place: the destination empty, page-aligned or not, the stretch
// starting on src's page boundary or not, ending in a page, at its end or at
// src's end. Every value must be the one pushed, every page but the last
// full, and pushes after the merge must land behind it.
func TestAppendFrom(t *testing.T) {
	testAppendFrom[uint8](t)
	testAppendFrom[uint64](t)
}

func testAppendFrom[T uint8 | uint64](t *testing.T) {
	const P = pageSize
	dv := func(k int) T { return T(7*k + 1) }
	sv := func(k int) T { return T(13*k + 5) }
	for _, lc := range []int{0, 1, 100, P - 1, P, P + 7, 3 * P} {
		for _, ls := range []int{10, P, 2*P + 5, 4 * P} {
			for _, i := range []int{0, 1, 9, P - 3, P, P + 5, 2 * P, 3*P - 1} {
				for _, j := range []int{i, i + 1, i + P - 1, i + P, i + P + 1, i + 2*P + 3, ls} {
					if i > ls || j < i || j > ls {
						continue
					}
					t.Run(fmt.Sprintf("%T/c%d/src%d/%d-%d", T(0), lc, ls, i, j), func(t *testing.T) {
						var c, src column[T]
						for k := range lc {
							c.push(dv(k))
						}
						for k := range ls {
							src.push(sv(k))
						}
						c.appendFrom(&src, i, j)
						n := lc + j - i
						if c.len() != n {
							t.Fatalf("%d values, want %d", c.len(), n)
						}
						for p, pg := range c.pages[:max(len(c.pages)-1, 0)] {
							if len(pg) != P {
								t.Fatalf("page %d of %d holds %d values", p, len(c.pages), len(pg))
							}
						}
						// Pushed after the merge: a page and a bit more.
						for k := range P + 3 {
							c.push(dv(n + k))
						}
						for k := range n + P + 3 {
							want := dv(k)
							if k >= lc && k < n {
								want = sv(i + k - lc)
							}
							if got := c.at(k); got != want {
								t.Fatalf("value %d is %d, want %d", k, got, want)
							}
						}
					})
				}
			}
		}
	}
}
