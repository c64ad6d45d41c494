package snapshot

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// cachedFramesState is what cachedFrames may change in a vm but the
// memo's pages, the rows' stacks and the stack cache's next (compared in
// place, for speed), copied.
type cachedFramesState struct {
	End                  int
	Objs                 []obj
	FreeObjs             []int32
	MemoLast             []uint32
	MemoPages, MemoN     int
	Marks                []int
	Op                   byte
	OpOff                int64
	Pos                  int
	Looks, Hits          int
	Last                 [2]int32
	ObjsCap, FreeObjsCap int
}

func cachedFramesStateOf(v *vm, end int) cachedFramesState {
	s := cachedFramesState{End: end, Objs: append([]obj(nil), v.objs...), FreeObjs: append([]int32(nil), v.freeObjs...),
		MemoLast: append([]uint32(nil), v.memo.c.pages[len(v.memo.c.pages)-1]...), MemoPages: len(v.memo.c.pages),
		MemoN: v.memo.n, Marks: append([]int(nil), v.marks...), Op: v.op, OpOff: v.opOff, Pos: v.in.pos,
		Looks: v.cacheLooks, Hits: v.cacheHits, ObjsCap: cap(v.objs), FreeObjsCap: cap(v.freeObjs)}
	if c := v.stackCache; c != nil {
		s.Last = c.last
	}
	return s
}

