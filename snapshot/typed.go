package snapshot

import (
	"math"
	"unsafe"
)

// appendItems appends items to the list l (APPEND, APPENDS, LIST).
func (v *vm) appendItems(l val, items []val) error {
	if l.k != kObj {
		return v.corrupt("APPEND to a %s, not a list", v.typeName(l))
	}
	o := &v.objs[l.n]
	if len(items) == 0 {
		if o.kind == oListFresh || o.kind == oGenList || o.kind >= oFramesB {
			return nil
		}
		return v.corrupt("APPEND to a %s, not a list", v.typeName(l))
	}
	if o.kind == oListFresh {
		if !v.typed {
			return v.toGenList(o, items)
		}
		first := items[0]
		fk := okind(255)
		if first.k == kObj {
			fk = v.objs[first.n].kind
		}
		switch fk {
		case oFrame, oFrameB:
			o.kind, o.idx = oFramesB, v.newBuilder(v.listStart(o.idx, v.in.abs()))
		case oEntry, oBlock, oSegment, oHist:
			start := v.objs[first.n].idx
			v.ranges = append(v.ranges, rng{start: start, end: start})
			o.kind, o.idx = oEntries+(fk-oEntry), int32(len(v.ranges)-1)
		default:
			return v.toGenList(o, items)
		}
	}
	switch o.kind {
	case oGenList:
		if err := v.chargeItems(items); err != nil {
			return err
		}
		v.share(items...)
		g := &v.gens[o.idx]
		g.items = append(g.items, items...)
		return nil
	case oFramesB:
		b := v.builder(o.idx)
		for i, it := range items {
			if it.k != kObj {
				if err := v.materialize(o); err != nil {
					return err
				}
				return v.appendItems(l, items[i:])
			}
			fo := &v.objs[it.n]
			switch fo.kind {
			case oFrameB:
				fo.kind, fo.idx = oFrame, int32(v.frame(v.fbuild[fo.idx]))
				b.inline = true
			case oFrame:
			default:
				if err := v.materialize(o); err != nil {
					return err
				}
				return v.appendItems(l, items[i:])
			}
			b.ids = append(b.ids, FrameID(fo.idx))
		}
		b.end = v.in.abs()
		return nil
	case oEntries, oBlocks, oSegments, oHists:
		r := &v.ranges[o.idx]
		want := oEntry + (o.kind - oEntries)
		for i := 0; i < len(items); i++ {
			if want == oEntry {
				// The entries' common case, as many as there are
				// (in WebAssembly in assembly: a batch of a trace
				// list is a thousand entries).
				n := releaseEntries(items[i:], v.objs, v.memo.c.pages, v.memo.len(), v.freeObjs, r.end)
				v.freeObjs = v.freeObjs[:len(v.freeObjs)+n]
				r.end += int32(n)
				if i += n; i == len(items) {
					break
				}
			}
			it := items[i]
			if it.k != kObj || v.objs[it.n].kind != want || v.objs[it.n].idx != r.end {
				if err := v.materialize(&v.objs[l.n]); err != nil {
					return err
				}
				return v.appendItems(l, items[i:])
			}
			if want == oEntry {
				// The entry is in its trace now; its dict is used up:
				// release, its common case written out (a dense memo
				// slot, a row that packs) for the entries
				// releaseEntries leaves (freeObjs full).
				eo := &v.objs[it.n]
				if m := int(eo.memo); m >= 0 && m < v.memo.len() && r.end < 1<<28 {
					if pg := v.memo.c.pages[m>>pageBits]; pg[m&pageMask] != memoPacked {
						pg[m&pageMask] = uint32(r.end)<<4 | uint32(kRow)
						eo.memo = shared
						v.freeObjs = append(v.freeObjs, int32(it.n))
						r.end++
						continue
					}
				}
				v.release(it, val{k: kRow, n: int64(r.end)})
			}
			r.end++
		}
		if v.partList == l.n+1 {
			return v.partBatch()
		}
		return nil
	case oStack:
		if err := v.materialize(o); err != nil {
			return err
		}
		return v.appendItems(l, items)
	}
	return v.corrupt("APPEND to a %s, not a list", v.typeName(l))
}

