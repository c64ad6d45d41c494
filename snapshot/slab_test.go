package snapshot

import (
	"testing"
	"unsafe"
)

// TestSlabPages grows a memo past several slab blocks and checks it
// against a plain slice: every value read back as written, every full page
// pageSize values with room for no more (so that no page writes into the
// next one of its block), and the first page left to push's doubling.
func TestSlabPages(t *testing.T) {
	var m memoTable
	var want []uint32
	n := 9*pageSize + 123 // blocks of 2, 4 and 8 pages and part of one more
	for i := range n {
		u := uint32(i*2654435761) | 1
		m.push(u)
		want = append(want, u)
	}
	if m.len() != n {
		t.Fatalf("len %d, want %d", m.len(), n)
	}
	// Rewrite every slot, then read all back: a page sharing memory with
	// another would show the other's values.
	for i := range n {
		want[i] ^= 0x5a5a5a5a
		m.set(i, want[i])
	}
	for i := range n {
		if got := m.at(i); got != want[i] {
			t.Fatalf("slot %d: %#x, want %#x", i, got, want[i])
		}
	}
	if len(m.c.pages) != n/pageSize+1 {
		t.Fatalf("%d pages, want %d", len(m.c.pages), n/pageSize+1)
	}
	for k, p := range m.c.pages {
		if cap(p) != pageSize {
			t.Errorf("page %d: cap %d, want %d", k, cap(p), pageSize)
		}
		if k < len(m.c.pages)-1 && len(p) != pageSize {
			t.Errorf("page %d: len %d, want %d", k, len(p), pageSize)
		}
	}
	// Pages 1 and 2 come from one block, one after the other (what
	// makes the memo, once dropped, one hole per block), as do 3 to 6.
	for _, k := range []int{1, 3, 4, 5} {
		end := unsafe.Add(unsafe.Pointer(&m.c.pages[k][pageSize-1]), unsafe.Sizeof(uint32(0)))
		if end != unsafe.Pointer(&m.c.pages[k+1][0]) {
			t.Errorf("page %d does not follow page %d in memory", k+1, k)
		}
	}
}
