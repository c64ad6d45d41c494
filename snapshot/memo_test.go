package snapshot

import (
	"bytes"
	"testing"
)

// TestMemoPack fills a memo as a decoder does on a large file (some
// strings and objects, then pairs of entry slots, a row and its stack,
// with odd slots among them) beside a column of the rows' stacks, and
// checks it against a plain slice: every slot reads back as stored,
// whether its page is packed or not, after reads that unpack a page,
// writes into a packed page, and a row's stack changed (its list slot
// keeps the stack stored). It also checks which pages were packed.
func TestMemoPack(t *testing.T) {
	var stacks column[StackID]
	m := memoTable{stacks: &stacks, limit: 1 << 30}
	var want []uint32
	put := func(x val) {
		u, ok := pack(x)
		if !ok {
			t.Fatalf("%v does not pack", x)
		}
		m.push(u)
		want = append(want, u)
	}
	row := 0
	entry := func(s StackID) {
		stacks.push(s)
		put(val{k: kRow, n: int64(row)})
		put(val{k: kStackRef, n: int64(s)})
		row++
	}
	var strs []int
	// Page 0: a header of strings and objects, then entries.
	for i := range 300 {
		put(val{k: kStr, n: int64(i)})
		put(val{k: kObj, n: int64(i)})
	}
	for len(want) < 7*pageSize+100 {
		switch i := len(want); {
		case i%5000 < 2 && len(strs) < i/5000:
			put(val{k: kStr, n: int64(i)}) // a new string among the entries
			strs = append(strs, i)
		case i%7000 == 33:
			// An entry whose list slot holds another stack than its
			// row's (its frames set twice, say): an exception.
			stacks.push(5)
			put(val{k: kRow, n: int64(row)})
			put(val{k: kStackRef, n: 6})
			row++
		case i%9000 == 41:
			// A row whose stack does not pack (its list slot holds
			// kWide, the stack in vm.memoWide): exceptions.
			stacks.push(NoStack)
			put(val{k: kRow, n: int64(row)})
			m.push(uint32(kWide))
			want = append(want, uint32(kWide))
			row++
		default:
			entry(StackID(row % 300))
		}
	}
	// Page 8 (packed once page 9 starts): nothing but strings.
	for len(want) < 10*pageSize+5 {
		put(val{k: kStr, n: int64(len(want))})
	}
	for pi := range len(m.c.pages) {
		// Pages 0 to 6 are entries with a few odd slots, 7 holds the
		// strings from 7*pageSize+100 on, 8 only strings, 9 and 10 are
		// the last two.
		if got, wantPacked := m.packed(pi), pi <= 6; got != wantPacked {
			t.Errorf("page %d packed %v, want %v", pi, got, wantPacked)
		}
	}
	if m.len() != len(want) {
		t.Fatalf("len %d, want %d", m.len(), len(want))
	}
	check := func(when string) {
		t.Helper()
		for id, w := range want {
			if got := m.peek(id); got != w {
				t.Fatalf("%s: slot %d: %#x, want %#x", when, id, got, w)
			}
		}
	}
	check("packed")
	// each visits every slot but those of the runs, which hold only rows
	// and stacks.
	seen := make([]bool, len(want))
	m.each(0, len(want), func(id int, u uint32) {
		if u != want[id] {
			t.Fatalf("each: slot %d: %#x, want %#x", id, u, want[id])
		}
		seen[id] = true
	})
	for id, w := range want {
		if k := vkind(w & 15); !seen[id] && k != kRow && k != kStackRef {
			t.Fatalf("each skipped slot %d (kind %d)", id, k)
		}
	}
	// A run's slot read with at leaves its page packed; an exception read
	// with at unpacks its page; a write into a packed page too.
	r := 2*pageSize + 1000 // page 2: an entry's slots (the header is even)
	if vkind(want[r]&15) != kRow {
		t.Fatalf("slot %d is not a row", r)
	}
	if m.at(r) != want[r] || m.at(r+1) != want[r+1] || !m.packed(2) {
		t.Fatal("reading a run's slot unpacked its page or read it wrong")
	}
	s := strs[0] // a string among page 0's entries
	if s >= pageSize || !m.packed(0) {
		t.Fatalf("first string among the entries at %d, page 0 packed %v", s, m.packed(0))
	}
	if m.at(s) != want[s] || m.packed(0) {
		t.Fatal("reading an exception left its page packed or read it wrong")
	}
	want[3*pageSize+7] = uint32(kNone)
	m.set(3*pageSize+7, uint32(kNone))
	if m.packed(3) {
		t.Fatal("writing into a packed page left it packed")
	}
	check("unpacked")
	// The stack of a row in a run changes: every page is unpacked before,
	// and its list slot keeps the stack stored.
	rr := int(want[4*pageSize+2000] >> 4)
	m.stackChanged(rr)
	stacks.set(rr, 299)
	for pi := range 7 {
		if m.packed(pi) {
			t.Fatalf("page %d still packed after a packed row's stack changed", pi)
		}
	}
	check("stack changed")
	for len(want) < 14*pageSize {
		entry(1)
	}
	if m.packed(10) || m.packed(11) {
		t.Fatal("a page packed after a packed row's stack changed")
	}
	check("the end")
}