// chargeItems charges items added to a generic list: a trace entry as the
// row it will be copied to if the list is a trace, anything else as a
// generic item.
func (v *vm) chargeItems(items []val) error {
	n := int64(0)
	for _, it := range items {
		if it.k == kObj && v.objs[it.n].kind == oEntry {
			n += entryCost
		} else {
			n += genItemBytes
		}
	}
	return v.budget.charge(n, v)
}

func (v *vm) toGenList(o *obj, items []val) error {
	if err := v.chargeItems(items); err != nil {
		return err
	}
	v.share(items...)
	v.gens = append(v.gens, gen{items: append([]val(nil), items...)})
	o.kind, o.idx = oGenList, int32(len(v.gens)-1)
	return nil
}

// listStart turns a fresh list's idx (its EMPTY_LIST offset mod 2^31, or
// -1) into the offset, assuming the list started less than 2 GiB before
// offset cur.
func (v *vm) listStart(idx int32, cur int64) int64 {
	if idx < 0 {
		return -1
	}
	return cur - ((cur - int64(idx)) & math.MaxInt32)
}

func (v *vm) newBuilder(start int64) int32 {
	if n := len(v.freeB); n > 0 {
		i := v.freeB[n-1]
		v.freeB = v.freeB[:n-1]
		v.builders[i] = builder{ids: v.builders[i].ids[:0], start: start, known: NoStack}
		return i
	}
	v.builders = append(v.builders, builder{ids: make([]FrameID, 0, 32), start: start, known: NoStack})
	return int32(len(v.builders) - 1)
}

// frame interns a frame.
func (v *vm) frame(f Frame) FrameID {
	if id, ok := v.frameIDs[f]; ok {
		return id
	}
	id := FrameID(len(v.snap.Frames))
	v.snap.Frames = append(v.snap.Frames, f)
	v.frameIDs[f] = id
	return id
}

// materialize turns a typed list into a generic list of item references.
// A lazy stack is read again from the input (a file of crafted references
// can use one as a list); that fails only when the input cannot be read.
func (v *vm) materialize(o *obj) error {
	var items []val
	add := func(k okind, idx int32) {
		v.objs = append(v.objs, obj{kind: k, idx: idx, memo: shared})
		items = append(items, val{k: kObj, n: int64(len(v.objs) - 1)})
	}
	switch o.kind {
	case oFramesB:
		for _, f := range v.builder(o.idx).ids {
			add(oFrame, int32(f))
		}
		v.freeB = append(v.freeB, o.idx)
	case oStack:
		v.syncStacks()
		t, id := &v.snap.Stacks, StackID(o.idx)
		var st Stack
		var err error
		if t.Lazy(id) && t.src == nil {
			if v.lazySrc == nil {
				return v.corrupt("a frame list used as a list cannot be read again")
			}
			st, err = v.source(&Options{Source: v.lazySrc}).read(t.at.at(int(id)), t.Summary(id))
		} else {
			st, err = t.Frames(id)
		}
		if err != nil {
			return v.fail(ErrTruncated, "%v", err)
		}
		for _, f := range st {
			add(oFrame, int32(f))
		}
	case oEntries, oBlocks, oSegments, oHists:
		r := v.ranges[o.idx]
		for i := r.start; i < r.end; i++ {
			add(oEntry+(o.kind-oEntries), i)
		}
	}
	v.gens = append(v.gens, gen{items: items})
	o.kind, o.idx = oGenList, int32(len(v.gens)-1)
	return nil
}

