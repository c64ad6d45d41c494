package snapshot

import (
	"fmt"
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

// TestAddRowGo adds the same rows to one store with addRow (in
// WebAssembly addRowAsm, natively addRowGo itself) and to another with
// addRowGo, and checks that both end the same: every value, and each
// narrow column's pages (narrow or wide, base, length, capacity, early)
// and the stream column's shared pages. The rows come in runs of a few
// hundred, each run's addr, size and time drawn one of several ways, so
// that pages stay narrow, widen early or late, start wide (after a page
// that widened early) and set early or not in their first narrowEarly
// rows; zeros and values that do not fit come now and then in every way,
// and streams other than 0 on pages of their own and on the shared page
// of zeros, over the first page's doublings and nineteen full pages, with
// rows added by add mixed in. From the fourth page on, pages come in
// fours: one whose first rows do not fit narrow (it widens early), one
// started wide that gets a row that does not fit at a place in its first
// narrowEarly rows or about it (is it early from there?), one that fits,
// and one narrow that gets such a row (it widens there).
func TestAddRowGo(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var fast, ref entryStore
	fast.ready()
	ref.ready()
	tm := int64(1_700_000_000_000_000)
	base := uint64(0x7f00_0000_0000)
	var addrWay, sizeWay, timeWay, streamWay, next, misfitAt int
	const n = 19*pageSize + 321
	for i := range n {
		if i == next {
			// Wide ways one run in eight.
			next += 500 + r.IntN(6000)
			addrWay, sizeWay, timeWay, streamWay = r.IntN(5), r.IntN(4), r.IntN(4), r.IntN(8)
			if addrWay == 1 && r.IntN(2) == 0 {
				addrWay = 0
			}
			if sizeWay == 2 && r.IntN(2) == 0 {
				sizeWay = 0
			}
			if timeWay == 3 && r.IntN(2) == 0 {
				timeWay = 0
			}
			if r.IntN(3) == 0 { // narrow all
				addrWay, sizeWay, timeWay = 0, 0, 0
			}
		}
		if k := i >> pageBits; i&pageMask == 0 && k >= 3 {
			switch k % 4 {
			case 3:
				// Wide at first: the page widens early.
				next = i + 3000
				addrWay, sizeWay, timeWay = 1, 2, 3
			case 0, 2:
				// Narrow but for one addr and the next time at one of
				// its first rows or about narrowEarly: a page started wide
				// (after case 3) is early from there (not at the
				// largest narrow size); a narrow one (after case 1)
				// widens there.
				next = i + pageSize
				addrWay, sizeWay, timeWay = 5, 4, 4
				misfitAt = []int{1, 7, narrowEarly - 1, narrowEarly, 3000}[k/2%5]
			case 1:
				// Narrow: the page is not early, the next is narrow.
				next = i + pageSize
				addrWay, sizeWay, timeWay = 0, 0, 0
			}
		}
		if r.IntN(200) == 0 {
			row := fast.add()
			if p := ref.add(); p != row {
				t.Fatalf("row %d: add gave %d and %d", i, row, p)
			}
			continue
		}
		var addr uint64
		switch addrWay {
		case 0: // narrow, near the last
			addr = base + 512*r.Uint64N(1<<20)
		case 1: // random: wide
			addr = r.Uint64()
		case 2: // narrow but for a misaligned one now and then
			addr = base + 512*r.Uint64N(1<<20)
			if r.IntN(3000) == 0 {
				addr++
			}
		case 3: // far now and then
			addr = base + 512*r.Uint64N(1<<20)
			if r.IntN(5000) == 0 {
				addr = base + 1<<45
			}
		case 4: // zeros
			if r.IntN(2) == 0 {
				addr = base + 512*r.Uint64N(1<<20)
			}
		case 5: // narrow but for the row at misfitAt
			addr = base + 512*r.Uint64N(1<<20)
			if i&pageMask == misfitAt {
				addr++
			}
		}
		if r.IntN(500) == 0 {
			addr = 0
		}
		var size int64
		switch sizeWay {
		case 0:
			size = r.Int64N(1 << 32)
		case 1: // a negative one now and then
			size = r.Int64N(1 << 32)
			if r.IntN(5000) == 0 {
				size = -1
			}
		case 2:
			size = int64(r.Uint64())
		case 3:
			size = 512 * r.Int64N(1<<10)
		case 4: // the largest narrow one at row 5 of the page
			size = r.Int64N(1 << 32)
			if i&pageMask == 5 {
				size = 1<<32 - 1
			}
		}
		if r.IntN(400) == 0 {
			size = 0
		}
		tm += int64(r.IntN(100))
		time := tm
		switch timeWay {
		case 1: // far now and then
			if r.IntN(5000) == 0 {
				tm += math.MaxInt32
			}
		case 2: // before the page's span
			if r.IntN(5000) == 0 {
				time = tm - 1<<33
			}
		case 3: // random
			time = int64(r.Uint64())
		case 4: // before the page's span just past misfitAt
			if i&pageMask == misfitAt+1 {
				time = tm - 1<<33
			}
		}
		if r.IntN(700) == 0 {
			time = 0
		}
		var stream uint16
		if streamWay == 7 && r.IntN(3) == 0 {
			stream = uint16(1 + r.IntN(2))
		}
		action := uint8(r.IntN(12))
		row := fast.addRow(action, addr, size, time, stream)
		if p := addRowGo(&ref, action, addr, size, time, stream); row != p || row != i {
			t.Fatalf("row %d: addRow gave %d, addRowGo %d", i, row, p)
		}
		if fast.addr.at(row) != addr || fast.size.at(row) != size || fast.time.at(row) != time || fast.stream.at(row) != stream {
			t.Fatalf("row %d: addRow stored (%d %d %d %d), want (%d %d %d %d)", i,
				fast.addr.at(row), fast.size.at(row), fast.time.at(row), fast.stream.at(row), addr, size, time, stream)
		}
	}
	if fast.n != n || ref.n != n || fast.roomTo != ref.roomTo {
		t.Fatalf("%d and %d rows (room to %d and %d), want %d", fast.n, ref.n, fast.roomTo, ref.roomTo, n)
	}
	for i := range n {
		if fast.action.at(i) != ref.action.at(i) || fast.addr.at(i) != ref.addr.at(i) || fast.size.at(i) != ref.size.at(i) ||
			fast.time.at(i) != ref.time.at(i) || fast.stream.at(i) != ref.stream.at(i) || fast.stack.at(i) != ref.stack.at(i) {
			t.Fatalf("row %d: addRow's (%d %d %d %d %d %d), addRowGo's (%d %d %d %d %d %d)", i,
				fast.action.at(i), fast.addr.at(i), fast.size.at(i), fast.time.at(i), fast.stream.at(i), fast.stack.at(i),
				ref.action.at(i), ref.addr.at(i), ref.size.at(i), ref.time.at(i), ref.stream.at(i), ref.stack.at(i))
		}
	}
	samePages(t, "addr", fast.addr.pages, ref.addr.pages)
	samePages(t, "size", fast.size.pages, ref.size.pages)
	samePages(t, "time", fast.time.pages, ref.time.pages)
	kinds := map[string]int{}
	for _, c := range []*narrowColumn[int64]{&ref.size, &ref.time} {
		for _, p := range c.pages {
			kinds[fmt.Sprintf("wide %v early %v", p.w != nil, p.early)]++
		}
	}
	for _, p := range ref.addr.pages {
		kinds[fmt.Sprintf("wide %v early %v", p.w != nil, p.early)]++
	}
	if len(kinds) != 3 { // (a narrow page is never early)
		t.Errorf("pages of %d kinds, want 3: %v", len(kinds), kinds)
	}
	shared := 0
	for k, p := range fast.stream.pages {
		if fast.stream.shared(p) != ref.stream.shared(ref.stream.pages[k]) || len(p) != len(ref.stream.pages[k]) {
			t.Fatalf("stream page %d: shared %v, addRowGo's %v", k, fast.stream.shared(p), ref.stream.shared(ref.stream.pages[k]))
		}
		if fast.stream.shared(p) {
			shared++
		}
	}
	if shared == 0 || shared == len(fast.stream.pages) {
		t.Errorf("%d of %d stream pages shared, want some", shared, len(fast.stream.pages))
	}
}

// samePages fails t unless the pages a and b are alike: both narrow or both
// wide, the same base, shift, length, capacity and early.
func samePages[T int64 | uint64](t *testing.T, name string, a, b []narrowPage[T]) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d pages, addRowGo %d", name, len(a), len(b))
	}
	for k := range a {
		p, q := &a[k], &b[k]
		if p.base != q.base || p.shift != q.shift || (p.w == nil) != (q.w == nil) || len(p.d) != len(q.d) || cap(p.d) != cap(q.d) ||
			len(p.w) != len(q.w) || cap(p.w) != cap(q.w) || p.early != q.early {
			t.Fatalf("%s page %d: base %x shift %d d %d/%d w %v %d/%d early %v; addRowGo's %x %d %d/%d %v %d/%d %v", name, k,
				p.base, p.shift, len(p.d), cap(p.d), p.w != nil, len(p.w), cap(p.w), p.early,
				q.base, q.shift, len(q.d), cap(q.d), q.w != nil, len(q.w), cap(q.w), q.early)
		}
	}
}
