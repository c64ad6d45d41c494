package snapshot

// releaseEntriesGo releases, in order, the trace-entry dicts items that
// APPENDS adds to their trace list as rows end, end+1, … (appendItems), in
// the common case: an entry dict (objs) of that row whose memo slot is
// dense, below memoLen (pages are the memo's pages); the slot then holds
// the row (kRow), the dict is marked shared and its index goes to free's
// room, past its length. It returns how many it released: it stops at the
// first item that is anything else, at a row of 2^28 or more, and when
// free has no room left; appendItems does the rest as before.
//
// In WebAssembly releaseEntries is this in assembly (release_wasm.s): Go's
// code for the loop cost ~186 x86 instructions an entry, most of them V8
// moving the function's values around its dispatch loop (see
// docs/snapshot.md).
func releaseEntriesGo(items []val, objs []obj, pages [][]uint32, memoLen int, free []int32, end int32) int {
	room := free[len(free):cap(free)]
	for i, it := range items {
		if i == len(room) || it.k != kObj || uint64(it.n) >= uint64(len(objs)) || end >= 1<<28 {
			return i
		}
		o := &objs[it.n]
		m := int(o.memo)
		if o.kind != oEntry || o.idx != end || m < 0 || m >= memoLen || m>>pageBits >= len(pages) {
			return i
		}
		pg := pages[m>>pageBits]
		if m&pageMask >= len(pg) || pg[m&pageMask] == memoPacked {
			return i
		}
		pg[m&pageMask] = uint32(end)<<4 | uint32(kRow)
		o.memo = shared
		room[i] = int32(it.n)
		end++
	}
	return len(items)
}