// setItems sets key/value pairs (interleaved) in the dict d.
func (v *vm) setItems(d val, items []val) error {
	if d.k != kObj {
		return v.corrupt("SETITEM on a %s, not a dict", v.typeName(d))
	}
	o := &v.objs[d.n]
	if o.kind == oDictFresh {
		if len(items) == 0 {
			return nil
		}
		k := oGenDict
		if v.typed {
			k = v.classify(items)
		}
		switch k {
		case oEntry:
			if v.rows.n >= math.MaxInt32-1 {
				return v.corrupt("too many trace entries")
			}
			if v.rows.n&1023 == 0 {
				if err := v.budget.charge(1024*entryCost, v); err != nil {
					return err
				}
			}
			o.idx = int32(v.rows.add())
		case oFrame:
			k = oFrameB
			v.fbuild = append(v.fbuild, Frame{})
			o.idx = int32(len(v.fbuild) - 1)
		case oBlock:
			v.blocks = append(v.blocks, Block{Frames: NoStack, AddressComputed: true})
			o.idx = int32(len(v.blocks) - 1)
		case oSegment:
			v.segs = append(v.segs, Segment{Frames: NoStack})
			o.idx = int32(len(v.segs) - 1)
		case oHist:
			v.hists = append(v.hists, HistoryEntry{Frames: NoStack})
			o.idx = int32(len(v.hists) - 1)
		default:
			v.gens = append(v.gens, gen{})
			o.idx = int32(len(v.gens) - 1)
		}
		if len(v.blocks) > math.MaxInt32-1 || len(v.segs) > math.MaxInt32-1 {
			return v.corrupt("too many objects")
		}
		if v.memoMax != math.MaxInt && k != oEntry && k != oGenDict {
			return errPartRef // a part holds trace entries only (no new frame)
		}
		o.kind = k
	}
	var err error
	switch o.kind {
	case oGenDict:
		if err := v.budget.charge(int64(len(items))*genItemBytes, v); err != nil {
			return err
		}
		v.genSet(&v.gens[o.idx], items)
		return nil
	case oEntry:
		row := int(o.idx)
		for i := 0; i+1 < len(items) && err == nil; i += 2 {
			err = v.setEntry(row, items[i], items[i+1])
		}
	case oFrameB:
		f := &v.fbuild[o.idx]
		for i := 0; i+1 < len(items) && err == nil; i += 2 {
			err = v.setFrame(f, items[i], items[i+1])
		}
	case oBlock:
		b := &v.blocks[o.idx]
		for i := 0; i+1 < len(items) && err == nil; i += 2 {
			err = v.setBlock(b, items[i], items[i+1])
		}
	case oSegment:
		s := &v.segs[o.idx]
		for i := 0; i+1 < len(items) && err == nil; i += 2 {
			err = v.setSegment(s, items[i], items[i+1])
		}
		if err == nil {
			fixBlockAddresses(s)
		}
	case oHist:
		h := &v.hists[o.idx]
		for i := 0; i+1 < len(items) && err == nil; i += 2 {
			err = v.setHist(h, items[i], items[i+1])
		}
	default:
		return v.corrupt("SETITEM on a %s, not a dict", v.typeName(d))
	}
	return err
}

// fixBlockAddresses computes the addresses of blocks that lack one
// (torch 2.0) from the segment address and the preceding sizes.
func fixBlockAddresses(s *Segment) {
	next := s.Address
	for i := range s.Blocks {
		b := &s.Blocks[i]
		if b.AddressComputed {
			b.Address = next
		}
		next = b.Address + uint64(b.Size)
	}
}

// classify picks the typed kind of a dict from the keys of its first items.
func (v *vm) classify(items []val) okind {
	k := oGenDict
	for i := 0; i < len(items); i += 2 {
		key := items[i]
		if key.k != kStr {
			return oGenDict
		}
		switch v.strs[key.n] {
		case "action":
			return oEntry
		case "total_size", "blocks", "segment_type":
			return oSegment
		case "state":
			k = oBlock
		case "real_size", "cpp_frames":
			if k == oGenDict {
				k = oHist
			}
		case "filename", "line":
			if k == oGenDict {
				k = oFrame
			}
		}
	}
	return k
}

// genSet sets items in a generic dict; string keys replace earlier equal
// keys in place, like Python.
func (v *vm) genSet(g *gen, items []val) {
	v.share(items...)
	for i := 0; i+1 < len(items); i += 2 {
		key, value := items[i], items[i+1]
		if key.k == kStr {
			s := v.strs[key.n]
			if g.index != nil {
				if p, ok := g.index[s]; ok {
					g.items[p+1] = value
					continue
				}
			} else {
				found := false
				for j := 0; j < len(g.items); j += 2 {
					if g.items[j].k == kStr && v.strs[g.items[j].n] == s {
						g.items[j+1] = value
						found = true
						break
					}
				}
				if found {
					continue
				}
			}
			if g.index == nil && len(g.items) >= 32 {
				g.index = map[string]int{}
				for j := 0; j < len(g.items); j += 2 {
					if g.items[j].k == kStr {
						g.index[v.strs[g.items[j].n]] = j
					}
				}
			}
			if g.index != nil {
				g.index[s] = len(g.items)
			}
		}
		g.items = append(g.items, key, value)
	}
}

