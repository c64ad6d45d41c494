package snapshot

import "encoding/binary"

// sumColumn holds each stack's summary index (Stacks.sum, an index into
// Stacks.sumTab) in pages as a column does: 2 bytes a stack while the
// table has at most maxNarrowSums summaries (stacks share a few thousand:
// a site and a phase), 4 once it has more (widen). On a file of distinct
// stacks it is one of the few columns kept per stack: 2 bytes a stack
// fewer is 16 MB fewer of the browser worker's memory on the 1 GiB file
// of 8 M stacks, memory that costs a page fault when first touched.
type sumColumn struct {
	narrow column[uint16]
	wide   column[uint32] // once wide: every index, narrow empty
	isWide bool
}

// maxNarrowSums is the most summaries whose indices a narrow sumColumn
// holds.
const maxNarrowSums = 1 << 16

func (c *sumColumn) at(i int) uint32 {
	if c.isWide {
		return c.wide.at(i)
	}
	return uint32(c.narrow.at(i))
}

// set sets index i to v, which a narrow column must hold (v <
// maxNarrowSums: Stacks.sumIndex widens the column first).
func (c *sumColumn) set(i int, v uint32) {
	if c.isWide {
		c.wide.set(i, v)
		return
	}
	c.narrow.set(i, uint16(v))
}

// put appends v to the last page, which has room (see free).
func (c *sumColumn) put(v uint32) {
	if c.isWide {
		c.wide.put(v)
		return
	}
	c.narrow.put(uint16(v))
}

func (c *sumColumn) push(v uint32) {
	if c.isWide {
		c.wide.push(v)
		return
	}
	c.narrow.push(uint16(v))
}

// free returns how many values the last page has room for.
func (c *sumColumn) free() int {
	if c.isWide {
		return c.wide.free()
	}
	return c.narrow.free()
}

func (c *sumColumn) len() int {
	if c.isWide {
		return c.wide.len()
	}
	return c.narrow.len()
}

// truncate keeps the first n values.
func (c *sumColumn) truncate(n int) {
	if c.isWide {
		c.wide.truncate(n)
		return
	}
	c.narrow.truncate(n)
}

// widen makes the column hold 4 bytes a value: its pages are copied, with
// the same lengths and capacities.
func (c *sumColumn) widen() {
	if c.isWide {
		return
	}
	pages := make([][]uint32, len(c.narrow.pages))
	for k, p := range c.narrow.pages {
		w := make([]uint32, len(p), cap(p))
		for i, v := range p {
			w[i] = uint32(v)
		}
		pages[k] = w
	}
	c.wide, c.narrow, c.isWide = column[uint32]{pages: pages}, column[uint16]{}, true
}

// appendMapped appends m[x] for each value x of src's [i, j) and lets
// src's pages go: m's values are indices the column holds (the summary
// table's, which widened it if need be: Stacks.sumIndex). Of the same
// width, src's full pages are taken whole (column.appendFrom) and mapped
// in place.
func (c *sumColumn) appendMapped(src *sumColumn, i, j int, m []uint32) {
	n0 := c.len()
	switch {
	case c.isWide && src.isWide:
		c.wide.appendFrom(&src.wide, i, j)
		c.wide.each(n0, n0+j-i, func(s []uint32) {
			for k, x := range s {
				s[k] = m[x]
			}
		})
	case !c.isWide && !src.isWide:
		c.narrow.appendFrom(&src.narrow, i, j)
		c.narrow.each(n0, n0+j-i, func(s []uint16) {
			for k, x := range s {
				s[k] = uint16(m[x])
			}
		})
	case c.isWide:
		appendMappedTo(&c.wide, &src.narrow, i, j, m)
	default:
		appendMappedTo(&c.narrow, &src.wide, i, j, m)
	}
}

// appendMappedTo is appendMapped for the columns of each width: a page
// of dst filled at a time.
func appendMappedTo[D, S uint16 | uint32](dst *column[D], src *column[S], i, j int, m []uint32) {
	src.each(i, j, func(s []S) {
		for len(s) > 0 {
			if !dst.room() {
				dst.push(D(m[s[0]]))
				s = s[1:]
				continue
			}
			last := &dst.pages[len(dst.pages)-1]
			n := len(*last)
			k := min(cap(*last)-n, len(s))
			d := (*last)[n : n+k]
			for t, x := range s[:k] {
				d[t] = D(m[x])
			}
			*last = (*last)[:n+k]
			s = s[k:]
		}
	})
}

// appendRaw appends values [i, j) to b, 4 little-endian bytes each (a
// part's wire column, whatever the column's width).
func (c *sumColumn) appendRaw(b []byte, i, j int) []byte {
	if c.isWide {
		return appendRaw(b, &c.wide, i, j)
	}
	c.narrow.each(i, j, func(s []uint16) {
		for _, x := range s {
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		}
	})
	return b
}
