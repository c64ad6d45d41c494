package snapshot

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTimeColumn writes time sequences into a narrowColumn[int64] as the decoder
// does (a zero row, then its time; or a row with its time, put) and at
// random rows afterwards, and
// reads every row back against a plain slice: epoch-µs times in order,
// missing times (0), jumps past 2^31 µs, the int64 extremes and a
// difference of exactly -2^31. Times in order with small steps must stay
// in narrow pages after the first (whose base is 0).
func TestTimeColumn(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 3*pageSize + 123
	cases := map[string]func(i int, prev int64) int64{
		"epoch µs in order": func(i int, prev int64) int64 {
			if prev == 0 {
				return 1_700_000_000_000_000
			}
			return prev + int64(r.IntN(50))
		},
		"some missing": func(i int, prev int64) int64 {
			if r.IntN(10) == 0 {
				return 0
			}
			return 1_700_000_000_000_000 + int64(i)*7
		},
		"jumps": func(i int, prev int64) int64 {
			if r.IntN(1000) == 0 {
				return prev + 1<<31 + int64(r.IntN(3))
			}
			return prev + 1
		},
		"extremes": func(i int, prev int64) int64 {
			return []int64{math.MinInt64, math.MaxInt64, -1, 1, 0, math.MinInt32, math.MaxInt32, 5}[r.IntN(8)]
		},
		"difference -2^31": func(i int, prev int64) int64 {
			if i%pageSize == 0 { // the page's base is prev
				return prev + math.MinInt32
			}
			return prev + 3
		},
	}
	for name, next := range cases {
		var c narrowColumn[int64]
		want := make([]int64, 0, n)
		var prev int64
		for i := range n {
			prev = next(i, prev)
			want = append(want, prev)
			switch {
			case i%3 == 2 && c.room():
				c.put(i, prev) // a row with its time (addRow)
				continue
			case i%3 == 0 || !c.room():
				c.push0(timeKind)
			default:
				c.put0()
			}
			c.set(i, prev)
		}
		for range 500 {
			i := r.IntN(n)
			want[i] = next(i, want[max(i-1, 0)])
			c.set(i, want[i])
		}
		for i, w := range want {
			if got := c.at(i); got != w {
				t.Fatalf("%s: row %d reads %d, was set to %d", name, i, got, w)
			}
		}
		if name == "epoch µs in order" {
			for k, p := range c.pages[1:] {
				if p.w != nil {
					t.Errorf("%s: page %d of %d is wide", name, k+1, len(c.pages))
				}
			}
		}
	}
}