// typeName names the Python type of x, for errors.
func (v *vm) typeName(x val) string {
	switch x.k {
	case kNone:
		return "None"
	case kBool:
		return "bool"
	case kInt, kUint, kBig:
		return "int"
	case kFloat:
		return "float"
	case kStr:
		return "str"
	case kBytes:
		return "bytes"
	case kMark:
		return "MARK"
	case kObj:
		switch v.objs[x.n].kind {
		case oDictFresh, oGenDict, oFrame, oFrameB, oEntry, oBlock, oSegment, oHist:
			return "dict"
		case oTuple:
			return "tuple"
		}
		return "list"
	}
	return "nothing"
}

// shapeErr reports a field of the wrong type.
func (v *vm) shapeErr(where, key, want string, got val) error {
	return v.fail(ErrShape, "%s %q: expected %s, got %s", where, key, want, v.typeName(got))
}

// wide returns an int as the low 64 bits of its two's complement.
func (v *vm) wide(where, key string, x val) (uint64, error) {
	switch x.k {
	case kInt, kUint:
		return uint64(x.n), nil
	case kBig:
		return 0, v.fail(ErrShape, "%s %q: integer %s does not fit in 64 bits", where, key, v.bigs[x.n])
	}
	return 0, v.shapeErr(where, key, "an int", x)
}

func (v *vm) i64(where, key string, x val) (int64, error) {
	u, err := v.wide(where, key, x)
	return int64(u), err
}

func (v *vm) str1(where, key string, x val) (string, error) {
	if x.k != kStr {
		return "", v.shapeErr(where, key, "a str", x)
	}
	return v.strs[x.n], nil
}

func (v *vm) bool1(where, key string, x val) (bool, error) {
	if x.k != kBool {
		return false, v.shapeErr(where, key, "a bool", x)
	}
	return x.n != 0, nil
}

// stackOf resolves a frame-list value to a StackID, interning a list that
// was being built.
func (v *vm) stackOf(where, key string, x val) (StackID, error) {
	if x.k == kNone {
		return NoStack, nil
	}
	if x.k == kObj {
		o := &v.objs[x.n]
		switch o.kind {
		case oStack:
			return StackID(o.idx), nil
		case oListFresh:
			return EmptyStack, nil
		case oFramesB:
			b := &v.builders[o.idx]
			id := b.known
			if id == NoStack {
				start := b.start
				if b.inline || v.memoRewritten {
					start = -1
				}
				var err error
				if id, err = v.intern(b.ids, start, b.end, b); err != nil {
					return NoStack, err
				}
				if b.key != "" && !v.cacheFull() && !v.memoRewritten && !v.stackLazy(id) {
					if v.stackCache == nil {
						v.stackCache = newStackCache()
					}
					v.stackCache.put(b.key, id)
				}
			}
			b.key = ""
			v.freeB = append(v.freeB, o.idx)
			o.kind, o.idx = oStack, int32(id)
			v.release(x, val{k: kStackRef, n: int64(id)})
			return id, nil
		case oGenList, oTuple:
			if o.kind == oTuple {
				break
			}
			var ids []FrameID
			for _, it := range v.gens[o.idx].items {
				f, err := v.frameOf(where, key, it)
				if err != nil {
					return NoStack, err
				}
				ids = append(ids, f)
			}
			// Later uses of this (memo-shared) list take the fast path.
			id, err := v.intern(ids, -1, -1, nil)
			if err != nil {
				return NoStack, err
			}
			o.kind, o.idx = oStack, int32(id)
			return id, nil
		}
	}
	return NoStack, v.shapeErr(where, key, "a list of frames", x)
}

// frameOf resolves a frame value.
func (v *vm) frameOf(where, key string, x val) (FrameID, error) {
	if x.k == kObj {
		o := &v.objs[x.n]
		switch o.kind {
		case oFrame:
			return FrameID(o.idx), nil
		case oFrameB:
			o.kind, o.idx = oFrame, int32(v.frame(v.fbuild[o.idx]))
			return FrameID(o.idx), nil
		case oDictFresh:
			return v.frame(Frame{}), nil
		case oGenDict:
			// A dict whose keys did not look like a frame: take the known
			// keys, as the reference does.
			var f Frame
			g := v.gens[o.idx]
			for i := 0; i+1 < len(g.items); i += 2 {
				if err := v.setFrame(&f, g.items[i], g.items[i+1]); err != nil {
					return 0, err
				}
			}
			return v.frame(f), nil
		}
	}
	return 0, v.shapeErr(where, key, "a frame dict", x)
}

