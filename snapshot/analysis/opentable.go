package analysis

// openTable maps the address of each allocation the replay has not seen
// freed to its number and size: open addressing with linear probing in a
// power-of-two number of slots kept at most half full, deletion by
// shifting the following entries back (no tombstones). It does what a
// map[uint64]openAlloc does with a fraction of the work per operation, the
// replay's main cost on traces of millions of allocations. Address 0, the
// empty slot's mark, is kept aside.
type openTable struct {
	slots []openSlot
	shift uint // 64 − log2(len(slots))
	n     int  // addresses held, zero's included
	zero  openAlloc
	// hasZero: address 0 is held (in zero).
	hasZero bool
}

type openSlot struct {
	addr uint64 // 0: empty
	openAlloc
}

func newOpenTable() *openTable {
	return &openTable{slots: make([]openSlot, 64), shift: 64 - 6}
}

// home is addr's first slot (Fibonacci hashing: block addresses are
// multiples of 512, whose low bits say nothing).
func (t *openTable) home(addr uint64) int {
	return int((addr * 0x9E3779B97F4A7C15) >> t.shift)
}

// get returns what addr maps to.
func (t *openTable) get(addr uint64) (openAlloc, bool) {
	if addr == 0 {
		return t.zero, t.hasZero
	}
	mask := len(t.slots) - 1
	for i := t.home(addr); ; i = (i + 1) & mask {
		switch t.slots[i].addr {
		case addr:
			return t.slots[i].openAlloc, true
		case 0:
			return openAlloc{}, false
		}
	}
}

// put maps addr to v, replacing what it mapped to.
func (t *openTable) put(addr uint64, v openAlloc) {
	if addr == 0 {
		if !t.hasZero {
			t.n++
		}
		t.zero, t.hasZero = v, true
		return
	}
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(addr); ; i = (i + 1) & mask {
		switch t.slots[i].addr {
		case addr:
			t.slots[i].openAlloc = v
			return
		case 0:
			t.slots[i] = openSlot{addr, v}
			t.n++
			return
		}
	}
}

// del removes addr, if held.
func (t *openTable) del(addr uint64) {
	if addr == 0 {
		if t.hasZero {
			t.n--
		}
		t.zero, t.hasZero = openAlloc{}, false
		return
	}
	mask := len(t.slots) - 1
	i := t.home(addr)
	for t.slots[i].addr != addr {
		if t.slots[i].addr == 0 {
			return
		}
		i = (i + 1) & mask
	}
	// Shift back each following entry whose home is not between the hole
	// and it (cyclically), so that every entry stays reachable from home.
	for j := (i + 1) & mask; t.slots[j].addr != 0; j = (j + 1) & mask {
		if h := t.home(t.slots[j].addr); (j-h)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = openSlot{}
	t.n--
}

// len returns the number of addresses held.
func (t *openTable) len() int { return t.n }

// grow doubles the slots.
func (t *openTable) grow() {
	old := t.slots
	t.slots, t.shift = make([]openSlot, 2*len(old)), t.shift-1
	mask := len(t.slots) - 1
	for _, s := range old {
		if s.addr == 0 {
			continue
		}
		i := t.home(s.addr)
		for t.slots[i].addr != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}
