package snapshot

import (
	"bytes"
	"fmt"
	"io"
	"math/big"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/types"
)

// DecodeReference (test only) decodes a snapshot with the generic gopickle unpickler and
// converts the resulting tree to a Snapshot. It is the slow reference path
// the fast decoder is tested against; it refuses every global.
func DecodeReference(r io.Reader) (*Snapshot, error) {
	v, proto, err := loadGopickle(r)
	if err != nil {
		return nil, err
	}
	c := refConverter{
		snap:    &Snapshot{Protocol: proto},
		frames:  make(map[*types.Dict]FrameID),
		stacks:  make(map[*types.List]StackID),
		frameID: make(map[Frame]FrameID),
	}
	c.snap.Stacks.Add(nil)
	if err := c.top(v); err != nil {
		return nil, err
	}
	return c.snap, nil
}

// loadGopickle runs gopickle on r and reports the PROTO byte (0 if none).
func loadGopickle(r io.Reader) (any, int, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, err
	}
	proto := 0
	if len(data) >= 2 && data[0] == 0x80 {
		proto = int(data[1])
	}
	u := pickle.NewUnpickler(bytes.NewReader(data))
	u.FindClass = func(module, name string) (any, error) {
		return nil, fmt.Errorf("pickle refers to global %s.%s: not a snapshot", module, name)
	}
	v, err := u.Load()
	if err != nil {
		return nil, 0, fmt.Errorf("gopickle: %w", err)
	}
	return v, proto, nil
}

// refConverter turns a gopickle tree into a Snapshot. Frames and frame
// lists are cached by object identity (gopickle keeps memo references
// shared), then interned by value.
type refConverter struct {
	snap    *Snapshot
	frames  map[*types.Dict]FrameID
	stacks  map[*types.List]StackID
	frameID map[Frame]FrameID
}