// Codes of the trace-entry keys set on every entry, for setEntry's fast
// path (vm.keys holds one per string).
const (
	keyOther uint8 = iota
	keyAction
	keyAddr
	keySize
	keyStream
	keyTimeUS
	keyFrames
)

var keyCodes = map[string]uint8{"action": keyAction, "addr": keyAddr, "size": keySize,
	"stream": keyStream, "time_us": keyTimeUS, "frames": keyFrames}

// setEntry sets one trace-entry key of row; the common keys with
// well-typed values take a fast path.
func (v *vm) setEntry(row int, k, x val) error {
	e := v.rows
	if k.k == kStr {
		switch v.keys[k.n] {
		case keyAction:
			if x.k == kStr {
				if c := v.acts[x.n]; c > 0 {
					e.action.set(row, c-1)
					return nil
				}
			}
		case keyStream:
			if (x.k == kInt || x.k == kUint) && x.n == v.lastStream && e.streams != nil {
				e.stream.set(row, v.lastStreamIdx)
				return nil
			}
		case keyAddr:
			if x.k == kInt || x.k == kUint {
				e.addr.set(row, uint64(x.n))
				return nil
			}
		case keySize:
			if x.k == kInt || x.k == kUint {
				e.size.set(row, x.n)
				return nil
			}
		case keyTimeUS:
			if x.k == kInt || x.k == kUint {
				e.time.set(row, x.n)
				return nil
			}
		case keyFrames:
			if x.k == kObj && v.objs[x.n].kind == oStack {
				v.memo.stackChanged(row)
				e.stack.set(row, StackID(v.objs[x.n].idx))
				return nil
			}
		}
	}
	return v.setEntrySlow(row, k, x)
}

func (v *vm) setEntrySlow(row int, k, x val) error {
	if k.k != kStr {
		return v.extraEntry(row, k, x)
	}
	e := v.rows
	key := v.strs[k.n]
	const w = "trace entry"
	switch key {
	case "action":
		s, err := v.str1(w, key, x)
		if err != nil {
			return err
		}
		if !e.setAction(row, Action(s)) {
			return v.fail(ErrTooLarge, "more than %d distinct unknown trace actions", maxNames)
		}
		v.acts[x.n] = e.action.at(row) + 1
	case "addr", "stream":
		u, err := v.wide(w, key, x)
		if err != nil {
			return err
		}
		if key == "addr" {
			e.addr.set(row, u)
		} else {
			if !e.setStream(row, u) {
				return v.fail(ErrTooLarge, "more than %d distinct streams", maxStreams)
			}
			v.lastStream, v.lastStreamIdx = int64(u), e.stream.at(row)
		}
	case "size", "time_us", "device_free":
		n, err := v.i64(w, key, x)
		if err != nil {
			return err
		}
		switch key {
		case "size":
			e.size.set(row, n)
		case "time_us":
			e.time.set(row, n)
		default:
			e.deviceFree.put(row, n)
		}
	case "frames":
		id, err := v.stackOf(w, key, x)
		if err != nil {
			return err
		}
		v.memo.stackChanged(row)
		e.stack.set(row, id)
	case "compile_context", "user_metadata":
		if x.k != kStr {
			return v.otherEntry(row, k, x)
		}
		sp := &e.compile
		if key == "user_metadata" {
			sp = &e.user
		}
		if s := v.strs[x.n]; s != "" {
			sp.put(row, s)
		} else {
			sp.del(row)
		}
	default:
		return v.extraEntry(row, k, x)
	}
	return nil
}

// rowExtra returns row's EntryExtra, adding one.
func (v *vm) rowExtra(row int) *EntryExtra {
	ex, ok := v.rows.extra.get(row)
	if !ok {
		ex = &EntryExtra{}
		v.rows.extra.put(row, ex)
	}
	return ex
}

