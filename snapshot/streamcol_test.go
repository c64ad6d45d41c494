package snapshot

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestStreamColumn applies random writes (put, push, set, zeros, raw
// bytes, a remap, and appending another column's rows, taken from a row
// that is not a page's first) to a streamColumn and to a plain slice, in
// runs of mostly zeros and runs with other values: every value must read
// as the slice's, a shared page and the page of zeros must hold zeros
// only (the other column's too, while it is read), and a column of zeros
// (a remap to zeros) must have no page of its own but the first.
func TestStreamColumn(t *testing.T) {
	for _, nonzero := range []float64{0, 0.0001, 0.3} {
		t.Run(fmt.Sprintf("nonzero %v", nonzero), func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, uint64(nonzero*1e4)))
			val := func() uint16 {
				if r.Float64() < nonzero {
					return uint16(1 + r.IntN(3))
				}
				return 0
			}
			var c streamColumn
			var want []uint16
			// fill writes n values the way the decoder does (put where
			// there is room, push where not, and now and then where
			// there is), setting some after.
			fill := func(c *streamColumn, want *[]uint16, n int) {
				for range n {
					v := val()
					if c.room() && r.IntN(4) > 0 {
						c.put(v)
					} else {
						c.push(v)
					}
					*want = append(*want, v)
					if r.IntN(8) == 0 {
						i := r.IntN(len(*want))
						v := val()
						c.set(i, v)
						(*want)[i] = v
					}
				}
			}
			// others are the other columns' pages of zeros: no page of c
			// may be one (c would not know it is shared).
			var others [][]uint16
			check := func(c *streamColumn, want []uint16, what string) {
				t.Helper()
				for k, p := range c.pages {
					for _, z := range others {
						if cap(p) > 0 && unsafe.SliceData(p) == unsafe.SliceData(z) {
							t.Fatalf("%s: page %d is another column's page of zeros", what, k)
						}
					}
				}
				if c.len() != len(want) {
					t.Fatalf("%s: %d values, want %d", what, c.len(), len(want))
				}
				for i, w := range want {
					if got := c.at(i); got != w {
						t.Fatalf("%s: value %d is %d, want %d", what, i, got, w)
					}
				}
				for _, x := range c.zero {
					if x != 0 {
						t.Fatalf("%s: the page of zeros holds %d", what, x)
					}
				}
				for k, p := range c.pages {
					if c.shared(p) {
						for _, x := range p[:cap(p)] {
							if x != 0 {
								t.Fatalf("%s: shared page %d holds %d", what, k, x)
							}
						}
					}
				}
			}
			for round := range 6 {
				fill(&c, &want, 3*pageSize+r.IntN(pageSize))
				check(&c, want, "filled")
				k := r.IntN(2*pageSize + 3)
				c.appendZeros(k)
				want = append(want, make([]uint16, k)...)
				check(&c, want, "zeros")
				raw := make([]byte, 2*r.IntN(pageSize))
				var vs []uint16
				for i := 0; i < len(raw); i += 2 {
					v := uint16(0)
					if round%2 == 1 {
						v = val()
					}
					binary.LittleEndian.PutUint16(raw[i:], v)
					vs = append(vs, v)
				}
				c.appendRaw(raw)
				want = append(want, vs...)
				check(&c, want, "raw")
				// Another column's rows from r0 on.
				var src streamColumn
				var srcWant []uint16
				fill(&src, &srcWant, 2*pageSize+r.IntN(3*pageSize))
				r0 := r.IntN(pageSize + 100)
				check(&src, srcWant, "the other column")
				others = append(others, src.zero)
				c.appendFrom(&src, r0, len(srcWant))
				want = append(want, srcWant[r0:]...)
				check(&c, want, "appended")
				from := uint16(r.IntN(2))
				to := []uint16{uint16(r.IntN(2)), uint16(r.IntN(4)), uint16(r.IntN(4)), uint16(r.IntN(4))}
				if nonzero == 0 {
					to[0] = 0
				}
				lo := r.IntN(len(want))
				c.remap(lo, len(want), from, to)
				for i := lo; i < len(want); i++ {
					if x := want[i]; x >= from {
						want[i] = to[x-from]
					}
				}
				check(&c, want, "remapped")
			}
			if nonzero == 0 {
				for k, p := range c.pages[1:] {
					if !c.shared(p) {
						t.Fatalf("a column of zeros: page %d has its own memory", k+1)
					}
				}
			}
		})
	}
}
