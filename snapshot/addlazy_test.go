package snapshot

import (
	"math/rand/v2"
	"testing"
)

// TestAddLazy adds lazy stacks to one table with addLazy and to another
// with recentLazy then, where it finds none, pushLazy (the straightforward
// way), over several pages of stacks and through a renumber that merges
// most of them: hashes that come back soon (found in recent) and late
// (recent's slot taken since), the same hash with another depth, summaries
// that repeat and new ones (sumTab grows), and the zero summary. Both
// tables must give the same IDs and whether each is new, and end with the
// same records, summaries and recent table; finish must be called for new
// stacks only, at most once each, and less often than stacks are added
// (a fold met before takes its summary's index from folds).
func TestAddLazy(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var fast, plain Stacks
	fast.init()
	plain.init()
	fast.recentBits, plain.recentBits = 6, 6
	calls, fastCalls := 0, 0 // finish's calls, addLazy's
	finish := func(flags, rank uint16, site FrameID) StackSummary {
		calls++
		return StackSummary(flags)<<32 | StackSummary(rank)<<16 | StackSummary(site&0xffff)
	}
	var hs []uint64
	add := func(k int) {
		for i := range k {
			var h uint64
			n := 1 + r.IntN(40)
			switch x := r.IntN(10); {
			case x < 3 && len(hs) > 0:
				h = hs[len(hs)-1-r.IntN(min(len(hs), 4))] // soon
			case x < 4 && len(hs) > 0:
				h = hs[r.IntN(len(hs))] // late, or soon
			default:
				h = r.Uint64()
			}
			if r.IntN(20) == 0 {
				n = 41 + r.IntN(3) // a depth the hash may not have had
			}
			hs = append(hs, h)
			flags, rank, site := uint16(r.IntN(4)), uint16(r.IntN(1+i%300)), FrameID(r.IntN(5))
			if r.IntN(30) == 0 {
				flags, rank, site = 0, 0, 0 // the zero summary
			}
			at := lazyAt(int64(i)*100, 99, n)
			before := calls
			id, added := fast.addLazy(h, at, n, finish, flags, rank, site)
			if calls > before+1 || !added && calls != before {
				t.Fatalf("stack %d: added %v, finish called %d times", i, added, calls-before)
			}
			fastCalls += calls - before
			pid, pfound := plain.recentLazy(h, n)
			if !pfound {
				pid = plain.pushLazy(h, at, finish(flags, rank, site))
			}
			if id != pid || added == pfound {
				t.Fatalf("stack %d: addLazy gave %d (new %v), recentLazy/pushLazy %d (found %v)", i, id, added, pid, pfound)
			}
		}
	}
	check := func(when string) {
		if fast.count != plain.count || fast.lazyFrom != plain.lazyFrom || len(fast.sumTab) != len(plain.sumTab) {
			t.Fatalf("%s: %d stacks from %d, %d summaries; want %d from %d, %d", when,
				fast.count, fast.lazyFrom, len(fast.sumTab), plain.count, plain.lazyFrom, len(plain.sumTab))
		}
		for id := range fast.count {
			if fast.at.at(id) != plain.at.at(id) || fast.hashes.at(id) != plain.hashes.at(id) ||
				fast.Summary(StackID(id)) != plain.Summary(StackID(id)) || fast.sum.at(id) != plain.sum.at(id) {
				t.Fatalf("%s: stack %d differs", when, id)
			}
		}
		for i := range fast.recent {
			if fast.recent[i] != plain.recent[i] {
				t.Fatalf("%s: recent slot %d is %x, want %x", when, i, fast.recent[i], plain.recent[i])
			}
		}
	}
	add(3*pageSize + 500)
	check("added")
	if added := fast.count - int(fast.lazyFrom); fastCalls >= added {
		t.Fatalf("finish called %d times for %d new stacks: folds never used", fastCalls, added)
	}
	// Merge all but one stack in 8 into the first lazy one; both tables
	// shrink to a fraction of their pages and drop recent.
	from := int(fast.lazyFrom)
	rep := mergeMost(from, fast.count)
	fast.renumber(append([]StackID(nil), rep...), from)
	plain.renumber(rep, from)
	check("renumbered")
	add(2*pageSize + 300)
	check("added again")
}

// mergeMost is a renumbering of the stacks from ID from to count that
// merges all but one in 8 into the first of them.
func mergeMost(from, count int) []StackID {
	rep := make([]StackID, count-from)
	for id := from; id < count; id++ {
		rep[id-from] = StackID(from)
		if (id-from)%8 == 0 {
			rep[id-from] = StackID(id)
		}
	}
	return rep
}