// otherEntry keeps a trace-entry key generically in Extra.Other. Optional
// annotation keys whose value has an unexpected type (a future torch
// writing user_metadata as a dict, say) land here instead of failing the
// whole file.
func (v *vm) otherEntry(row int, k, x val) error {
	ex := v.rowExtra(row)
	gk, err := v.value(k, 0)
	if err != nil {
		return err
	}
	gv, err := v.value(x, 0)
	if err != nil {
		return err
	}
	ex.Other = dictSet(ex.Other, gk, gv)
	return nil
}

// extraEntry stores a rare or unknown trace-entry key.
func (v *vm) extraEntry(row int, k, x val) error {
	const w = "trace entry"
	key := ""
	if k.k == kStr {
		key = v.strs[k.n]
	}
	switch key {
	case "forward_frames":
		items, err := v.listItems(w, key, x)
		if err != nil {
			return v.otherEntry(row, k, x)
		}
		ff := make([]string, 0, len(items))
		for _, it := range items {
			if it.k != kStr {
				return v.otherEntry(row, k, x)
			}
			ff = append(ff, v.strs[it.n])
		}
		v.rowExtra(row).ForwardFrames = ff
	case "pool_id":
		p, err := v.poolID(w, key, x)
		if err != nil {
			return v.otherEntry(row, k, x)
		}
		ex := v.rowExtra(row)
		ex.PoolID, ex.HasPoolID = p, true
	case "internal_metadata", "category":
		if x.k != kStr {
			return v.otherEntry(row, k, x)
		}
		ex := v.rowExtra(row)
		if key == "category" {
			ex.Category = v.strs[x.n]
		} else {
			ex.InternalMetadata = v.strs[x.n]
		}
	default:
		return v.otherEntry(row, k, x)
	}
	return nil
}

// listItems returns the items of a list or tuple value as vals.
func (v *vm) listItems(where, key string, x val) ([]val, error) {
	if x.k == kObj {
		o := &v.objs[x.n]
		switch o.kind {
		case oListFresh:
			return nil, nil
		case oGenList, oTuple:
			return v.gens[o.idx].items, nil
		case oFramesB, oStack, oEntries, oBlocks, oSegments, oHists:
			if err := v.materialize(o); err != nil {
				return nil, err
			}
			return v.gens[o.idx].items, nil
		}
	}
	return nil, v.shapeErr(where, key, "a list", x)
}

func (v *vm) poolID(where, key string, x val) (PoolID, error) {
	items, err := v.listItems(where, key, x)
	if err != nil {
		return PoolID{}, err
	}
	if len(items) != 2 {
		return PoolID{}, v.fail(ErrShape, "%s %q: expected 2 items, got %d", where, key, len(items))
	}
	var p PoolID
	for i := range 2 {
		if p[i], err = v.i64(where, key, items[i]); err != nil {
			return PoolID{}, err
		}
	}
	return p, nil
}

func (v *vm) setFrame(f *Frame, k, x val) error {
	if k.k != kStr {
		return nil
	}
	key := v.strs[k.n]
	const w = "frame"
	var err error
	switch key {
	case "name":
		f.Name, err = v.str1(w, key, x)
	case "filename":
		f.Filename, err = v.str1(w, key, x)
	case "line":
		f.Line, err = v.i64(w, key, x)
	case "fx_node_op":
		f.FXNodeOp, err = v.str1(w, key, x)
	case "fx_node_name":
		f.FXNodeName, err = v.str1(w, key, x)
	case "fx_node_target":
		f.FXNodeTarget, err = v.str1(w, key, x)
	case "fx_original_trace":
		f.FXOriginalTrace, err = v.str1(w, key, x)
	}
	return err
}

func (v *vm) setBlock(b *Block, k, x val) error {
	key := ""
	if k.k == kStr {
		key = v.strs[k.n]
	}
	const w = "block"
	var err error
	switch key {
	case "address":
		b.Address, err = v.wide(w, key, x)
		b.AddressComputed = false
	case "size":
		b.Size, err = v.i64(w, key, x)
	case "requested_size":
		b.RequestedSize, err = v.i64(w, key, x)
	case "state":
		var s string
		s, err = v.str1(w, key, x)
		b.State = BlockState(s)
	case "frames":
		b.Frames, err = v.stackOf(w, key, x)
	case "history":
		b.History, err = v.histories(w, key, x)
	default:
		err = v.extra(&b.Extra, k, x)
	}
	return err
}

