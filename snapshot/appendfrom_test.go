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

// TestTimeAppendFrom is TestAppendFrom for the time column, with times
// that fit narrow pages, zeros, and jumps that make pages wide (a taken
// page then holds the next page's first times as differences from its
// own base, or is widened); and for the addr column, with the same
// values times 512.
func TestTimeAppendFrom(t *testing.T) {
	for _, kc := range []struct {
		name  string
		kind  narrowKind
		scale int64
	}{{"time", timeKind, 1}, {"addr", addrKind, 512}} {
		t.Run(kc.name, func(t *testing.T) { testNarrowAppendFrom(t, kc.kind, kc.scale) })
	}
}

func testNarrowAppendFrom(t *testing.T, kind narrowKind, scale int64) {
	const P = pageSize
	tv1 := func(seed, k int) int64 {
		switch {
		case k%97 == 5:
			return 0 // no time_us
		case (k/P)%3 == 2 && k%P == 7:
			return int64(seed)<<40 + int64(k) // a jump: this page wide
		}
		return int64(seed)*1e12 + int64(k)*1000 + int64(k%13)
	}
	tv := func(seed, k int) int64 { return scale * tv1(seed, k) }
	for _, lc := range []int{0, 1, 100, P - 1, P, P + 7, 3 * P} {
		for _, ls := range []int{10, P, 2*P + 5, 5 * P} {
			for _, i := range []int{0, 1, 9, P - 3, P, P + 5, 2 * P, 3*P - 1, 4*P + 2} {
				for _, j := range []int{i, i + 1, i + P - 1, i + P, i + P + 1, i + 2*P + 3, ls} {
					if i > ls || j < i || j > ls {
						continue
					}
					t.Run(fmt.Sprintf("c%d/src%d/%d-%d", lc, ls, i, j), func(t *testing.T) {
						var c, src narrowColumn[int64]
						push := func(c *narrowColumn[int64], v int64) {
							n := c.len()
							c.push0(kind)
							c.set(n, v)
						}
						for k := range lc {
							push(&c, tv(1, k))
						}
						for k := range ls {
							push(&src, tv(2, k))
						}
						c.appendFrom(kind, &src, i, j)
						n := lc + j - i
						if c.len() != n {
							t.Fatalf("%d times, want %d", c.len(), n)
						}
						for p, pg := range c.pages[:max(len(c.pages)-1, 0)] {
							if max(len(pg.d), len(pg.w)) != P || (pg.d == nil) == (pg.w == nil) {
								t.Fatalf("page %d of %d: %d narrow, %d wide", p, len(c.pages), len(pg.d), len(pg.w))
							}
						}
						for k := range P + 3 {
							push(&c, tv(3, n+k))
						}
						for k := range n + P + 3 {
							want := tv(1, k)
							switch {
							case k >= n:
								want = tv(3, k)
							case k >= lc:
								want = tv(2, i+k-lc)
							}
							if got := c.at(k); got != want {
								t.Fatalf("time %d is %d, want %d", k, got, want)
							}
						}
					})
				}
			}
		}
	}
}

// TestPushZeros appends zeros after columns of every kind of length: the
// values must be zeros where pushed, and pushes after them must land
// behind them without changing any other value (the shared page of zeros
// is never the last page).
func TestPushZeros(t *testing.T) {
	const P = pageSize
	for _, lc := range []int{0, 1, 100, P - 1, P, P + 7} {
		for _, k := range []int{0, 1, P - 1, P, P + 1, 2 * P, 3*P + 5} {
			var c column[uint32]
			for q := range lc {
				c.push(uint32(q + 1))
			}
			c.pushZeros(k)
			if c.len() != lc+k {
				t.Fatalf("c%d+%d: %d values", lc, k, c.len())
			}
			for q := range P + 3 {
				c.push(uint32(1e6 + q))
			}
			for q := range lc + k + P + 3 {
				want := uint32(0)
				switch {
				case q < lc:
					want = uint32(q + 1)
				case q >= lc+k:
					want = uint32(1e6 + q - lc - k)
				}
				if got := c.at(q); got != want {
					t.Fatalf("c%d+%d: value %d is %d, want %d", lc, k, q, got, want)
				}
			}
		}
	}
}