// TestCachedFrames runs entryFrames' common case on a file whose stacks
// repeat two ways on two decoder states kept equal: cachedFrames (in
// WebAssembly the assembly) and cachedFramesGo. Each frame list (after
// EMPTY_LIST MEMOIZE MARK) is a cached key, in a repeated sequence so that
// most are predicted, or that key with one byte changed anywhere, cut
// short by a frame, given a frame more, or not cached; its APPENDS is
// followed by SETITEMS or something else, or is the input's last byte.
// Before each list, now and then: no stack cache, the cache off, a memo
// slot stored twice, cacheLook's counts about to turn the cache off, the
// memo's last page full or at a block's start, no MARK or another on top,
// the row past the rows' pages, no free object (with or without room to
// append one, or the objects at a block's start), a free object slot that
// does not pack, another opening opcode.
// The end and every change must agree; where taken, the end must be past
// the SETITEMS and the row's stack, the memo slot and the object the
// key's stack; where the end is -1, ledHit must find no key.
func TestCachedFrames(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 8))
	frame := func(l []byte) []byte {
		if r.IntN(3) == 0 {
			return append(l, opLongBinGet, byte(r.IntN(256)), byte(r.IntN(256)), opAppends, 0)
		}
		return append(l, opBinGet, byte(r.IntN(256)))
	}
	var keys [][]byte
	seen := map[string]bool{}
	for len(keys) < 300 {
		l := []byte{opBinGet, 1, opBinGet, 2} // the allocator's frames
		for range 1 + r.IntN(60) {
			l = frame(l)
		}
		if !seen[string(l)] {
			seen[string(l)] = true
			keys = append(keys, l)
		}
	}
	ids := func(i int) StackID {
		if i == 7 {
			return 1 << 28 // does not pack
		}
		return StackID(i * 3)
	}
	newVM := func() *vm {
		v := &vm{snap: &Snapshot{}, rows: &entryStore{}}
		v.stackCache = newStackCache()
		for i, k := range keys {
			if i%10 != 9 {
				v.stackCache.put(string(k), ids(i))
			}
		}
		v.memo.c.pages = [][]uint32{make([]uint32, pageSize), make([]uint32, 5, pageSize)}
		v.memo.n = pageSize + 5
		v.objs = make([]obj, 7, 4000)
		v.freeObjs = append(make([]int32, 0, 40), 2, 5)
		v.rows.stack.pages = [][]StackID{make([]StackID, pageSize), make([]StackID, 100)}
		v.in.base = 1 << 30
		return v
	}
	vms := []*vm{newVM(), newVM()}
	ways := []func(v *vm, dl []byte, q, ns, row int) int{cachedFrames, cachedFramesGo}
	taken, declined, missed, predicted := 0, 0, 0, 0
	seq := make([]int, 120)
	for i := range seq {
		seq[i] = r.IntN(len(keys))
	}
	for step := range 6000 {
		ki := seq[step%len(seq)]
		k := keys[ki]
		list := append([]byte(nil), k...)
		switch r.IntN(12) {
		case 0:
			list[r.IntN(len(list))] ^= byte(1 + r.IntN(255)) // one byte changed
		case 1:
			list = list[:len(list)-2] // cut short
		case 2:
			list = frame(list)
		case 3:
			list = keys[r.IntN(len(keys))/10*10+9] // not cached
		}
		q := 3 + r.IntN(4)
		d := make([]byte, q, q+len(list)+20)
		d = append(d, opEmptyList, opMemoize, opMark)
		d = append(d, list...)
		d = append(d, opAppends)
		switch r.IntN(10) {
		case 0:
			d = append(d, opBinGet, 3)
		case 1: // the APPENDS last
		default:
			d = append(d, opSetItems, opEmptyDict)
		}
		if r.IntN(40) == 0 {
			d[q] = opEmptyDict
		}
		ns := 1 + r.IntN(3)
		row := r.IntN(pageSize + 100)
		change := r.IntN(60)
		if change == 0 {
			row = pageSize + 100 + r.IntN(10)
		}
		var saved [2]*stackCache
		addFree := r.IntN(2) == 0
		for i, v := range vms {
			v.op, v.opOff, v.in.pos = opMark, 0, 0
			v.marks = append(v.marks[:0], 0, ns)
			v.cacheOff, v.memoRewritten, v.cacheLooks, v.cacheHits = false, false, 1000, 900
			last := &v.memo.c.pages[len(v.memo.c.pages)-1]
			if len(*last) >= 300 || len(*last)&1023 == 0 {
				*last = (*last)[:5]
			}
			v.memo.n = pageSize + len(*last)
			if len(v.objs) > 3000 || len(v.objs)&1023 == 0 || cap(v.freeObjs) == 0 {
				v.objs, v.freeObjs = v.objs[:7], append(make([]int32, 0, 40), 2, 5)
			}
			if n := len(v.freeObjs); n > 0 && int(v.freeObjs[n-1]) >= len(v.objs) {
				v.freeObjs = v.freeObjs[:n-1]
			}
			if len(v.freeObjs) == 0 && addFree {
				v.freeObjs = append(v.freeObjs, int32(len(v.objs)-1))
			}
			switch change {
			case 1:
				saved[i], v.stackCache = v.stackCache, nil
			case 2:
				v.cacheOff = true
			case 3:
				v.memoRewritten = true
			case 4:
				v.cacheLooks, v.cacheHits = stackCacheMax+40, (stackCacheMax+40)/stackCacheMiss-1
			case 5: // one hit more: still consulted
				v.cacheLooks, v.cacheHits = stackCacheMax+40, (stackCacheMax+40)/stackCacheMiss
			case 6:
				*last = (*last)[:cap(*last)]
			case 7:
				*last = (*last)[:1024-pageSize%1024]
				v.memo.n = pageSize + len(*last)
			case 8:
				v.marks = v.marks[:0]
			case 9:
				v.marks[1]++
			case 10, 11:
				v.freeObjs = v.freeObjs[:0]
			case 12:
				v.objs, v.freeObjs = v.objs[:cap(v.objs)], v.freeObjs[:0]
			case 13:
				v.objs, v.freeObjs = v.objs[:1024], v.freeObjs[:0]
			case 14:
				v.freeObjs = v.freeObjs[:0:0]
			case 15:
				v.freeObjs = append(v.freeObjs, 1<<28) // an object slot that does not pack
			}
		}
		var got [2]cachedFramesState
		for i, v := range vms {
			if c := v.stackCache; c != nil && i == 0 {
				if _, pi := c.predicted(d[q+3:]); pi >= 0 {
					predicted++
				}
			}
			end := ways[i](v, d, q, ns, row)
			got[i] = cachedFramesStateOf(v, end)
			if saved[i] != nil {
				v.stackCache = saved[i]
			}
		}
		same := slices.Equal(vms[0].memo.c.pages[0], vms[1].memo.c.pages[0])
		for p := range vms[0].rows.stack.pages {
			same = same && slices.Equal(vms[0].rows.stack.pages[p], vms[1].rows.stack.pages[p])
		}
		if c0, c1 := vms[0].stackCache, vms[1].stackCache; c0 != nil && c1 != nil {
			same = same && slices.Equal(c0.next, c1.next)
		}
		if !same || !reflect.DeepEqual(got[0], got[1]) {
			t.Fatalf("step %d, change %d, list %q, input %q: cachedFrames and cachedFramesGo differ (pages the same: %v):\n%s", step, change, list, d, same, diffState(got[0], got[1]))
		}
		if end := got[1].End; end > 0 {
			taken++
			id := ids(ki)
			v := vms[1]
			p := q + 3 + len(k)
			if string(list) != string(k) || end != p+2 || d[p] != opAppends || d[p+1] != opSetItems ||
				v.rows.stack.at(row) != id || v.memo.c.pages[1][len(v.memo.c.pages[1])-1] != uint32(id)<<4|uint32(kStackRef) ||
				v.op != opSetItems || v.opOff != v.in.base+int64(p+1) || v.in.pos != p+2 || len(v.marks) != 1 {
				t.Fatalf("step %d, list %q: taken, end %d, but not as key %d (stack %d)", step, list, end, ki, id)
			}
		} else {
			declined++
			if end < 0 {
				missed++
				if _, i := ledFindGo(vms[1].stackCache, d[q+3:]); i >= 0 {
					t.Fatalf("step %d, list %q: end -1, but ledHit finds key %d", step, list, i)
				}
			}
			for _, v := range vms { // as entryFrames' cacheLook then would
				if v.stackCache != nil && change != 1 {
					v.stackCache.find(d[q+3:])
				}
			}
		}
	}
	t.Logf("%d taken, %d declined (%d found no key), %d predicted", taken, declined, missed, predicted)
	if taken < 2000 || declined < 1500 || missed < 500 || predicted < 1000 {
		t.Errorf("%d taken, %d declined (%d found no key), %d predicted: the steps miss the cases", taken, declined, missed, predicted)
	}
}

func diffState(a, b cachedFramesState) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	s := ""
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			fa, fb := fmt.Sprint(va.Field(i).Interface()), fmt.Sprint(vb.Field(i).Interface())
			s += fmt.Sprintf("%s: %.300s\n   vs %.300s\n", va.Type().Field(i).Name, fa, fb)
		}
	}
	return s
}