// extra stores a generic copy of an unknown key in d.
func (v *vm) extra(d *Dict, k, x val) error {
	gk, err := v.value(k, 0)
	if err != nil {
		return err
	}
	gv, err := v.value(x, 0)
	if err != nil {
		return err
	}
	*d = dictSet(*d, gk, gv)
	return nil
}

func (v *vm) histories(where, key string, x val) ([]HistoryEntry, error) {
	return typedList(v, x, v.hists, listShape[HistoryEntry]{kind: oHists,
		zero: HistoryEntry{Frames: NoStack}, set: (*vm).setHist,
		where: where, key: key, wantItems: "a list of dicts", wantList: "a list"})
}

func (v *vm) setHist(h *HistoryEntry, k, x val) error {
	if k.k != kStr {
		return nil
	}
	key := v.strs[k.n]
	const w = "history entry"
	var err error
	switch key {
	case "addr":
		h.Addr, err = v.wide(w, key, x)
	case "real_size":
		h.RealSize, err = v.i64(w, key, x)
	case "frames":
		h.Frames, err = v.stackOf(w, key, x)
	case "cpp_frames":
		h.CPPFrames, err = v.str1(w, key, x)
	}
	return err
}

func (v *vm) setSegment(s *Segment, k, x val) error {
	key := ""
	if k.k == kStr {
		key = v.strs[k.n]
	}
	const w = "segment"
	var err error
	switch key {
	case "device":
		var n int64
		n, err = v.i64(w, key, x)
		s.Device = int(n)
	case "address":
		s.Address, err = v.wide(w, key, x)
	case "total_size":
		s.TotalSize, err = v.i64(w, key, x)
	case "allocated_size":
		s.AllocatedSize, err = v.i64(w, key, x)
	case "active_size":
		s.ActiveSize, err = v.i64(w, key, x)
	case "requested_size":
		s.RequestedSize, err = v.i64(w, key, x)
	case "stream":
		s.Stream, err = v.wide(w, key, x)
	case "segment_type":
		s.SegmentType, err = v.str1(w, key, x)
	case "segment_pool_id":
		s.PoolID, err = v.poolID(w, key, x)
		s.HasPoolID = true
	case "is_expandable":
		s.IsExpandable, err = v.bool1(w, key, x)
	case "frames":
		s.Frames, err = v.stackOf(w, key, x)
	case "blocks":
		s.Blocks, err = v.blockList(w, key, x)
	default:
		err = v.extra(&s.Extra, k, x)
	}
	return err
}

func (v *vm) blockList(where, key string, x val) ([]Block, error) {
	return typedList(v, x, v.blocks, listShape[Block]{kind: oBlocks,
		zero: Block{Frames: NoStack, AddressComputed: true}, set: (*vm).setBlock,
		where: where, key: key, wantItems: "a list of dicts", wantList: "a list"})
}

// listShape says how typedList reads one kind of snapshot list.
type listShape[T any] struct {
	kind      okind                         // the typed-list kind: oBlocks, oSegments or oHists
	zero      T                             // the item an empty dict gives
	set       func(*vm, *T, val, val) error // sets one key of an item
	done      func(*T)                      // if not nil, finishes an item set key by key
	where     string                        // for shape errors: the object holding the list
	key       string                        // for shape errors: the key naming the list
	wantItems string                        // for shape errors: what the items should be
	wantList  string                        // for shape errors: what the list should be
}

// typedList returns the items of a list of snapshot dicts. A typed list
// (s.kind) is a slice of the arena its items were decoded into; an empty
// list gives an empty slice; a generic list or tuple (the items did not
// arrive in order, or some were not typed) is converted item by item,
// copying typed items from the arena and setting generic dicts key by key.
func typedList[T any](v *vm, x val, arena []T, s listShape[T]) ([]T, error) {
	if x.k != kObj {
		return nil, v.shapeErr(s.where, s.key, s.wantList, x)
	}
	o := &v.objs[x.n]
	switch o.kind {
	case s.kind:
		// Charged at every use: a list referenced again (memo) is analysed
		// again.
		r := v.ranges[o.idx]
		if err := v.budget.charge(int64(r.end-r.start)*int64(unsafe.Sizeof(s.zero)), v); err != nil {
			return nil, err
		}
		return arena[r.start:r.end:r.end], nil
	case oListFresh:
		return []T{}, nil
	case oGenList, oTuple:
	default:
		return nil, v.shapeErr(s.where, s.key, s.wantList, x)
	}
	items := v.gens[o.idx].items
	if err := v.budget.charge(int64(len(items))*int64(unsafe.Sizeof(s.zero)), v); err != nil {
		return nil, err
	}
	one := oEntry + (s.kind - oEntries)
	out := make([]T, 0, len(items))
	for _, it := range items {
		if it.k != kObj {
			return nil, v.shapeErr(s.where, s.key, s.wantItems, it)
		}
		t := s.zero
		switch io := v.objs[it.n]; io.kind {
		case one:
			t = arena[io.idx]
		case oGenDict:
			g := v.gens[io.idx]
			for i := 0; i+1 < len(g.items); i += 2 {
				if err := s.set(v, &t, g.items[i], g.items[i+1]); err != nil {
					return nil, err
				}
			}
			if s.done != nil {
				s.done(&t)
			}
		case oDictFresh:
		default:
			return nil, v.shapeErr(s.where, s.key, s.wantItems, it)
		}
		out = append(out, t)
	}
	return out, nil
}

