package snapshot

import "math"

// cachedFramesGo is entryFrames' common case on a file whose stacks
// repeat, in one call: the frame list whose EMPTY_LIST is at q (dl is the
// input up to the limit) is a key of the stack cache found by ledHit, and
// SETITEMS follows its APPENDS. It then does what entryFrames does there
// (cacheLook's counts; the list's object slot an oStack of that stack, its
// memo slot the stack, the MARK popped, SETITEMS run, the row's stack set)
// and returns the position after SETITEMS. Otherwise it returns 0, having
// changed nothing, and entryFrames goes on as before: where entryFrames
// would not consult the cache or not take this path, and where this path
// would need more than plain stores (the objects or the memo growing a
// block, a stack ID that does not pack, cacheLook about to turn the cache
// off, the note that makes stackCache.next); -1 where it got as far as
// ledHit's search and that found no key (cacheLook then need not try
// ledHit, which would find none). ns is the length of the VM's
// stack, row the entry's row. In WebAssembly cachedFrames is this
// function in assembly (cachedframes_wasm.s), natively it is this
// function.
func cachedFramesGo(v *vm, dl []byte, q, ns, row int) int {
	c, m, st := v.stackCache, &v.memo, &v.rows.stack
	if c == nil || v.cacheOff || v.memoRewritten || v.cacheLooks > stackCacheMax && v.cacheHits < v.cacheLooks/stackCacheMiss ||
		q+3 >= len(dl) || dl[q] != opEmptyList || dl[q+1] != opMemoize || dl[q+2] != opMark ||
		m.len()&1023 == 0 || !m.c.room() || len(v.marks) == 0 || v.marks[len(v.marks)-1] != ns ||
		row < 0 || row>>pageBits >= len(st.pages) || row&pageMask >= len(st.pages[row>>pageBits]) {
		return 0
	}
	oi := len(v.objs)
	if n := len(v.freeObjs); n > 0 {
		oi = int(v.freeObjs[n-1])
	} else if len(v.objs) >= math.MaxInt32 || len(v.objs)&1023 == 0 {
		return 0
	}
	if oi >= len(v.objs) && (len(v.objs) == cap(v.objs) || len(v.freeObjs) == cap(v.freeObjs)) || oi >= 1<<28 {
		return 0
	}
	rest := dl[q+3:]
	n, i := ledFindGo(c, rest)
	if i < 0 {
		return -1 // ledHit would not find it either
	}
	if n+1 >= len(rest) || rest[n+1] != opSetItems || uint32(c.ids[i]) >= 1<<28 || !c.ledNote(i) {
		return 0
	}
	id := c.ids[i]
	v.cacheLooks++
	v.cacheHits++
	o := obj{kind: oStack, idx: int32(id), memo: shared}
	v.setFreeObj(oi, o)
	m.c.put(uint32(id)<<4 | uint32(kStackRef))
	m.n++
	v.marks = v.marks[:len(v.marks)-1]
	end := q + 3 + n // the APPENDS
	v.op, v.opOff = opSetItems, v.in.base+int64(end+1)
	v.in.pos = end + 2
	st.set(row, id)
	return end + 2
}

// setFreeObj sets object slot oi, the last free one or the one after
// objs, to o, and leaves it free: a list of frames known to the stack
// cache, made and released in one go (its memo slot holds the stack).
func (v *vm) setFreeObj(oi int, o obj) {
	if oi < len(v.objs) {
		v.objs[oi] = o
		return
	}
	v.objs = append(v.objs, o)
	v.freeObjs = append(v.freeObjs, int32(oi))
}
