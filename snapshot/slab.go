package snapshot

import "unsafe"

// slab hands out the full pages of a column that is dropped as a whole
// once the file is decoded (the memo, the stacks' hashes), carved from
// blocks that double up to slabBlockMax bytes. Pages made one by one lie
// between those of the columns that stay (the trace's, the stacks'), so
// freeing them leaves holes of a page each, too small for the analysis's
// tables (a few MB each on a large file), which then take new memory; a
// freed block is one hole they fit in. It matters where memory is never
// given back (a browser worker): there the peak is what every later
// allocation and the page faults of the first touch cost.
type slab[T any] struct {
	rest []T // what is left of the last block
	next int // the next block's size, in values
}

// slabBlockMax bounds a slab's block, in bytes.
const slabBlockMax = 16 << 20

// grow gives c an empty page of pageSize values from the slab when its
// last page is full at pageSize (a first page still growing by doubling,
// column.push, is left to push).
func (s *slab[T]) grow(c *column[T]) {
	n := len(c.pages)
	if n == 0 || len(c.pages[n-1]) != pageSize {
		return
	}
	c.pages = append(c.pages, s.page())
}

// page returns an empty page of room pageSize.
func (s *slab[T]) page() []T {
	if len(s.rest) < pageSize {
		var zero T
		s.next = min(max(2*s.next, 2*pageSize), slabBlockMax/int(unsafe.Sizeof(zero)))
		s.rest = make([]T, s.next)
	}
	p := s.rest[:0:pageSize]
	s.rest = s.rest[pageSize:]
	return p
}