// TestNarrowPages writes one page of values into an addr, a size and a
// time column (as the decoder does: put, or a zero row then set) after a
// first page that sets the base, and checks that every value reads back
// and whether the page stayed narrow, as the encoding says: an addr page
// holds multiples of 512 within 2^40 - 512 below and 2^40 - 512 above
// the address before the page (aligned down) and 0, a size page
// [0, 2^32) and a time page 2^31 - 1 either side of the time before it.
func TestNarrowPages(t *testing.T) {
	const prevAddr = 0x7f3a_0000_0000 // the last address of the first page
	const prevTime = 1_700_000_000_000_000
	cases := []struct {
		name   string
		kind   narrowKind
		prev   uint64 // the first page's values
		vals   []uint64
		narrow bool
	}{
		{"addr aligned", addrKind, prevAddr, []uint64{prevAddr, prevAddr + 512, prevAddr - 512, prevAddr + 1<<30}, true},
		{"addr zero (oom)", addrKind, prevAddr, []uint64{prevAddr + 512, 0, prevAddr}, true},
		{"addr unaligned", addrKind, prevAddr, []uint64{prevAddr, prevAddr + 256, prevAddr + 512}, false},
		{"addr odd", addrKind, prevAddr, []uint64{prevAddr + 1}, false},
		{"addr 2^40 - 512 below", addrKind, prevAddr, []uint64{prevAddr - (1<<40 - 512)}, true},
		{"addr 2^40 below", addrKind, prevAddr, []uint64{prevAddr - 1<<40}, false},
		{"addr 2^40 - 512 above", addrKind, prevAddr, []uint64{prevAddr + 1<<40 - 512}, true},
		{"addr 2^40 above", addrKind, prevAddr, []uint64{prevAddr + 1<<40}, false},
		{"addr near 0", addrKind, 4096, []uint64{512, 1024, 1 << 39}, true},
		{"addr wraps", addrKind, 4096, []uint64{math.MaxUint64 &^ 511}, true},
		{"addr extremes", addrKind, prevAddr, []uint64{math.MaxUint64, 1 << 63}, false},
		{"addr unaligned prev", addrKind, prevAddr + 3, []uint64{prevAddr, prevAddr + 512}, true},
		{"size small", sizeKind, 0, []uint64{0, 1, 512, 3, 2 << 20}, true},
		{"size 2^32 - 1", sizeKind, 0, []uint64{1<<32 - 1, 7}, true},
		{"size 2^32", sizeKind, 0, []uint64{7, 1 << 32}, false},
		{"size -1", sizeKind, 0, []uint64{7, math.MaxUint64}, false},
		{"size min int64", sizeKind, 0, []uint64{1 << 63}, false},
		{"size after a wide one", sizeKind, 1 << 40, []uint64{5, 1<<32 - 1}, true},
		{"time in order", timeKind, prevTime, []uint64{prevTime, prevTime + 1<<31 - 1, 0, prevTime - 1<<31 + 1}, true},
		{"time 2^31 ahead", timeKind, prevTime, []uint64{prevTime + 1<<31}, false},
		{"time 2^31 behind", timeKind, prevTime, []uint64{prevTime - 1<<31}, false},
		{"time negative", timeKind, 5, []uint64{math.MaxUint64 - 3}, true},
		{"no values", addrKind, prevAddr, nil, true},
	}
	for _, tc := range cases {
		for _, how := range []string{"put", "set"} {
			var c narrowColumn[uint64]
			var want []uint64
			row := func(v uint64) {
				n := c.len()
				want = append(want, v)
				if how == "put" && c.room() {
					c.put(n, v)
					return
				}
				c.push0(tc.kind)
				c.set(n, v)
			}
			for range pageSize {
				row(tc.prev)
			}
			for _, v := range tc.vals {
				row(v)
			}
			if len(tc.vals) == 0 {
				c.push0(tc.kind) // a page of one 0 row
				want = append(want, 0)
			}
			for i, w := range want {
				if got := c.at(i); got != w {
					t.Fatalf("%s (%s): row %d reads %#x, was %#x", tc.name, how, i, got, w)
				}
			}
			if len(c.pages) != 2 {
				t.Fatalf("%s (%s): %d pages", tc.name, how, len(c.pages))
			}
			if narrow := c.pages[1].w == nil; narrow != tc.narrow {
				t.Errorf("%s (%s): second page narrow %v, want %v", tc.name, how, narrow, tc.narrow)
			}
			var i64 narrowColumn[int64] // the same as int64s
			for k, v := range want {
				i64.push0(tc.kind)
				i64.set(k, int64(v))
			}
			for k, v := range want {
				if got := i64.at(k); got != int64(v) {
					t.Fatalf("%s (int64): row %d reads %d, was %d", tc.name, k, got, int64(v))
				}
			}
		}
	}
}

// TestNarrowStartsWide writes pages of addresses of which some do not fit
// a narrow page, early (in the page's first narrowEarly rows) or late, and
// checks which pages start wide: the page after one that widened early,
// or after one started wide whose first rows did not fit either, but never
// the second page (the first one's base is 0, it always widens); every
// value reads back as written, by put and by push0 and set.
func TestNarrowStartsWide(t *testing.T) {
	const a = 0x7f3a_0000_0000
	const far = a + 1<<45 // beyond 2 TiB of a: never narrow with a near
	// farAt[k] is the row of page k that gets the far address (-1: none).
	farAt := []int{-1, 0, 5, -1, 10000, 100, narrowEarly + 1000, -1}
	wantWide := []bool{false, false, true, true, false, false, true, false}
	for _, how := range []string{"put", "set"} {
		var c narrowColumn[uint64]
		var want []uint64
		var started []bool
		for k, fa := range farAt {
			for r := range pageSize {
				if k == len(farAt)-1 && r == 10 {
					break
				}
				v := uint64(a + 512*(k*pageSize+r))
				if r == fa {
					v = far
				}
				n := c.len()
				want = append(want, v)
				if how == "put" && c.room() {
					c.put(n, v)
					continue
				}
				c.push0(addrKind)
				if n%pageSize == 0 {
					started = append(started, c.pages[len(c.pages)-1].w != nil)
				}
				c.set(n, v)
			}
		}
		for i, w := range want {
			if got := c.at(i); got != w {
				t.Fatalf("%s: row %d reads %#x, was %#x", how, i, got, w)
			}
		}
		for k, w := range wantWide {
			if started[k] != w {
				t.Errorf("%s: page %d started wide %v, want %v", how, k, started[k], w)
			}
		}
		if c.pages[3].w == nil || c.pages[7].w != nil {
			t.Errorf("%s: page 3 wide %v (want true), page 7 wide %v (want false)", how, c.pages[3].w != nil, c.pages[7].w != nil)
		}
	}
}
