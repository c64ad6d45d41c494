package snapshot

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestTimeColumn writes time sequences into a timeColumn as the decoder
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
		var c timeColumn
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
				c.push0()
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
