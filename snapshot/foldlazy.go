package snapshot

import "math"

// foldLazyGo is lazyFrames' common case in one call, for entryRun (entry:
// its checks first, entryLazyReady, then foldBuf and the stack count) or
// lazyFrames: foldScan on the frame
// list whose EMPTY_LIST is at q (dl is the input up to the limit; the
// frame table, buffer and seed are v's), then, where it read the list to
// its APPENDS, lazyEndGo. It returns foldScan's results and the position
// after the entry's SETITEMS, or end 0, having changed nothing but
// v.foldBuf, where lazyEndGo declines or foldScan stopped elsewhere
// (lazyFrames then goes on from foldScan's results). With entry, it
// returns miss scanUntried, having done nothing, where entryLazyReady is
// false, and scanNoBuf where v.foldBuf is nil or the stack's ID may not
// pack (lazyFrames is to try then); without, the caller checked those
// and that v.memoRewritten is false. In WebAssembly foldLazy
// is this function in assembly (foldlazy_wasm.s), natively it is this
// function.
func foldLazyGo(v *vm, dl []byte, q, row int, entry bool) (p, n int, fs folded, miss, end int) {
	if entry {
		if !v.entryLazyReady(dl, q) {
			return 0, 0, folded{}, scanUntried, 0
		}
		if v.foldBuf == nil || v.snap.Stacks.count >= 1<<27 {
			return 0, 0, folded{}, scanNoBuf, 0
		}
	}
	p, n, fs, miss = foldScanGo(dl, q+3, v.frameMemo, v.foldBuf, v.snap.Stacks.seed64)
	if miss == scanEnd {
		end = lazyEndGo(v, dl, q, p, n, row, fs)
	}
	return p, n, fs, miss, end
}

// lazyEndGo is lazyFrames' common case once foldScan has read the frame
// list: the list (EMPTY_LIST at q, its APPENDS at p, n frames, fs its
// fold, the hash not ended) is followed by SETITEMS, fits a lazy stack,
// and addLazyNewGo adds it; the memo's last page has room, the budget's
// charge stays below its floor, and the entry's row and MARK are there.
// It then does what lazyFrames does after (the stack charged, its memo
// slot pushed, the row's stack set, the MARK popped, SETITEMS run) and
// returns the position after SETITEMS. Otherwise it returns 0, having
// changed nothing: lazyFrames goes on as before. The caller has checked
// that the stack's ID packs (Stacks.count below 1<<27).
func lazyEndGo(v *vm, dl []byte, q, p, n, row int, fs folded) int {
	if n == 0 || p+1 >= len(dl) || dl[p+1] != opSetItems {
		return 0
	}
	start, size := v.in.base+int64(q), int64(p+1-q)
	if !lazyFits(start, size, n) {
		return 0
	}
	m, st, b := &v.memo, &v.rows.stack, &v.budget
	if len(v.marks) == 0 || !m.c.room() || b.spent+stackRecBytes > b.floor ||
		row < 0 || row>>pageBits >= len(st.pages) || row&pageMask >= len(st.pages[row>>pageBits]) {
		return 0
	}
	t := &v.snap.Stacks
	h := fs.h
	if foldedHash {
		h = xxEnd(h, n)
	} else {
		h = t.hash(v.foldBuf[:n])
	}
	id, ok := t.addLazyNewGo(h, lazyAt(start, int(size), n), foldKey(uint16(fs.all), uint16(fs.best>>16), fs.site))
	if !ok {
		return 0
	}
	b.spent += stackRecBytes // budget.charge, below its floor
	m.c.put(uint32(id)<<4 | uint32(kStackRef))
	m.n++
	st.set(row, id)
	v.marks = v.marks[:len(v.marks)-1]
	v.op, v.opOff = opSetItems, v.in.base+int64(p+1)
	v.in.pos = p + 2
	return p + 2
}

// entryLazyReady reports whether entryRun is to try the frame list whose
// EMPTY_LIST is at q (dl: the input up to the limit) as a lazy stack:
// entryFrames' checks where the stack cache is not consulted (off, or
// none), the list's start, and room for it as entryFrames would need it
// (a memo slot, an object slot, as in entryRun).
func (v *vm) entryLazyReady(dl []byte, q int) bool {
	if !(v.cacheOff || v.stackCache == nil) || v.fold == nil || v.pipe != nil || !v.lazyOK || v.memoRewritten ||
		v.snap.Stacks.held() < v.lazyAfter || q+3 >= len(dl) || v.memo.len()&1023 == 0 ||
		dl[q] != opEmptyList || dl[q+1] != opMemoize || dl[q+2] != opMark {
		return false
	}
	li := len(v.objs)
	if n := len(v.freeObjs); n > 0 {
		li = int(v.freeObjs[n-1])
	} else if len(v.objs) >= math.MaxInt32 || len(v.objs)&1023 == 0 {
		return false
	}
	return li >= 0 && li < 1<<28
}
