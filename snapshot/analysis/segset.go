package analysis

import (
	"slices"

	"oomscope/snapshot"
)

// segRange is one reserved address range: a cudaMalloc'd segment or a
// contiguous mapped run of an expandable segment.
type segRange struct {
	addr       uint64
	size       int64
	stream     uint64
	pool       snapshot.PoolID
	expandable bool
	small      bool
}

func (r segRange) end() uint64 { return r.addr + uint64(r.size) }

// segSet is a set of disjoint reserved ranges sorted by address. Removing
// part of a range splits it; adding an expandable range merges it with
// touching expandable ranges of the same stream, as the allocator reports
// one segment per contiguous mapped run (docs/snapshot.md#reserved-memory).
type segSet struct {
	r []segRange
	// inconsistent counts operations the set could not apply exactly: a
	// removal of bytes that were not reserved, an addition over reserved
	// bytes.
	inconsistent int
}

func (s *segSet) clone() segSet {
	return segSet{r: slices.Clone(s.r), inconsistent: s.inconsistent}
}

// search returns the index of the first range ending after addr.
func (s *segSet) search(addr uint64) int {
	i, _ := slices.BinarySearchFunc(s.r, addr, func(r segRange, a uint64) int {
		if r.end() <= a {
			return -1
		}
		return 1
	})
	return i
}

// add inserts r. With merge, r joins touching expandable ranges of the same
// stream.
func (s *segSet) add(r segRange, merge bool) {
	if r.size <= 0 || r.end() < r.addr {
		s.inconsistent++
		return
	}
	i := s.search(r.addr)
	if i < len(s.r) && s.r[i].addr < r.end() {
		// Overlaps an existing range: keep what is there, count it.
		s.inconsistent++
		return
	}
	if merge {
		if i > 0 && s.r[i-1].end() == r.addr && s.r[i-1].expandable && s.r[i-1].stream == r.stream {
			s.r[i-1].size += r.size
			if i < len(s.r) && s.r[i].addr == s.r[i-1].end() && s.r[i].expandable && s.r[i].stream == r.stream {
				s.r[i-1].size += s.r[i].size
				s.r = slices.Delete(s.r, i, i+1)
			}
			return
		}
		if i < len(s.r) && s.r[i].addr == r.end() && s.r[i].expandable && s.r[i].stream == r.stream {
			s.r[i].addr = r.addr
			s.r[i].size += r.size
			return
		}
	}
	s.r = slices.Insert(s.r, i, r)
}

// remove takes [addr, addr+size) out of the set, splitting ranges it cuts.
// It returns the ranges' attributes of the first range touched (for undo)
// and whether all the bytes were reserved.
func (s *segSet) remove(addr uint64, size int64) (segRange, bool) {
	end := addr + uint64(size)
	if size <= 0 || end < addr {
		s.inconsistent++
		return segRange{addr: addr, size: size}, false
	}
	i := s.search(addr)
	var first segRange
	found := false
	var removed int64
	for i < len(s.r) && s.r[i].addr < end {
		cur := s.r[i]
		if !found {
			first, found = cur, true
		}
		lo, hi := max(cur.addr, addr), min(cur.end(), end)
		removed += int64(hi - lo)
		var keep []segRange
		if cur.addr < lo {
			left := cur
			left.size = int64(lo - cur.addr)
			keep = append(keep, left)
		}
		if hi < cur.end() {
			right := cur
			right.addr = hi
			right.size = int64(cur.end() - hi)
			keep = append(keep, right)
		}
		s.r = slices.Replace(s.r, i, i+1, keep...)
		i += len(keep)
	}
	ok := removed == size
	if !ok {
		s.inconsistent++
	}
	first.addr, first.size = addr, size
	return first, ok
}

// total returns the reserved bytes in the set.
func (s *segSet) total() int64 {
	var t int64
	for _, r := range s.r {
		t += r.size
	}
	return t
}
