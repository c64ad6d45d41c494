package snapshot

import "sort"

// memoTable is the memo: values packed in 4 bytes (pack), in pages so
// that it never needs twice its size while growing.
//
// Most of a large file's memo ids are its trace entries' dicts and frame
// lists, recycled once used (vm.release) and practically never referred
// to again: a dict's slot holds its row (kRow), a list's the row's stack
// (kStackRef), and an entry's two ids follow each other. A full page
// behind the last two is packed (packPage): its slots that go on as
// kRow r, kStackRef stacks[r], kRow r+1, kStackRef stacks[r+1], … are
// kept as runs (a place, a length, a first row), the others as
// exceptions, and the page's 64 KiB go to the pages that follow. 8 bytes
// an entry less, and as many pages fewer first touched. A packed page is
// the shared marker page; at reads its slot from the runs or exceptions
// (a read of an exception, or any write, unpacks the page: what is
// referred to is dense again); every value reads as it was stored.
type memoTable struct {
	c column[uint32]
	n int
	// pages holds the memo's pages once it has a full one (see slab).
	pages slab[uint32]

	// stacks are the rows' stacks (the decoder's rows.stack): nil, no
	// page is packed.
	stacks *column[StackID]
	// packs holds each packed page's runs and exceptions, by page.
	packs []memoPack
	// marker is every packed page: memoPacked in each slot.
	marker []uint32
	// spare are pages packed, for the next pages.
	spare [][]uint32
	// next is the next page packPage considers; limit bounds the ids of
	// the pages it packs (a part's: the prefix's); rowsTo bounds the rows
	// in runs. off is set once a row in a run changed its stack: every
	// page is unpacked then and none packed again.
	next, limit, rowsTo int
	off                 bool
	// scratch buffers for packPage.
	runs []memoRun
	exc  []uint64
}

// memoPacked is what every slot of the marker page holds, a kind no slot
// stores.
const memoPacked = uint32(kPacked)

// memoPack is a packed page: its runs and its exceptions (slot <<32 |
// value), each in slot order; every slot is in one run or one exception.
type memoPack struct {
	runs []memoRun
	exc  []uint64
}

// memoRun is n slots from slot off of a page: kRow row, kStackRef
// stacks[row], kRow row+1, … (n may be odd).
type memoRun struct {
	off, n uint16
	row    uint32
}

// Bounds of packing: a run shorter than memoRunMin slots is kept as
// exceptions, and a page needing more than memoPackMax runs and
// exceptions stays dense (8 bytes each: a quarter of the page's bytes).
const (
	memoRunMin  = 8
	memoPackMax = pageSize / 8
)

func (m *memoTable) len() int { return m.n }

// raw returns slot id as stored: memoPacked for a packed page's slot,
// which the caller then reads with at.
func (m *memoTable) raw(id int) uint32 { return m.c.at(id) }

// at returns slot id's value.
func (m *memoTable) at(id int) uint32 {
	if u := m.c.at(id); u != memoPacked {
		return u
	}
	return m.packedAt(id, true)
}

// peek is at for a scan: a packed page stays packed.
func (m *memoTable) peek(id int) uint32 {
	if u := m.c.at(id); u != memoPacked {
		return u
	}
	return m.packedAt(id, false)
}

func (m *memoTable) set(id int, u uint32) {
	p := m.c.pages[id>>pageBits]
	if p[id&pageMask] == memoPacked {
		p = m.unpackPage(id >> pageBits)
	}
	p[id&pageMask] = u
}

func (m *memoTable) push(u uint32) {
	if n := len(m.c.pages); n > 0 && len(m.c.pages[n-1]) == pageSize {
		// The pages before the one just filled may be packed.
		for ; m.next < n-1; m.next++ {
			if m.stacks != nil && !m.off && (m.next+1)<<pageBits <= m.limit {
				m.packPage(m.next)
			}
		}
		m.c.pages = append(m.c.pages, m.newPage())
	}
	m.c.push(u)
	m.n++
}

// newPage returns an empty page of room pageSize: a spare one, or one
// from the slab.
func (m *memoTable) newPage() []uint32 {
	if n := len(m.spare); n > 0 {
		p := m.spare[n-1]
		m.spare = m.spare[:n-1]
		return p[:0]
	}
	return m.pages.page()
}

// skip keeps the pages so far dense (a part's hole: pages of zeros, some
// shared).
func (m *memoTable) skip() { m.next = max(m.next, len(m.c.pages)) }

// want is the value of slot j of a run from row: kRow or kStackRef, or
// memoPacked (no slot's value) for a stack that does not pack.
func (m *memoTable) want(row uint32, j int) uint32 {
	r := row + uint32(j>>1)
	if j&1 == 0 {
		return r<<4 | uint32(kRow)
	}
	s := m.stacks.at(int(r))
	if s < 0 || s >= 1<<28 {
		return memoPacked
	}
	return uint32(s)<<4 | uint32(kStackRef)
}

