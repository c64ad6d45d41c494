package snapshot

import (
	"math/rand/v2"
	"testing"
)

// newFoldLazyVM is a decoder's state as lazyFrames meets it, for
// TestFoldLazy: a table of 400 frame memo ids over 20 frames (few ranks
// and flags, so that folds repeat), stacks that are lazy from the first,
// rows' stacks on a full page and a short one.
func newFoldLazyVM() *vm {
	v := &vm{snap: &Snapshot{}, rows: &entryStore{}}
	t := &v.snap.Stacks
	t.init()
	t.seed64, t.recentBits = 0x1234567, 6
	v.fold = &StackFold{Finish: func(flags, rank uint16, site FrameID) StackSummary {
		return StackSummary(flags)<<32 | StackSummary(rank)<<16 | StackSummary(site&0xffff) | 1<<50
	}}
	v.foldBuf = new([foldMax]FrameID)
	v.frameMemo = make([]uint64, 512)
	for id := 1; id < 400; id++ {
		f := uint64(id*7) % 20
		w := f%3 | (f%5)<<16 // flags, rank
		v.frameMemo[id] = w<<32 | (f + 1)
	}
	v.rows.stack.pages = [][]StackID{make([]StackID, pageSize), make([]StackID, 100)}
	return v
}

// TestFoldLazy runs lazyFrames' common case three ways on three decoder
// states kept equal: foldLazy (in WebAssembly the assembly), foldLazyGo,
// and foldScanGo then lazyRest (the Go path alone); where the first two
// decline, lazyRest goes on from their results. Lists are short or at
// foldMax, of BINGET and LONG_BINGET references, some met before (found
// in recent: no new stack), with folds met before or new; ended by
// APPENDS and SETITEMS, APPENDS and something else, APPENDS at the
// limit, or another opcode. Before each list the memo's last page is
// dense with room or full (at its page boundary), the budget's charge
// fits below its floor or not, the entry's MARK is there or not, the row
// is in the rows' pages or past them, the list's offset fits a lazy
// stack or not; the stacks pass several pages (their columns' room,
// roomTo). foldScan's results, the end, and every change to the stacks,
// memo, row, marks, opcode, position and budget must agree; foldLazy
// must both take lists and decline some.
func TestFoldLazy(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	vms := []*vm{newFoldLazyVM(), newFoldLazyVM(), newFoldLazyVM()}
	type kept struct {
		fold *StackFold
		buf  *[foldMax]FrameID
	}
	var bufs []kept
	for _, v := range vms {
		bufs = append(bufs, kept{v.fold, v.foldBuf})
	}
	untried, noBufs := 0, 0
	for _, v := range vms[1:] {
		v.snap.Stacks.seed = vms[0].snap.Stacks.seed // (the native hash's)
	}
	var lists [][]byte
	taken, declined := 0, 0
	steps := 3*pageSize + 3000
	for step := range steps {
		// The list: EMPTY_LIST MEMOIZE MARK at q, references, the end.
		d := make([]byte, r.IntN(40))
		q := len(d)
		d = append(d, opEmptyList, opMemoize, opMark)
		var refs []byte
		if len(lists) > 0 && r.IntN(8) == 0 {
			refs = lists[len(lists)-1-r.IntN(min(len(lists), 20))]
		} else {
			n := 1 + r.IntN(12)
			switch r.IntN(40) {
			case 0:
				n = 0
			case 1:
				n = foldMax - 2 + r.IntN(4)
			}
			for range n {
				id := 1 + r.IntN(399)
				if r.IntN(4) == 0 {
					refs = append(refs, opLongBinGet, byte(id), byte(id>>8), 0, 0)
				} else if id < 256 {
					refs = append(refs, opBinGet, byte(id))
				} else {
					refs = append(refs, opLongBinGet, byte(id), byte(id>>8), 0, 0)
				}
			}
			lists = append(lists, refs)
		}
		d = append(d, refs...)
		switch x := r.IntN(30); {
		case x == 0:
			d = append(d, opAppends) // at the limit
		case x == 1:
			d = append(d, opAppends, opNone, opStop, 0, 0, 0)
		case x == 2:
			d = append(d, opNone, opAppends, opSetItems, 0, 0, 0)
		default:
			d = append(d, opAppends, opSetItems, opStop, 0, 0, 0)
		}
		// The state around it, the same in each.
		memoLen := r.IntN(300)
		memoCap := memoLen + 1 + r.IntN(3)
		if r.IntN(8) == 0 {
			memoLen = memoCap // full: push's page boundary
		}
		spent := r.Int64N(1000)
		floor := spent + stackRecBytes + r.Int64N(200) - 8 // (below the charge: 1 in 25)
		marks := 1 + r.IntN(3)
		if r.IntN(16) == 0 {
			marks = 0
		}
		base := r.Int64N(1 << 30)
		if r.IntN(16) == 0 {
			base = 1<<lazyOffBits - r.Int64N(100)
		}
		row := r.IntN(pageSize + 100)
		if r.IntN(16) == 0 {
			row = pageSize + 100 + r.IntN(3)
			if r.IntN(2) == 0 {
				row = 2*pageSize + r.IntN(3)
			}
		}
		valid := marks > 0 && row < pageSize+100
		// entryRun's checks (entry): each fails now and then.
		entry := r.IntN(2) == 0
		cacheOff, cache, noFold, pipe := r.IntN(2) == 0, r.IntN(8) != 0, r.IntN(30) == 0, r.IntN(30) == 0
		lazyOK, rewritten, noBuf := r.IntN(30) != 0, r.IntN(30) == 0, r.IntN(30) == 0
		after := vms[0].snap.Stacks.heldFrames + 2 - r.IntN(40)
		objs, free := 1+r.IntN(3000), 0
		switch r.IntN(10) {
		case 0:
			objs = 1024 * (1 + r.IntN(3)) // a block's start
		case 1, 2:
			free = 1 + r.IntN(3)
		}
		freeLast := int32(r.IntN(1000))
		switch r.IntN(20) {
		case 0:
			freeLast = 1<<28 - int32(r.IntN(2))
		case 1:
			freeLast = -1
		}
		if r.IntN(20) == 0 {
			memoLen, memoCap = 1024, 1025
		}
		if r.IntN(20) == 0 {
			d[q+r.IntN(3)] = opNone
		}
		if r.IntN(40) == 0 {
			d = d[:q+r.IntN(4)] // the list's start cut off
		}
		type result struct {
			p, n, miss, end int
			fs              folded
			ok, fast        bool // fast: foldLazy took it
		}
		var res [3]result
		for i, v := range vms {
			page := make([]uint32, memoLen, memoCap)
			for j := range page {
				page[j] = uint32(j)
			}
			v.memo.c.pages, v.memo.n = [][]uint32{page}, memoLen
			v.budget = budget{spent: spent, floor: floor}
			v.marks = make([]int, marks)
			v.in.base, v.in.pos, v.op, v.opOff = base, 0, 0, 0
			v.cacheOff, v.stackCache, v.fold, v.pipe = cacheOff, nil, bufs[i].fold, nil
			if cache {
				v.stackCache = &stackCache{}
			}
			if noFold {
				v.fold = nil
			}
			if pipe {
				v.pipe = &stackPipe{}
			}
			v.lazyOK, v.memoRewritten, v.lazyAfter, v.foldBuf = lazyOK, rewritten, after, bufs[i].buf
			if noBuf {
				v.foldBuf = nil
			}
			v.objs, v.freeObjs = make([]obj, objs), make([]int32, free)
			if free > 0 {
				v.freeObjs[free-1] = freeLast
			}
			var rs result
			if i < 2 {
				f := foldLazy
				if i == 1 {
					f = foldLazyGo
				}
				if !entry && (noBuf || rewritten || noFold || len(d) < q+3) {
					continue // lazyFrames' callers check those first
				}
				rs.p, rs.n, rs.fs, rs.miss, rs.end = f(v, d, q, row, entry)
				rs.ok, rs.fast = rs.end > 0, rs.end > 0
			} else {
				switch {
				case !entry && (noBuf || rewritten || noFold || len(d) < q+3):
					continue
				case entry && !v.entryLazyReady(d, q):
					rs.miss = scanUntried
				case entry && v.foldBuf == nil:
					rs.miss = scanNoBuf
				default:
					rs.p, rs.n, rs.fs, rs.miss = foldScanGo(d, q+3, v.frameMemo, v.foldBuf, v.snap.Stacks.seed64)
				}
			}
			if !rs.ok && valid && rs.miss < 0 && rs.miss > scanUntried {
				end, ok, err := v.lazyRest(d, q, len(d), row, rs.p, rs.n, rs.fs, rs.miss)
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if ok {
					rs.end, rs.ok = end, true
				}
			}
			if !rs.ok {
				rs.end = 0
			}
			res[i] = rs
		}
		if res[0] != res[1] || res[0].p != res[2].p || res[0].n != res[2].n || res[0].fs != res[2].fs ||
			res[0].miss != res[2].miss || res[0].ok != res[2].ok || res[0].end != res[2].end {
			t.Fatalf("step %d: foldLazy %+v, foldLazyGo %+v, foldScanGo and lazyRest %+v", step, res[0], res[1], res[2])
		}
		if !valid && res[0].ok {
			t.Fatalf("step %d: took a list without its MARK or row: %+v", step, res[0])
		}
		ref := vms[2]
		for i, v := range vms[:2] {
			rt, vt := &ref.snap.Stacks, &v.snap.Stacks
			if vt.count != rt.count || vt.lazyFrom != rt.lazyFrom || len(vt.sumTab) != len(rt.sumTab) ||
				v.memo.n != ref.memo.n || len(v.marks) != len(ref.marks) || v.op != ref.op || v.opOff != ref.opOff ||
				v.in.pos != ref.in.pos || v.budget.spent != ref.budget.spent {
				t.Fatalf("step %d, vm %d: %d stacks from %d, %d summaries, memo %d, %d marks, op %q at %d, pos %d, spent %d; want %d from %d, %d, %d, %d, %q at %d, %d, %d",
					step, i, vt.count, vt.lazyFrom, len(vt.sumTab), v.memo.n, len(v.marks), v.op, v.opOff, v.in.pos, v.budget.spent,
					rt.count, rt.lazyFrom, len(rt.sumTab), ref.memo.n, len(ref.marks), ref.op, ref.opOff, ref.in.pos, ref.budget.spent)
			}
			for id := max(0, rt.count-2); id < rt.count; id++ {
				if vt.at.at(id) != rt.at.at(id) || vt.hashes.at(id) != rt.hashes.at(id) || vt.sum.at(id) != rt.sum.at(id) {
					t.Fatalf("step %d, vm %d: stack %d differs", step, i, id)
				}
			}
			for j, u := range ref.memo.c.pages[len(ref.memo.c.pages)-1] {
				if vp := v.memo.c.pages[len(v.memo.c.pages)-1]; j >= len(vp) || vp[j] != u {
					t.Fatalf("step %d, vm %d: memo's last page differs at %d", step, i, j)
				}
			}
			if valid && v.rows.stack.at(row) != ref.rows.stack.at(row) {
				t.Fatalf("step %d, vm %d: row %d's stack %d, want %d", step, i, row, v.rows.stack.at(row), ref.rows.stack.at(row))
			}
		}
		switch res[0].miss {
		case scanUntried:
			untried++
		case scanNoBuf:
			noBufs++
		}
		if res[0].fast {
			taken++
		} else if res[0].miss == scanEnd {
			declined++
		}
	}
	for i, v := range vms[:2] {
		rt, vt := &vms[2].snap.Stacks, &v.snap.Stacks
		for id := range rt.count {
			if vt.at.at(id) != rt.at.at(id) || vt.hashes.at(id) != rt.hashes.at(id) || vt.sum.at(id) != rt.sum.at(id) {
				t.Fatalf("vm %d: stack %d differs", i, id)
			}
		}
		for j := range rt.recent {
			if vt.recent[j] != rt.recent[j] {
				t.Fatalf("vm %d: recent slot %d differs", i, j)
			}
		}
		if rt.count < pageSize+1000 {
			t.Fatalf("only %d stacks: the columns' second page not reached", rt.count)
		}
	}
	if untried < steps/20 || noBufs == 0 {
		t.Fatalf("entryRun's checks: %d lists not tried, %d without foldBuf", untried, noBufs)
	}
	if taken < steps/4 || declined < steps/20 {
		t.Fatalf("foldLazy took %d lists and declined %d of %d", taken, declined, steps)
	}
	t.Logf("%d stacks; foldLazy took %d lists, declined %d, did not try %d, %d without foldBuf", vms[2].snap.Stacks.count, taken, declined, untried, noBufs)
}
