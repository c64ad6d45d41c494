package snapshot

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// releasePlain is what appendItems did for each trace entry appended,
// written plainly: the common case of releasing the entry dict of row end
// (see releaseEntriesGo), or the count of those done at the first that is
// not.
func releasePlain(items []val, objs []obj, pages [][]uint32, memoLen int, free []int32, end int32) int {
	for i, it := range items {
		if len(free) == cap(free) || it.k != kObj || it.n < 0 || it.n >= int64(len(objs)) {
			return i
		}
		o := &objs[it.n]
		if o.kind != oEntry || o.idx != end || end >= 1<<28 {
			return i
		}
		m := int(o.memo)
		if m < 0 || m >= memoLen || m/pageSize >= len(pages) || m%pageSize >= len(pages[m/pageSize]) ||
			pages[m/pageSize][m%pageSize] == memoPacked {
			return i
		}
		pages[m/pageSize][m%pageSize] = uint32(end)<<4 | uint32(kRow)
		o.memo = shared
		free = append(free, int32(it.n))
		end++
	}
	return len(items)
}

// TestReleaseEntries checks releaseEntries (in WebAssembly assembly) and
// releaseEntriesGo against releasePlain on batches of entries whose
// release stops somewhere, for each reason it may stop: every object,
// memo page and free place must come out the same.
func TestReleaseEntries(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 7))
	for k := range 3000 {
		// Two memo pages, the second short; the first maybe packed.
		pages := [][]uint32{make([]uint32, pageSize), make([]uint32, 1+r.IntN(pageSize))}
		for _, p := range pages {
			for i := range p {
				p[i] = r.Uint32()
			}
		}
		if r.IntN(8) == 0 {
			for i := range pages[0] {
				pages[0][i] = memoPacked
			}
		}
		memoLen := pageSize + len(pages[1])
		if r.IntN(8) == 0 {
			memoLen -= r.IntN(memoLen)
		}
		end := int32(r.IntN(1 << 20))
		if r.IntN(8) == 0 {
			end = 1<<28 - int32(r.IntN(40))
		}
		n := r.IntN(60)
		objs := make([]obj, n+r.IntN(20))
		for i := range objs {
			objs[i] = obj{idx: int32(r.IntN(1 << 20)), kind: okind(r.IntN(int(oHist) + 1)), memo: int32(r.IntN(memoLen))}
		}
		items := make([]val, n)
		perm := r.Perm(len(objs))
		for i := range items {
			// Mostly the entry dict of row end+i; one in 8 batches
			// has one thing off at a random place.
			oi := perm[i]
			objs[oi] = obj{idx: end + int32(i), kind: oEntry, memo: int32(r.IntN(memoLen))}
			items[i] = val{k: kObj, n: int64(oi)}
		}
		if n > 0 && r.IntN(2) == 0 {
			i := r.IntN(n)
			o := &objs[items[i].n]
			switch r.IntN(10) {
			case 0:
				items[i].k = kStr
			case 1:
				items[i].n = int64(len(objs) + r.IntN(3))
			case 2:
				items[i].n = -1 - int64(r.IntN(3))
			case 3:
				o.kind = oBlock
			case 4:
				o.idx++
			case 5:
				o.memo = -1
			case 6:
				o.memo = shared
			case 7:
				o.memo = int32(memoLen + r.IntN(3))
			case 8:
				pages[o.memo/pageSize][o.memo%pageSize] = memoPacked
			case 9:
				items[i] = items[r.IntN(n)] // the same dict twice
			}
		}
		nf := r.IntN(5)
		free := make([]int32, nf, nf+r.IntN(80))
		for i := range free[:cap(free)] {
			free[:cap(free)][i] = int32(r.IntN(1000))
		}

		type state struct {
			pages [][]uint32
			objs  []obj
			free  []int32
		}
		clone := func() state {
			s := state{objs: slices.Clone(objs), free: slices.Clone(free[:cap(free)])[:len(free)]}
			for _, p := range pages {
				s.pages = append(s.pages, slices.Clone(p))
			}
			return s
		}
		want, got, gotGo := clone(), clone(), clone()
		wn := releasePlain(items, want.objs, want.pages, memoLen, want.free, end)
		gn := releaseEntries(items, got.objs, got.pages, memoLen, got.free, end)
		gon := releaseEntriesGo(items, gotGo.objs, gotGo.pages, memoLen, gotGo.free, end)
		for _, c := range []struct {
			name string
			n    int
			s    state
		}{{"releaseEntries", gn, got}, {"releaseEntriesGo", gon, gotGo}} {
			if c.n != wn {
				t.Fatalf("batch %d (%d items from row %d): %s released %d, want %d", k, n, end, c.name, c.n, wn)
			}
			if !slices.Equal(c.s.objs, want.objs) || !slices.Equal(c.s.free[:cap(c.s.free)], want.free[:cap(want.free)]) {
				t.Fatalf("batch %d: %s left objects or free places other than releasePlain", k, c.name)
			}
			for pi := range pages {
				if !slices.Equal(c.s.pages[pi], want.pages[pi]) {
					t.Fatalf("batch %d: %s left memo page %d other than releasePlain", k, c.name, pi)
				}
			}
		}
	}
}