// packPage packs full page pi if it is made of long enough runs (see
// memoTable), and gives its memory to the next pages.
func (m *memoTable) packPage(pi int) {
	p := m.c.pages[pi]
	if len(p) != pageSize || cap(p) != pageSize || m.packed(pi) {
		return
	}
	runs, exc := m.runs[:0], m.exc[:0]
	for i := 0; i < pageSize; {
		if u := p[i]; vkind(u&15) == kRow {
			row := u >> 4
			j := m.runEnd(p, i, row)
			if j-i >= memoRunMin {
				runs = append(runs, memoRun{off: uint16(i), n: uint16(j - i), row: row})
				i = j
				continue
			}
		}
		exc = append(exc, uint64(i)<<32|uint64(p[i]))
		if len(runs)+len(exc) > memoPackMax {
			m.runs, m.exc = runs, exc
			return
		}
		i++
	}
	m.runs, m.exc = runs, exc
	for _, r := range runs {
		m.rowsTo = max(m.rowsTo, int(r.row)+int(r.n+1)/2)
	}
	for len(m.packs) <= pi {
		m.packs = append(m.packs, memoPack{})
	}
	m.packs[pi] = memoPack{runs: append([]memoRun(nil), runs...), exc: append([]uint64(nil), exc...)}
	if m.marker == nil {
		m.marker = make([]uint32, pageSize)
		for i := range m.marker {
			m.marker[i] = memoPacked
		}
	}
	m.c.pages[pi] = m.marker
	m.spare = append(m.spare, p)
}

// runEnd returns where the run of page p from slot i, which holds kRow
// row, ends: the first slot from i+1 on that does not hold want(row,
// slot-i), or pageSize. want's loop, a row and its stack a step, over
// the rows of one page of the stacks at a time: the inner loop has no
// test of the page (in WebAssembly every taken jump of Go's code goes
// back through its dispatch; a page of the memo is 16 Ki slots a large
// file packs).
func (m *memoTable) runEnd(p []uint32, i int, row uint32) int {
	p = p[:pageSize]
	j, r := i+1, int(row)
	for j < pageSize {
		// Slot j holds row r's stack, slot j+1 row r+1: the stacks of
		// the rows from r on of r's page, for the slots left.
		sp := m.stacks.pages[r>>pageBits][r&pageMask:]
		if len(sp) == 0 {
			return j // (no stack: not a run's)
		}
		sp = sp[:min(len(sp), (pageSize-j+1)/2)]
		for _, s := range sp {
			if s < 0 || s >= 1<<28 || p[j] != uint32(s)<<4|uint32(kStackRef) {
				return j
			}
			r++
			if j++; j >= pageSize || p[j] != uint32(r)<<4|uint32(kRow) {
				return j
			}
			j++
		}
	}
	return j
}

// packed reports whether page pi is packed.
func (m *memoTable) packed(pi int) bool {
	p := m.c.pages[pi]
	return m.marker != nil && len(p) > 0 && &p[0] == &m.marker[0]
}

// packedAt reads slot id of a packed page; with unpack, an exception's
// page is unpacked (it is referred to: the next reads are plain).
func (m *memoTable) packedAt(id int, unpack bool) uint32 {
	pk := &m.packs[id>>pageBits]
	o := id & pageMask
	if i := sort.Search(len(pk.runs), func(i int) bool { return int(pk.runs[i].off) > o }) - 1; i >= 0 {
		if r := pk.runs[i]; o < int(r.off)+int(r.n) {
			return m.want(r.row, o-int(r.off))
		}
	}
	i := sort.Search(len(pk.exc), func(i int) bool { return int(pk.exc[i]>>32) >= o })
	u := uint32(pk.exc[i])
	if unpack {
		m.unpackPage(id >> pageBits)
	}
	return u
}

// unpackPage makes packed page pi dense again, for good, and returns it.
func (m *memoTable) unpackPage(pi int) []uint32 {
	pk := &m.packs[pi]
	p := m.newPage()[:pageSize]
	for _, r := range pk.runs {
		for j := range int(r.n) {
			p[int(r.off)+j] = m.want(r.row, j)
		}
	}
	for _, e := range pk.exc {
		p[e>>32] = uint32(e)
	}
	*pk = memoPack{}
	m.c.pages[pi] = p
	return p
}

// stackChanged is called before row's stack changes: if the row may be in
// a run, every page is unpacked and none packed again.
func (m *memoTable) stackChanged(row int) {
	if row >= m.rowsTo || m.off {
		return
	}
	m.off = true
	for pi := range m.packs {
		if m.packed(pi) {
			m.unpackPage(pi)
		}
	}
}

// each calls f with each slot in [from, to) and its value, but those in
// runs (kRow and kStackRef values).
func (m *memoTable) each(from, to int, f func(id int, u uint32)) {
	for id := from; id < to; {
		pi := id >> pageBits
		if m.c.at(id) != memoPacked {
			end := min(to, (pi+1)<<pageBits)
			for ; id < end; id++ {
				f(id, m.c.at(id))
			}
			continue
		}
		for _, e := range m.packs[pi].exc {
			if x := pi<<pageBits + int(e>>32); x >= from && x < to {
				f(x, uint32(e))
			}
		}
		id = (pi + 1) << pageBits
	}
}
