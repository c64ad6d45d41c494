package snapshot

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"
)

// value converts a VM value to a generic Value. budget bounds the work so
// that shared references cannot make it explode (a DAG of lists that refer
// to each other twice per level doubles per level).
func (v *vm) value(x val, depth int) (Value, error) {
	if depth > 1000 {
		return nil, &DecodeError{Offset: -1, Kind: ErrCorrupt, Msg: "values nested deeper than 1000 (or a self-referencing container)"}
	}
	if err := v.budget.charge(valueBytes, v); err != nil {
		return nil, err
	}
	switch x.k {
	case kNone:
		return nil, nil
	case kBool:
		return x.n != 0, nil
	case kInt:
		return x.n, nil
	case kUint:
		return new(big.Int).SetUint64(uint64(x.n)), nil
	case kBig:
		return v.bigs[x.n], nil
	case kFloat:
		return math.Float64frombits(uint64(x.n)), nil
	case kStr:
		return v.strs[x.n], nil
	case kBytes:
		return v.bytes[x.n], nil
	case kObj:
	default:
		return nil, &DecodeError{Offset: -1, Kind: ErrCorrupt, Msg: "a MARK was used as a value"}
	}
	o := v.objs[x.n]
	seq := func(items []val) ([]Value, error) {
		out := make([]Value, 0, len(items))
		for _, it := range items {
			g, err := v.value(it, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
		return out, nil
	}
	switch o.kind {
	case oDictFresh:
		return Dict{}, nil
	case oListFresh:
		return List{}, nil
	case oGenList:
		l, err := seq(v.gens[o.idx].items)
		return List(l), err
	case oTuple:
		l, err := seq(v.gens[o.idx].items)
		return Tuple(l), err
	case oGenDict:
		items := v.gens[o.idx].items
		out := make(Dict, 0, len(items)/2)
		for i := 0; i+1 < len(items); i += 2 {
			k, err := v.value(items[i], depth+1)
			if err != nil {
				return nil, err
			}
			val, err := v.value(items[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, DictItem{Key: k, Value: val})
		}
		return out, nil
	case oFrame:
		return frameValue(v.snap.Frames[o.idx]), nil
	case oFrameB:
		return frameValue(v.fbuild[o.idx]), nil
	case oFramesB, oStack, oEntries, oBlocks, oSegments, oHists:
		if err := v.materialize(&v.objs[x.n]); err != nil {
			return nil, err
		}
		return v.value(x, depth)
	case oEntry, oBlock, oSegment, oHist:
		// A snapshot-shaped dict in a place with no schema (an unknown
		// key): keep what the typed struct holds.
		return typedValue(v, o), nil
	}
	return nil, &DecodeError{Offset: -1, Kind: ErrCorrupt, Msg: "unknown object"}
}

func frameValue(f Frame) Dict {
	d := Dict{{"name", f.Name}, {"filename", f.Filename}, {"line", f.Line}}
	for _, x := range []DictItem{{"fx_node_op", f.FXNodeOp}, {"fx_node_name", f.FXNodeName},
		{"fx_node_target", f.FXNodeTarget}, {"fx_original_trace", f.FXOriginalTrace}} {
		if x.Value != "" {
			d = append(d, x)
		}
	}
	return d
}

// typedValue renders a typed object generically (best effort).
func typedValue(v *vm, o obj) Value {
	switch o.kind {
	case oEntry:
		t := Trace{e: v.rows, start: int(o.idx), n: 1}
		return Dict{{"action", string(t.Action(0))}, {"addr", int64(t.Addr(0))}, {"size", t.Size(0)}, {"stream", int64(t.Stream(0))}}
	case oBlock:
		b := v.blocks[o.idx]
		return Dict{{"size", b.Size}, {"requested_size", b.RequestedSize}, {"state", string(b.State)}}
	case oSegment:
		s := v.segs[o.idx]
		return Dict{{"device", int64(s.Device)}, {"address", int64(s.Address)}, {"total_size", s.TotalSize}}
	}
	h := v.hists[o.idx]
	return Dict{{"addr", int64(h.Addr)}, {"real_size", h.RealSize}}
}

// finish turns the pickle's result into the Snapshot.
func (v *vm) finish(top val) (*Snapshot, error) {
	s := v.snap
	s.Protocol = v.proto
	shape := func(format string, args ...any) error {
		return &DecodeError{Offset: -1, Kind: ErrShape, Msg: fmt.Sprintf(format, args...)}
	}
	if top.k != kObj {
		return nil, shape("the pickle holds a single %s, not the dict torch.cuda.memory._snapshot() returns", v.typeName(top))
	}
	o := v.objs[top.n]
	switch o.kind {
	case oSegments, oListFresh, oGenList:
		s.Legacy = true
		segs, err := v.segList("segments", top)
		if err == nil {
			err = checkDevices(segs)
		}
		s.Segments = segs
		return s, err
	case oGenDict:
	case oDictFresh:
		return nil, shape("the pickle holds an empty dict; a snapshot has at least 'segments'")
	default:
		return nil, shape("the pickle holds a %s, not the dict torch.cuda.memory._snapshot() returns", v.typeName(top))
	}
	items := v.gens[o.idx].items
	hasSegments := false
	var keys []string
	for i := 0; i+1 < len(items); i += 2 {
		k, x := items[i], items[i+1]
		key := ""
		if k.k == kStr {
			key = v.strs[k.n]
			keys = append(keys, key)
		}
		var err error
		switch key {
		case "segments":
			hasSegments = true
			s.Segments, err = v.segList(key, x)
			if err == nil {
				err = checkDevices(s.Segments)
			}
		case "device_traces":
			s.DeviceTraces, err = v.traceLists(key, x)
		case "host_segments":
			s.HostSegments, err = v.segList(key, x)
		case "host_traces":
			s.HostTraces, err = v.traceLists(key, x)
		case "allocator_settings":
			var g Value
			if g, err = v.value(x, 0); err == nil {
				s.AllocatorSettings, err = settingsFrom(key, g)
			}
		case "external_annotations":
			var g Value
			if g, err = v.value(x, 0); err == nil {
				s.ExternalAnnotations, err = annotationsFrom(key, g)
			}
		default:
			err = v.extra(&s.Extra, k, x)
		}
		if err != nil {
			return nil, err
		}
	}
	if !hasSegments {
		sort.Strings(keys)
		if len(keys) > 8 {
			keys = append(keys[:8], "...")
		}
		return nil, shape("the dict has no 'segments' key (keys: %s); it is not what torch.cuda.memory._snapshot() returns", strings.Join(keys, ", "))
	}
	return s, nil
}

func (v *vm) segList(where string, x val) ([]Segment, error) {
	return typedList(v, x, v.segs, listShape[Segment]{kind: oSegments,
		zero: Segment{Frames: NoStack}, set: (*vm).setSegment, done: fixBlockAddresses,
		where: "snapshot", key: where, wantItems: "a list of segment dicts", wantList: "a list"})
}

// maxDevices bounds the device traces of a snapshot (and the distinct
// devices of its segments).
const maxDevices = 1024

func (v *vm) traceLists(where string, x val) ([]Trace, error) {
	devs, err := v.listItems("snapshot", where, x)
	if err != nil {
		return nil, err
	}
	if len(devs) > maxDevices {
		return nil, &DecodeError{Offset: -1, Kind: ErrTooLarge, Msg: fmt.Sprintf("%q lists %d devices; at most %d are supported", where, len(devs), maxDevices)}
	}
	out := make([]Trace, 0, len(devs))
	for _, dv := range devs {
		tr, err := v.traceList(where, dv)
		if err != nil {
			return nil, err
		}
		out = append(out, tr)
	}
	return out, nil
}

// traceList returns one device's trace: a run of the entry columns, or for
// a list whose items did not arrive in order (or are not all entries), a
// copy of them at the end of the columns. Every use is charged: a list
// referenced again through the memo is analysed again.
func (v *vm) traceList(where string, x val) (Trace, error) {
	const wantItems, wantList = "lists of trace-entry dicts", "a list of lists"
	if x.k != kObj {
		return Trace{}, v.shapeErr("snapshot", where, wantList, x)
	}
	o := &v.objs[x.n]
	switch o.kind {
	case oEntries:
		r := v.ranges[o.idx]
		t := Trace{e: v.rows, start: int(r.start), n: int(r.end - r.start)}
		if o.idx >= 0 && v.rangeUsed(o.idx) {
			if err := v.budget.charge(int64(t.n)*entryCost, v); err != nil {
				return Trace{}, err
			}
		}
		return t, nil
	case oListFresh:
		return Trace{e: v.rows, start: v.rows.n}, nil
	case oGenList, oTuple:
	default:
		return Trace{}, v.shapeErr("snapshot", where, wantList, x)
	}
	// The entries among the items were charged as rows when added to the
	// list; charge the others now.
	items := v.gens[o.idx].items
	n := int64(0)
	for _, it := range items {
		if it.k != kObj || v.objs[it.n].kind != oEntry {
			n += entryCost
		}
	}
	if err := v.budget.charge(n, v); err != nil {
		return Trace{}, err
	}
	t := Trace{e: v.rows, start: v.rows.n}
	for _, it := range items {
		if it.k != kObj {
			return Trace{}, v.shapeErr("snapshot", where, wantItems, it)
		}
		row := v.rows.add()
		t.n++
		switch io := v.objs[it.n]; io.kind {
		case oEntry:
			v.rows.copyRow(row, int(io.idx))
		case oGenDict:
			g := v.gens[io.idx]
			for i := 0; i+1 < len(g.items); i += 2 {
				if err := v.setEntry(row, g.items[i], g.items[i+1]); err != nil {
					return Trace{}, err
				}
			}
		case oDictFresh:
		default:
			return Trace{}, v.shapeErr("snapshot", where, wantItems, it)
		}
	}
	return t, nil
}

// rangeUsed reports whether typed list r was handed out before, marking it.
func (v *vm) rangeUsed(r int32) bool {
	if v.usedRanges == nil {
		v.usedRanges = map[int32]bool{}
	}
	used := v.usedRanges[r]
	v.usedRanges[r] = true
	return used
}

// checkDevices refuses segments of more than maxDevices distinct devices.
func checkDevices(segs []Segment) error {
	seen := map[int]bool{}
	for i := range segs {
		seen[segs[i].Device] = true
		if len(seen) > maxDevices {
			return &DecodeError{Offset: -1, Kind: ErrTooLarge, Msg: fmt.Sprintf("the segments name more than %d devices; at most %d are supported", maxDevices, maxDevices)}
		}
	}
	return nil
}

// valueShape reports a generic value of the wrong type.
func valueShape(path, want string, got Value) error {
	return &DecodeError{Offset: -1, Kind: ErrShape, Msg: fmt.Sprintf("%s: expected %s, got %s", path, want, typeName(got))}
}

func valueInt(path string, x Value) (int64, error) {
	switch t := x.(type) {
	case int64:
		return t, nil
	case *big.Int:
		if t.IsInt64() {
			return t.Int64(), nil
		}
		if t.IsUint64() {
			return int64(t.Uint64()), nil
		}
		return 0, &DecodeError{Offset: -1, Kind: ErrShape, Msg: fmt.Sprintf("%s: integer %s does not fit in 64 bits", path, t)}
	}
	return 0, valueShape(path, "an int", x)
}

func valueStr(path string, x Value) (string, error) {
	if s, ok := x.(string); ok {
		return s, nil
	}
	return "", valueShape(path, "a str", x)
}

func valueBool(path string, x Value) (bool, error) {
	if b, ok := x.(bool); ok {
		return b, nil
	}
	return false, valueShape(path, "a bool", x)
}

// settingsFrom converts allocator_settings.
func settingsFrom(path string, g Value) (*AllocatorSettings, error) {
	d, ok := g.(Dict)
	if !ok {
		return nil, valueShape(path, "a dict", g)
	}
	s := &AllocatorSettings{Raw: d}
	var err error
	for _, it := range d {
		k, _ := it.Key.(string)
		p := path + "." + k
		switch k {
		case "PYTORCH_CUDA_ALLOC_CONF":
			s.PyTorchCUDAAllocConf, err = valueStr(p, it.Value)
		case "max_split_size":
			s.MaxSplitSize, err = valueInt(p, it.Value)
		case "garbage_collection_threshold":
			switch t := it.Value.(type) {
			case float64:
				s.GarbageCollectionThreshold = t
			case int64:
				s.GarbageCollectionThreshold = float64(t)
			default:
				err = valueShape(p, "a float", it.Value)
			}
		case "expandable_segments":
			s.ExpandableSegments, err = valueBool(p, it.Value)
		case "pinned_num_register_threads":
			s.PinnedNumRegisterThreads, err = valueInt(p, it.Value)
		case "release_lock_on_cudamalloc":
			s.ReleaseLockOnCUDAMalloc, err = valueBool(p, it.Value)
		case "pinned_use_cuda_host_register":
			s.PinnedUseCUDAHostRegister, err = valueBool(p, it.Value)
		case "graph_capture_record_stream_reuse":
			s.GraphCaptureRecordStreamReuse, err = valueBool(p, it.Value)
		case "roundup_power2_divisions":
			rp, ok := it.Value.(Dict)
			if !ok {
				err = valueShape(p, "a dict", it.Value)
			}
			s.RoundupPower2Divisions = rp
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// annotationsFrom converts external_annotations.
func annotationsFrom(path string, g Value) ([]Annotation, error) {
	var items []Value
	switch t := g.(type) {
	case List:
		items = t
	case Tuple:
		items = t
	default:
		return nil, valueShape(path, "a list", g)
	}
	out := make([]Annotation, 0, len(items))
	for i, it := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		d, ok := it.(Dict)
		if !ok {
			return nil, valueShape(p, "a dict", it)
		}
		var a Annotation
		var err error
		for _, e := range d {
			k, _ := e.Key.(string)
			fp := p + "." + k
			switch k {
			case "stage":
				a.Stage, err = valueStr(fp, e.Value)
			case "name":
				a.Name, err = valueStr(fp, e.Value)
			case "device":
				var n int64
				n, err = valueInt(fp, e.Value)
				a.Device = int(n)
			case "time_us":
				a.TimeUS, err = valueInt(fp, e.Value)
			default:
				a.Extra = dictSet(a.Extra, e.Key, e.Value)
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, a)
	}
	return out, nil
}
