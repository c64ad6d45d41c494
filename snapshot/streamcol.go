package snapshot

import "unsafe"

// streamColumn is the rows' stream column (indexes into entryStore.streams):
// a column whose full-size pages of zeros (the first stream; on most files
// the only one) are slices of one page of zeros the column keeps, zero,
// until a value other than 0 is stored in one: memory never touched (2
// bytes a row, 16 MB on a 1 GiB file; first touching memory is much of a
// big decode's time). A shared page holds zeros only: 0 may be written to
// it (by the column's one writer), anything else first gives the page its
// own memory (own). Every write goes through these methods; reads are
// column's.
type streamColumn struct {
	column[uint16]
	zero []uint16
}

// shared reports whether page p is a slice of the page of zeros.
func (c *streamColumn) shared(p []uint16) bool {
	return c.zero != nil && cap(p) > 0 && unsafe.SliceData(p) == unsafe.SliceData(c.zero)
}

// own gives page k its own memory (its values are zeros).
func (c *streamColumn) own(k int) {
	if p := c.pages[k]; c.shared(p) {
		c.pages[k] = make([]uint16, len(p), pageSize)
	}
}

// put appends v to the last page, which has room (see room).
func (c *streamColumn) put(v uint16) {
	if v != 0 {
		c.own(len(c.pages) - 1)
	}
	c.column.put(v)
}

// push appends v: a new full-size page of zeros is a slice of zero.
func (c *streamColumn) push(v uint16) {
	if n := len(c.pages); v == 0 && n > 0 && len(c.pages[n-1]) == pageSize {
		if c.zero == nil {
			c.zero = make([]uint16, pageSize)
		}
		c.pages = append(c.pages, c.zero[:1])
		return
	}
	if v != 0 && c.room() {
		c.own(len(c.pages) - 1)
	}
	c.column.push(v)
}

// set sets row i to v.
func (c *streamColumn) set(i int, v uint16) {
	if v != 0 {
		c.own(i >> pageBits)
	}
	c.column.set(i, v)
}

// appendZeros appends k zeros.
func (c *streamColumn) appendZeros(k int) {
	for k > 0 {
		if !c.room() {
			c.push(0)
			k--
			continue
		}
		last := &c.pages[len(c.pages)-1]
		m := min(k, cap(*last)-len(*last))
		*last = (*last)[:len(*last)+m]
		clear((*last)[len(*last)-m:]) // (zeros already where shared)
		k -= m
	}
}

// appendFrom appends src's values [i, j) to c and lets src's pages go (see
// column.appendFrom): as zeros where they all are (on src's shared pages
// or not); otherwise src's shared pages in the range get their own memory
// first, and c's last page too, and the pages are taken.
func (c *streamColumn) appendFrom(src *streamColumn, i, j int) {
	if i >= j {
		return
	}
	zeros := true
	for k := i >> pageBits; k <= (j-1)>>pageBits && zeros; k++ {
		if p := src.pages[k]; !src.shared(p) {
			lo, hi := max(i-k<<pageBits, 0), min(j-k<<pageBits, len(p))
			for _, x := range p[lo:hi] {
				if x != 0 {
					zeros = false
					break
				}
			}
		}
	}
	if zeros {
		c.appendZeros(j - i)
		return
	}
	for k := i >> pageBits; k <= (j-1)>>pageBits; k++ {
		src.own(k)
	}
	if n := len(c.pages); n > 0 {
		c.own(n - 1)
	}
	c.column.appendFrom(&src.column, i, j)
}

// appendRaw appends the little-endian values in b (see column.appendRaw):
// as zeros where they all are.
func (c *streamColumn) appendRaw(b []byte) {
	for _, x := range b {
		if x != 0 {
			if n := len(c.pages); n > 0 {
				c.own(n - 1)
			}
			c.column.appendRaw(b)
			return
		}
	}
	c.appendZeros(len(b) / 2)
}

// remap replaces every value x >= from of rows [i, j) by to[x-from].
func (c *streamColumn) remap(i, j int, from uint16, to []uint16) {
	for i < j {
		k := i >> pageBits
		off := i & pageMask
		p := c.pages[k]
		s := p[off:min(len(p), off+j-i)]
		i += len(s)
		if c.shared(p) {
			if from > 0 || to[0] == 0 {
				continue // zeros stay zeros
			}
			c.own(k)
			s = c.pages[k][off : off+len(s)]
		}
		for q, x := range s {
			if x >= from {
				s[q] = to[x-from]
			}
		}
	}
}