// lazySoonFrames is where, with the default HoldFrames, the held stacks
// are first checked for repeats (lazySooner): 64 Ki frame IDs (256 KiB),
// beyond the 86-300 stacks of 20-70 frames of real training files.
var lazySoonFrames = 1 << 16

// lazySooner makes the next new stacks lazy at once when the stacks so far
// hardly repeat: at least 15 in 16 of the frame lists resolved (vm.intern
// and the stack cache's hits) were new stacks. A file of distinct stacks (the
// worst case, nearly one stack per trace entry) then holds a few thousand
// stacks instead of lazyAfter frame IDs of them: holding a stack costs
// more than keeping it lazy (a builder, the index, the stack cache), and
// such stacks are rarely met again. A file whose stacks repeat keeps
// holding them (found by the stack cache, shown without reading the file
// again); it is checked again at twice as many frame IDs, up to
// lazyAfter.
func (v *vm) lazySooner() {
	t := &v.snap.Stacks
	if refs := v.stackRefs + v.cacheHits; 16*(t.count-1) >= 15*refs {
		v.lazyAfter, v.lazySoon = t.held(), 0
		return
	}
	if v.lazySoon *= 2; v.lazySoon >= v.lazyAfter {
		v.lazySoon = 0
	}
}

// intern returns the ID of a frame list whose encoding spans [start, end)
// of the input (start -1: unknown). Once the held stacks pass lazyAfter
// frame IDs, a new stack from a re-readable input is not held: only its
// summary, offset and length are kept (see Stacks). b, when not nil, is
// the builder of ids: if it was folded, its summary and hash are taken.
func (v *vm) intern(ids []FrameID, start, end int64, b *builder) (StackID, error) {
	t := &v.snap.Stacks
	v.stackRefs++
	if b != nil && !b.folded {
		b = nil
	}
	var lazy func(Stack) StackSummary
	if v.lazyOK && lazyFits(start, end-start, len(ids)) && t.held() >= v.lazyAfter {
		if v.pipe != nil {
			return v.pipe.add(v.snap.Frames, ids, lazyAt(start, int(end-start), len(ids))), v.budget.charge(stackRecBytes, v)
		}
		if b != nil {
			// Folded as it was read: its hash (in WebAssembly) and
			// summary are known.
			h := b.hash
			if !foldedHash {
				h = t.hash(ids)
			}
			if old, ok := t.recentLazy(h, len(ids)); ok {
				return old, nil
			}
			return t.pushLazy(h, lazyAt(start, int(end-start), len(ids)), b.sum), v.budget.charge(stackRecBytes, v)
		}
		lazy = func(st Stack) StackSummary { return v.summarize(v.snap.Frames, st) }
	}
	v.syncStacks()
	id, isNew := t.intern(ids, lazy, start, int(end-start))
	if !isNew {
		return id, nil
	}
	if lazy == nil {
		if b != nil {
			t.setSum(id, b.sum)
		} else if v.summarize != nil {
			t.setSum(id, v.summarize(v.snap.Frames, ids))
		}
		if v.lazySoon > 0 && t.held() >= v.lazySoon {
			v.lazySooner()
		}
		return id, v.budget.charge(int64(len(ids)+1)*4+stackRecBytes, v)
	}
	return id, v.budget.charge(stackRecBytes, v)
}