// TestAddLazyNew adds lazy stacks to three tables: one through addLazyNew
// (in WebAssembly the assembly) and, where it declines, addLazy; one the
// same way through addLazyNewGo; one through addLazy alone. Hashes repeat
// soon and late, some share recent's slot and their low 32 bits with an
// earlier one but are other stacks, folds repeat (their summary's index
// in folds) or are new; the summary column is narrow or wide, and a
// renumber that merges most stacks (no room below roomTo then) comes
// between two runs. The IDs, whether each is new, addLazyNew's and
// addLazyNewGo's answers, and the tables' records, summaries and recent
// slots must agree; addLazyNew must both take stacks and decline some.
func TestAddLazyNew(t *testing.T) {
	for _, wide := range []bool{false, true} {
		r := rand.New(rand.NewPCG(9, 10))
		var asm, gof, ref Stacks
		tabs := []*Stacks{&asm, &gof, &ref}
		for _, s := range tabs {
			s.init()
			s.recentBits = 6
			if wide {
				s.sum.widen()
			}
		}
		finish := func(flags, rank uint16, site FrameID) StackSummary {
			return StackSummary(flags)<<32 | StackSummary(rank)<<16 | StackSummary(site&0xffff) | 1<<50
		}
		var hs []uint64
		taken, declined := 0, 0
		add := func(k int) {
			for i := range k {
				h := r.Uint64()
				n := 1 + r.IntN(40)
				switch x := r.IntN(10); {
				case x < 2 && len(hs) > 0:
					h = hs[len(hs)-1-r.IntN(min(len(hs), 4))] // soon
				case x < 3 && len(hs) > 0:
					h = hs[r.IntN(len(hs))] // late, or soon
				case x < 4 && len(hs) > 0:
					h = hs[len(hs)-1-r.IntN(min(len(hs), 4))] ^ 1<<(32+r.IntN(26)) // recent's slot, low bits: another stack
				}
				hs = append(hs, h)
				flags, rank, site := uint16(r.IntN(3)), uint16(r.IntN(4)), FrameID(r.IntN(20))
				if r.IntN(8) == 0 {
					site = FrameID(r.IntN(1 << 20)) // a fold not met before
				}
				at := lazyAt(int64(i)*100, 99, n)
				key := foldKey(flags, rank, site)
				id, ok := addLazyNew(&asm, h, at, key)
				id2, gok := gof.addLazyNewGo(h, at, key)
				if ok != gok || ok && id != id2 {
					t.Fatalf("wide %v, stack %d: addLazyNew %d %v, addLazyNewGo %d %v", wide, i, id, ok, id2, gok)
				}
				added := ok
				if ok {
					taken++
				} else {
					declined++
					id, added = asm.addLazy(h, at, n, finish, flags, rank, site)
					id2, _ = gof.addLazy(h, at, n, finish, flags, rank, site)
				}
				rid, radded := ref.addLazy(h, at, n, finish, flags, rank, site)
				if id != rid || id2 != rid || added != radded {
					t.Fatalf("wide %v, stack %d: %d (new %v) and %d, addLazy alone %d (new %v)", wide, i, id, added, id2, rid, radded)
				}
			}
		}
		check := func(when string) {
			for _, s := range tabs[:2] {
				if s.count != ref.count || s.lazyFrom != ref.lazyFrom || len(s.sumTab) != len(ref.sumTab) || s.sum.isWide != wide {
					t.Fatalf("wide %v, %s: %d stacks from %d, %d summaries; want %d from %d, %d", wide, when,
						s.count, s.lazyFrom, len(s.sumTab), ref.count, ref.lazyFrom, len(ref.sumTab))
				}
				for id := range ref.count {
					if s.at.at(id) != ref.at.at(id) || s.hashes.at(id) != ref.hashes.at(id) ||
						s.sum.at(id) != ref.sum.at(id) || s.Summary(StackID(id)) != ref.Summary(StackID(id)) {
						t.Fatalf("wide %v, %s: stack %d differs", wide, when, id)
					}
				}
				for i := range ref.recent {
					if s.recent[i] != ref.recent[i] {
						t.Fatalf("wide %v, %s: recent slot %d is %x, want %x", wide, when, i, s.recent[i], ref.recent[i])
					}
				}
			}
		}
		add(3*pageSize + 500)
		check("added")
		from := int(ref.lazyFrom)
		rep := mergeMost(from, ref.count)
		for _, s := range tabs {
			s.renumber(append([]StackID(nil), rep...), from)
		}
		check("renumbered")
		add(2*pageSize + 300)
		check("added again")
		if taken < pageSize || declined < pageSize/4 {
			t.Fatalf("wide %v: addLazyNew took %d stacks and declined %d", wide, taken, declined)
		}
	}
}