// TestMemoPackDecode decodes a trace long enough that its entries' memo
// slots are packed (pages of 16 Ki ids, the last two left dense), then
// refers back to them: an early entry dict again in a second device's
// trace, an early frame list as a new entry's frames, and an early entry
// dict given other frames before its old frame list is used again (which
// must still be the old frames). The decoder must agree with the
// reference decoder.
func TestMemoPackDecode(t *testing.T) {
	var buf bytes.Buffer
	p, err := newPickler(&buf, 4)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]int{}
	key := func(s string) {
		if id, ok := keys[s]; ok {
			p.get(id)
			return
		}
		p.str(s)
		keys[s] = p.memoize()
	}
	// Frames first.
	var fids []int
	for i := range 8 {
		id := p.beginDict()
		p.op(opMark)
		key("filename")
		key("f.py")
		key("line")
		p.int(int64(i + 1))
		key("name")
		key("fn")
		p.op(opSetItems)
		p.op(opPop) // (segments' blocks would hold them)
		fids = append(fids, id)
	}
	type ent struct{ dict, list int }
	var ents []ent
	newList := func(fs ...int) int {
		id := p.beginList()
		p.op(opMark)
		for _, f := range fs {
			p.get(fids[f])
		}
		p.op(opAppends)
		return id
	}
	entry := func(i int, list func() int) {
		d := p.beginDict()
		p.op(opMark)
		key("action")
		if i%3 == 2 {
			key("free_completed")
		} else {
			key("alloc")
		}
		key("addr")
		p.int(int64(1<<20 + i*512))
		key("size")
		p.int(int64(512 + i%7))
		key("stream")
		p.int(0)
		key("time_us")
		p.int(int64(1000 + i))
		key("frames")
		l := list()
		p.op(opSetItems)
		ents = append(ents, ent{d, l})
	}
	p.beginDict() // the snapshot
	p.op(opMark)
	key("segments")
	p.beginList()
	key("device_traces")
	p.beginList()
	p.op(opMark)
	p.beginList() // device 0
	const n = 45000
	if err := p.listItems(n, func(i int) error {
		entry(i, func() int { return newList(i%8, (i/8)%8, (i/64)%8) })
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p.beginList() // device 1
	p.op(opMark)
	e1, e2, e3 := ents[9000], ents[13000], ents[21000]
	p.get(e1.dict) // an early entry again
	entry(n, func() int { p.get(e2.list); return e2.list })
	// e3 gets other frames, then a new entry takes e3's old list.
	p.get(e3.dict)
	key("frames")
	newList(7, 7)
	p.op(opSetItem)
	entry(n+1, func() int { p.get(e3.list); return e3.list })
	p.op(opAppends)
	p.op(opAppends) // the device traces
	p.op(opSetItems)
	if err := p.finish(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if ids := p.nmemo; ids < 5*pageSize {
		t.Fatalf("only %d memo ids: no page would be packed", ids)
	}
	ref, err := DecodeReferenceBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBytes(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !Equal(got, ref) {
		t.Fatalf("fast and reference differ: %s", Diff(ref, got))
	}
	tr := got.DeviceTraces[1]
	if tr.Len() != 4 {
		t.Fatalf("device 1: %d entries, want 4", tr.Len())
	}
	a, errA := got.Stacks.Frames(tr.Frames(3))
	b, errB := got.Stacks.Frames(got.DeviceTraces[0].Frames(21000))
	if errA != nil || errB != nil || len(a) != 3 || len(b) != 2 {
		t.Errorf("e3's old list: %d frames, e3 now: %d frames; want 3 and 2", len(a), len(b))
	}
}

// TestMemoRunEnd checks runEnd against want, slot by slot, on pages whose
// runs cross the stacks' pages (rows by 16 Ki), break at a changed row, a
// changed stack, a stack that does not pack and the end of the page.
func TestMemoRunEnd(t *testing.T) {
	var stacks column[StackID]
	for r := range 3 * pageSize {
		s := StackID(r*7 + 1)
		switch r % 5000 {
		case 4999:
			s = NoStack // does not pack
		case 2500:
			s = 1 << 28 // nor this
		}
		stacks.push(s)
	}
	m := memoTable{stacks: &stacks}
	// naive is the run's end by want.
	naive := func(p []uint32, i int, row uint32) int {
		j := i + 1
		for j < pageSize && p[j] == m.want(row, j-i) {
			j++
		}
		return j
	}
	p := make([]uint32, pageSize)
	for _, first := range []int{0, pageSize - 3000, 2*pageSize - 1, 2*pageSize - 6000, -1, pageSize - 2999} {
		// Slots: kRow r, kStackRef stacks[r], … from row first, with a
		// break every 3001 slots (a row skipped or another stack); from
		// slot 1 for an odd first (a run that ends with the page at a
		// row's slot).
		r := uint32(first)
		s0 := 0
		if first%2 != 0 {
			r, s0 = uint32(first+1), 1
			p[0] = 5<<4 | uint32(kStr)
		}
		for j := s0; j < pageSize; j += 2 {
			if j%3001 < 2 {
				r++ // a row left out
			}
			p[j] = r<<4 | uint32(kRow)
			if j+1 < pageSize {
				p[j+1] = uint32(stacks.at(int(r)))<<4 | uint32(kStackRef)
				if j%4099 < 2 {
					p[j+1] = 3<<4 | uint32(kStackRef) // another stack
				}
			}
			r++
		}
		runs := 0
		for i := 0; i < pageSize; i++ {
			if vkind(p[i]&15) != kRow {
				continue
			}
			got, want := m.runEnd(p, i, p[i]>>4), naive(p, i, p[i]>>4)
			if got != want {
				t.Fatalf("rows from %d: run from slot %d ends at %d, want %d", first, i, got, want)
			}
			if want-i > pageSize/8 {
				runs++
			}
		}
		if runs == 0 {
			t.Fatalf("rows from %d: no long run", first)
		}
	}
}

// BenchmarkMemoPackPage packs a page of entry slots (a row and its stack,
// the page of a large file's trace) as memoTable.push does.
func BenchmarkMemoPackPage(b *testing.B) {
	var stacks column[StackID]
	for r := range pageSize {
		stacks.push(StackID(r))
	}
	src := make([]uint32, pageSize)
	for j := range src {
		r := uint32(j / 2)
		src[j] = r<<4 | uint32(kRow)
		if j&1 == 1 {
			src[j] = uint32(stacks.at(int(r)))<<4 | uint32(kStackRef)
		}
	}
	p := make([]uint32, pageSize)
	var marker []uint32 // made by the first packPage
	for b.Loop() {
		copy(p, src)
		m := memoTable{stacks: &stacks, limit: 1 << 30, c: column[uint32]{pages: [][]uint32{p}}, n: pageSize, marker: marker}
		m.packPage(0)
		marker = m.marker
		if !m.packed(0) {
			b.Fatal("not packed")
		}
	}
}
