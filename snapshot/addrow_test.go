package snapshot

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAddRow adds rows to one store with addRow (which puts rows below
// roomTo without checking each column's room) and to another with add then
// a set per column, the straightforward way, mixing in rows added by add
// (as setItems does), across the first page's doublings and several full
// pages, with times that widen a page now and then: every row of every
// column must read back the same, and no put may pass a page's end (put
// would panic). Addresses and sizes are random 64-bit numbers (wide
// pages), then as a trace's (multiples of 512 near each other, sizes below
// 4 GiB, a 0 or a far value now and then): addRow's one-branch path.
func TestAddRow(t *testing.T) {
	for _, narrow := range []bool{false, true} {
		testAddRow(t, narrow)
	}
}

func testAddRow(t *testing.T, narrow bool) {
	r := rand.New(rand.NewPCG(5, 6))
	var fast, plain entryStore
	fast.ready()
	plain.ready()
	tm := int64(1_700_000_000_000_000)
	const n = 4*pageSize + 777
	for i := range n {
		if r.IntN(50) == 0 {
			// A row of zeros and its stack set, on both.
			row := fast.add()
			fast.stack.set(row, StackID(i))
			if p := plain.add(); p != row {
				t.Fatalf("row %d: add gave %d and %d", i, row, p)
			}
			plain.stack.set(row, StackID(i))
			continue
		}
		tm += int64(r.IntN(100))
		if r.IntN(5000) == 0 {
			tm += math.MaxInt32 // widens the page
		}
		action, addr, size, stream := uint8(r.IntN(12)), r.Uint64(), int64(r.Uint64()), uint16(r.IntN(3))
		if narrow {
			addr, size = 0x7f00_0000_0000+512*r.Uint64N(1<<20), r.Int64N(1<<32)
			if r.IntN(4) != 0 {
				stream = 0
			}
			switch r.IntN(3000) {
			case 0:
				addr, size = 0, 0
			case 1:
				addr, size = r.Uint64(), -1
			}
		}
		row := fast.addRow(action, addr, size, tm, stream)
		p := plain.add()
		plain.action.set(p, action)
		plain.addr.set(p, addr)
		plain.size.set(p, size)
		plain.time.set(p, tm)
		plain.stream.set(p, stream)
		if row != p || row != i {
			t.Fatalf("narrow %v, row %d: addRow gave %d, add %d", narrow, i, row, p)
		}
	}
	if fast.n != n || plain.n != n {
		t.Fatalf("narrow %v: %d and %d rows, want %d", narrow, fast.n, plain.n, n)
	}
	for i := range n {
		if fast.action.at(i) != plain.action.at(i) || fast.addr.at(i) != plain.addr.at(i) || fast.size.at(i) != plain.size.at(i) ||
			fast.time.at(i) != plain.time.at(i) || fast.stream.at(i) != plain.stream.at(i) || fast.stack.at(i) != plain.stack.at(i) {
			t.Fatalf("narrow %v, row %d: addRow's (%d %d %d %d %d %d), add's (%d %d %d %d %d %d)", narrow, i,
				fast.action.at(i), fast.addr.at(i), fast.size.at(i), fast.time.at(i), fast.stream.at(i), fast.stack.at(i),
				plain.action.at(i), plain.addr.at(i), plain.size.at(i), plain.time.at(i), plain.stream.at(i), plain.stack.at(i))
		}
	}
}

// TestStacksPushRoom pushes stack records past several pages (push puts
// those below roomTo without checking each column's room), merges most of
// them away (renumber shrinks the columns, by pages), pushes again, and
// reads every record back against a plain slice of them, then again once
// the summary column is wide.
func TestStacksPushRoom(t *testing.T) {
	var s Stacks
	s.init()
	type rec struct {
		at  uint64
		sum uint32
		h   uint64
	}
	want := []rec{{}}
	wide := false
	add := func(n int) {
		for range n {
			// A summary index the column holds: narrow until wide is set.
			sum := uint32(len(want)) * 5 % maxNarrowSums
			if wide {
				sum = uint32(len(want))*5 + maxNarrowSums
			}
			r := rec{uint64(len(want)) * 3, sum, uint64(len(want)) * 7}
			s.push(r.at, r.sum, r.h)
			want = append(want, r)
		}
	}
	check := func(when string) {
		if s.count != len(want) {
			t.Fatalf("%s: %d stacks, want %d", when, s.count, len(want))
		}
		for i, r := range want {
			if s.at.at(i) != r.at || s.sum.at(i) != r.sum || s.hashes.at(i) != r.h {
				t.Fatalf("%s: stack %d is (%d %d %d), want %+v", when, i, s.at.at(i), s.sum.at(i), s.hashes.at(i), r)
			}
		}
	}
	add(3*pageSize + 100)
	check("pushed")
	// Merge every stack from 10 on but one in 8 into stack 10's: the
	// columns drop to a fraction of their pages.
	from := 10
	rep := make([]StackID, s.count-from)
	kept := want[:from]
	for id := from; id < s.count; id++ {
		rep[id-from] = StackID(from)
		if (id-from)%8 == 0 {
			rep[id-from] = StackID(id)
			kept = append(kept, want[id])
		}
	}
	s.renumber(rep, from)
	want = kept
	check("renumbered")
	add(2*pageSize + 5)
	check("pushed again")
	// The summary column widened (as sumIndex does at maxNarrowSums
	// summaries): every record stays, and wide indices follow.
	s.sum.widen()
	s.roomTo = 0
	wide = true
	check("widened")
	add(pageSize + 7)
	check("pushed wide")
}

// TestAddRowStreams adds rows with addRow over five pages, every row of
// the first stream (0) but two in the fourth page, of two other streams:
// every row reads its stream back, the pages of zeros stay slices of the
// column's page of zeros (never given memory of their own), the fourth
// page has its own, and the page of zeros holds only zeros.
func TestAddRowStreams(t *testing.T) {
	var e entryStore
	e.ready()
	const n = 5 * pageSize
	want := func(i int) uint16 {
		switch i {
		case 3*pageSize + 100:
			return 1
		case 3*pageSize + 5000:
			return 2
		}
		return 0
	}
	for i := range n {
		if row := e.addRow(uint8(KindAlloc), uint64(i)<<9, 512, int64(i), want(i)); row != i {
			t.Fatalf("row %d: addRow gave %d", i, row)
		}
	}
	for i := range n {
		if got := e.stream.at(i); got != want(i) {
			t.Fatalf("row %d: stream %d, want %d", i, got, want(i))
		}
	}
	for k, p := range e.stream.pages {
		if shared := e.stream.shared(p); shared != (k != 0 && k != 3) {
			t.Errorf("page %d: shared %v", k, shared)
		}
	}
	for i, v := range e.stream.zero {
		if v != 0 {
			t.Fatalf("the page of zeros holds %d at %d", v, i)
		}
	}
}