func (c *refConverter) top(v any) error {
	switch t := v.(type) {
	case *types.List:
		c.snap.Legacy = true
		segs, err := c.segments("segments", t)
		c.snap.Segments = segs
		return err
	case *types.Dict:
		if _, ok := t.Get("segments"); !ok {
			return fmt.Errorf("top-level dict has no 'segments' key")
		}
		for _, it := range dictItems(t) {
			k, _ := it.Key.(string)
			var err error
			switch k {
			case "segments":
				c.snap.Segments, err = c.segments(k, it.Value)
			case "device_traces":
				c.snap.DeviceTraces, err = c.traces(k, it.Value)
			case "host_segments":
				c.snap.HostSegments, err = c.segments(k, it.Value)
			case "host_traces":
				c.snap.HostTraces, err = c.traces(k, it.Value)
			case "allocator_settings":
				c.snap.AllocatorSettings, err = c.settings(k, it.Value)
			case "external_annotations":
				c.snap.ExternalAnnotations, err = c.annotations(k, it.Value)
			default:
				var g Value
				g, err = generic(it.Key)
				if err == nil {
					var gv Value
					gv, err = generic(it.Value)
					c.snap.Extra = dictSet(c.snap.Extra, g, gv)
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("top level is %s, want a dict (or a legacy list of segments)", refTypeName(v))
}

// dictItems returns the items of d with later duplicates of a key replacing
// earlier ones in place (Python semantics; gopickle appends duplicates).
func dictItems(d *types.Dict) []types.DictEntry {
	out := make([]types.DictEntry, 0, len(*d))
	for _, it := range *d {
		replaced := false
		if ks, ok := it.Key.(string); ok {
			for i := range out {
				if os, ok := out[i].Key.(string); ok && os == ks {
					out[i].Value = it.Value
					replaced = true
					break
				}
			}
		}
		if !replaced {
			out = append(out, it)
		}
	}
	return out
}

func (c *refConverter) list(path string, v any) ([]any, error) {
	switch t := v.(type) {
	case *types.List:
		return *t, nil
	case *types.Tuple:
		return *t, nil
	}
	return nil, fmt.Errorf("%s: expected a list, got %s", path, refTypeName(v))
}

func (c *refConverter) segments(path string, v any) ([]Segment, error) {
	return refDicts(c, path, v, func(p string, d *types.Dict) (Segment, error) {
		s := Segment{Frames: NoStack}
		err := eachKey(p, d, func(k, fp string, e types.DictEntry) (err error) {
			switch k {
			case "device":
				var n int64
				n, err = refInt(fp, e.Value)
				s.Device = int(n)
			case "address":
				s.Address, err = refUint(fp, e.Value)
			case "total_size":
				s.TotalSize, err = refInt(fp, e.Value)
			case "allocated_size":
				s.AllocatedSize, err = refInt(fp, e.Value)
			case "active_size":
				s.ActiveSize, err = refInt(fp, e.Value)
			case "requested_size":
				s.RequestedSize, err = refInt(fp, e.Value)
			case "stream":
				s.Stream, err = refUint(fp, e.Value)
			case "segment_type":
				s.SegmentType, err = refStr(fp, e.Value)
			case "segment_pool_id":
				s.PoolID, err = c.poolID(fp, e.Value)
				s.HasPoolID = true
			case "is_expandable":
				s.IsExpandable, err = refBool(fp, e.Value)
			case "frames":
				s.Frames, err = c.stack(fp, e.Value)
			case "blocks":
				s.Blocks, err = c.blocks(fp, e.Value)
			default:
				err = extraSet(&s.Extra, e.Key, e.Value)
			}
			return err
		})
		next := s.Address
		for i := range s.Blocks {
			if b := &s.Blocks[i]; b.AddressComputed {
				b.Address = next
			}
			next = s.Blocks[i].Address + uint64(s.Blocks[i].Size)
		}
		return s, err
	})
}

func (c *refConverter) blocks(path string, v any) ([]Block, error) {
	return refDicts(c, path, v, func(p string, d *types.Dict) (Block, error) {
		b := Block{Frames: NoStack, AddressComputed: true}
		err := eachKey(p, d, func(k, fp string, e types.DictEntry) (err error) {
			switch k {
			case "address":
				b.Address, err = refUint(fp, e.Value)
				b.AddressComputed = false
			case "size":
				b.Size, err = refInt(fp, e.Value)
			case "requested_size":
				b.RequestedSize, err = refInt(fp, e.Value)
			case "state":
				var st string
				st, err = refStr(fp, e.Value)
				b.State = BlockState(st)
			case "frames":
				b.Frames, err = c.stack(fp, e.Value)
			case "history":
				b.History, err = c.history(fp, e.Value)
			default:
				err = extraSet(&b.Extra, e.Key, e.Value)
			}
			return err
		})
		return b, err
	})
}

func (c *refConverter) history(path string, v any) ([]HistoryEntry, error) {
	return refDicts(c, path, v, func(p string, d *types.Dict) (HistoryEntry, error) {
		h := HistoryEntry{Frames: NoStack}
		err := eachKey(p, d, func(k, fp string, e types.DictEntry) (err error) {
			switch k {
			case "addr":
				h.Addr, err = refUint(fp, e.Value)
			case "real_size":
				h.RealSize, err = refInt(fp, e.Value)
			case "frames":
				h.Frames, err = c.stack(fp, e.Value)
			case "cpp_frames":
				h.CPPFrames, err = refStr(fp, e.Value)
			}
			return err
		})
		return h, err
	})
}

// refDicts converts a list (or tuple) of dicts at path with one, which
// gets each dict and its path.
func refDicts[T any](c *refConverter, path string, v any, one func(p string, d *types.Dict) (T, error)) ([]T, error) {
	items, err := c.list(path, v)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for i, it := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		d, ok := it.(*types.Dict)
		if !ok {
			return nil, fmt.Errorf("%s: expected a dict, got %s", p, refTypeName(it))
		}
		x, err := one(p, d)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// eachKey calls set with each item of the dict d at path (later duplicate
// keys replacing earlier ones), its string key ("" if none) and its path,
// stopping at the first error.
func eachKey(path string, d *types.Dict, set func(k, fp string, e types.DictEntry) error) error {
	for _, e := range dictItems(d) {
		k, _ := e.Key.(string)
		if err := set(k, path+"."+k, e); err != nil {
			return err
		}
	}
	return nil
}

func (c *refConverter) traces(path string, v any) ([]Trace, error) {
	devs, err := c.list(path, v)
	if err != nil {
		return nil, err
	}
	out := make([]Trace, 0, len(devs))
	for d, dv := range devs {
		dp := fmt.Sprintf("%s[%d]", path, d)
		tr, err := refDicts(c, dp, dv, c.entry)
		if err != nil {
			return nil, err
		}
		out = append(out, TraceOf(tr...))
	}
	return out, nil
}

func (c *refConverter) entry(p string, d *types.Dict) (TraceEntry, error) {
	t := TraceEntry{Frames: NoStack}
	extra := func() *EntryExtra {
		if t.Extra == nil {
			t.Extra = &EntryExtra{}
		}
		return t.Extra
	}
	err := eachKey(p, d, func(k, fp string, e types.DictEntry) (err error) {
		switch k {
		case "action":
			var s string
			s, err = refStr(fp, e.Value)
			t.Action = Action(s)
		case "addr":
			t.Addr, err = refUint(fp, e.Value)
		case "size":
			t.Size, err = refInt(fp, e.Value)
		case "stream":
			t.Stream, err = refUint(fp, e.Value)
		case "time_us":
			t.TimeUS, err = refInt(fp, e.Value)
		case "device_free":
			t.DeviceFree, err = refInt(fp, e.Value)
		case "frames":
			t.Frames, err = c.stack(fp, e.Value)
		case "compile_context", "user_metadata", "internal_metadata", "category":
			// Optional strings; another type is kept in Other.
			str, ok := e.Value.(string)
			switch {
			case !ok:
				err = extraSet(&extra().Other, e.Key, e.Value)
			case k == "compile_context":
				t.CompileContext = str
			case k == "user_metadata":
				t.UserMetadata = str
			case k == "internal_metadata":
				extra().InternalMetadata = str
			default:
				extra().Category = str
			}
		case "forward_frames":
			var ff []string
			items, lerr := c.list(fp, e.Value)
			ok := lerr == nil
			for _, it := range items {
				str, isStr := it.(string)
				ok = ok && isStr
				ff = append(ff, str)
			}
			if ok {
				extra().ForwardFrames = append(make([]string, 0, len(ff)), ff...)
			} else {
				err = extraSet(&extra().Other, e.Key, e.Value)
			}
		case "pool_id":
			if p, perr := c.poolID(fp, e.Value); perr == nil {
				x := extra()
				x.PoolID, x.HasPoolID = p, true
			} else {
				err = extraSet(&extra().Other, e.Key, e.Value)
			}
		default:
			err = extraSet(&extra().Other, e.Key, e.Value)
		}
		return err
	})
	return t, err
}

// settings and annotations map the generic form of their value to the
// typed one with convert.go's settingsFrom and annotationsFrom, as the
// fast decoder does: these two keys are decoded by the vm into generic
// Values first, so generic() (gopickle's tree to a Value) is the
// independent decoding the differential test compares against the vm's
// value(). TestSettingsFrom and TestAnnotationsFrom check the mapping
// itself against hand-written expectations.
func (c *refConverter) settings(path string, v any) (*AllocatorSettings, error) {
	g, err := generic(v)
	if err != nil {
		return nil, err
	}
	return settingsFrom(path, g)
}

func (c *refConverter) annotations(path string, v any) ([]Annotation, error) {
	g, err := generic(v)
	if err != nil {
		return nil, err
	}
	return annotationsFrom(path, g)
}

func (c *refConverter) poolID(path string, v any) (PoolID, error) {
	items, err := c.list(path, v)
	if err != nil {
		return PoolID{}, err
	}
	if len(items) != 2 {
		return PoolID{}, fmt.Errorf("%s: expected 2 items, got %d", path, len(items))
	}
	var p PoolID
	for i := range 2 {
		if p[i], err = refInt(fmt.Sprintf("%s[%d]", path, i), items[i]); err != nil {
			return PoolID{}, err
		}
	}
	return p, nil
}

func (c *refConverter) stack(path string, v any) (StackID, error) {
	l, ok := v.(*types.List)
	if !ok {
		if v == nil {
			return NoStack, nil
		}
		return NoStack, fmt.Errorf("%s: expected a list of frames, got %s", path, refTypeName(v))
	}
	if id, ok := c.stacks[l]; ok {
		return id, nil
	}
	ids := make([]FrameID, 0, len(*l))
	for i, it := range *l {
		fid, err := c.frame(fmt.Sprintf("%s[%d]", path, i), it)
		if err != nil {
			return NoStack, err
		}
		ids = append(ids, fid)
	}
	id := c.snap.Stacks.Add(ids)
	c.stacks[l] = id
	return id, nil
}

func (c *refConverter) frame(path string, v any) (FrameID, error) {
	d, ok := v.(*types.Dict)
	if !ok {
		return 0, fmt.Errorf("%s: expected a frame dict, got %s", path, refTypeName(v))
	}
	if id, ok := c.frames[d]; ok {
		return id, nil
	}
	var f Frame
	err := eachKey(path, d, func(k, fp string, e types.DictEntry) (err error) {
		switch k {
		case "name":
			f.Name, err = refStr(fp, e.Value)
		case "filename":
			f.Filename, err = refStr(fp, e.Value)
		case "line":
			f.Line, err = refInt(fp, e.Value)
		case "fx_node_op":
			f.FXNodeOp, err = refStr(fp, e.Value)
		case "fx_node_name":
			f.FXNodeName, err = refStr(fp, e.Value)
		case "fx_node_target":
			f.FXNodeTarget, err = refStr(fp, e.Value)
		case "fx_original_trace":
			f.FXOriginalTrace, err = refStr(fp, e.Value)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	id, ok := c.frameID[f]
	if !ok {
		id = FrameID(len(c.snap.Frames))
		c.snap.Frames = append(c.snap.Frames, f)
		c.frameID[f] = id
	}
	c.frames[d] = id
	return id, nil
}

// extraSet stores a generic copy of key/value in *d.
func extraSet(d *Dict, k, v any) error {
	gk, err := generic(k)
	if err != nil {
		return err
	}
	gv, err := generic(v)
	if err != nil {
		return err
	}
	*d = dictSet(*d, gk, gv)
	return nil
}

// generic converts a gopickle value to a Value.
func generic(v any) (Value, error) {
	switch t := v.(type) {
	case nil, bool, float64, string:
		return t, nil
	case int:
		return int64(t), nil
	case *big.Int:
		if t.IsInt64() {
			return t.Int64(), nil
		}
		return t, nil
	case []byte:
		return t, nil
	case *types.List:
		l, err := genericItems(*t)
		return List(l), err
	case *types.Tuple:
		l, err := genericItems(*t)
		return Tuple(l), err
	case *types.Dict:
		out := make(Dict, 0, len(*t))
		for _, it := range dictItems(t) {
			gk, err := generic(it.Key)
			if err != nil {
				return nil, err
			}
			gv, err := generic(it.Value)
			if err != nil {
				return nil, err
			}
			out = dictSet(out, gk, gv)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported pickle value of type %s", refTypeName(v))
}

// genericItems converts the items of a gopickle list or tuple.
func genericItems(items []any) ([]Value, error) {
	out := make([]Value, 0, len(items))
	for _, it := range items {
		g, err := generic(it)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

var (
	bigMinInt64 = big.NewInt(-1 << 63)
	bigMaxUint  = new(big.Int).SetUint64(^uint64(0))
)

// refWide returns v as the low 64 bits of its two's complement, or an
// error if it needs more than 64 bits or is not an int.
func refWide(path string, v any) (uint64, error) {
	switch t := v.(type) {
	case int:
		return uint64(t), nil
	case *big.Int:
		if t.Cmp(bigMinInt64) < 0 || t.Cmp(bigMaxUint) > 0 {
			return 0, fmt.Errorf("%s: integer %s does not fit in 64 bits", path, t)
		}
		if t.Sign() < 0 {
			return uint64(t.Int64()), nil
		}
		return t.Uint64(), nil
	}
	return 0, fmt.Errorf("%s: expected an int, got %s", path, refTypeName(v))
}

func refInt(path string, v any) (int64, error) {
	u, err := refWide(path, v)
	return int64(u), err
}

func refUint(path string, v any) (uint64, error) { return refWide(path, v) }

func refStr(path string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: expected a str, got %s", path, refTypeName(v))
	}
	return s, nil
}

func refBool(path string, v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%s: expected a bool, got %s", path, refTypeName(v))
	}
	return b, nil
}

// DecodeReferenceBytes is DecodeReference on an in-memory file.
func DecodeReferenceBytes(b []byte) (*Snapshot, error) {
	return DecodeReference(bytes.NewReader(b))
}

// refTypeName names the Python type of a gopickle value (or a generic
// Value), for errors.
func refTypeName(v any) string {
	switch v.(type) {
	case *types.List:
		return "list"
	case *types.Tuple:
		return "tuple"
	case *types.Dict:
		return "dict"
	}
	return typeName(v)
}
