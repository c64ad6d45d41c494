package snapshot

import (
	"fmt"
	"io"
)

// Format selects which torch version's keys Encode writes.
type Format int

// Formats Encode can write.
const (
	// Format26 writes the torch 2.6 keys (time_us, segment_pool_id,
	// is_expandable, segment frames, allocator_settings,
	// external_annotations). It is the zero value.
	Format26 Format = iota
	// Format20 writes the torch 2.0 legacy shape: blocks without address
	// (and with History when set), no time_us, no pool ids, no
	// is_expandable, no segment frames.
	Format20
	// Format28 adds compile_context to every trace entry.
	Format28
	// Format210 adds compile_context and user_metadata to every trace entry.
	Format210
)

// EncodeOptions controls Encode.
type EncodeOptions struct {
	// Protocol is the pickle protocol, 0-5. Python 3.8-3.13 write 4, Python
	// 3.14 writes 5.
	Protocol int
	// Format selects the torch version's keys.
	Format Format
	// FreshStackLists writes a new list object for every use of a stack
	// (its frames still memo references), as torch does for most
	// allocations; by default each distinct stack is written once.
	FreshStackLists bool
	// Traces, when set, writes device_traces from a generator instead of
	// Snapshot.DeviceTraces, so that a trace too big to hold in memory can
	// be written: Traces(d, emit) is called for each of TraceDevices
	// devices and calls emit once per entry, oldest first. emit writes
	// frames (when not nil) as a fresh list of frame references, in place
	// of e.Frames.
	Traces func(device int, emit func(e *TraceEntry, frames Stack) error) error
	// TraceDevices is the number of devices Traces writes.
	TraceDevices int
}

// Encode pickles s the way torch's _dump_snapshot (Python's pickle.dump)
// would: the same key order, one memo entry per container and string, and
// every frame and frame list written once and referenced by memo after
// that, so shared frames stay shared. Fields that are empty and optional in
// the chosen format are left out (NoStack frames, nil settings, empty
// Extra).
func Encode(w io.Writer, s *Snapshot, opt EncodeOptions) error {
	p, err := newPickler(w, opt.Protocol)
	if err != nil {
		return err
	}
	e := &encoder{p: p, s: s, f: opt.Format, fresh: opt.FreshStackLists, stream: opt.Traces, streamDevices: opt.TraceDevices, strs: map[string]int{},
		frames: make([]int, len(s.Frames)), stacks: make([]int, s.Stacks.Len())}
	for i := range e.frames {
		e.frames[i] = -1
	}
	for i := range e.stacks {
		e.stacks[i] = -1
	}
	if err := e.top(); err != nil {
		return err
	}
	return p.finish()
}

type encoder struct {
	p      *pickler
	s      *Snapshot
	f      Format
	fresh  bool
	strs   map[string]int // memo id of each string written
	frames []int          // memo id per FrameID, -1 if not yet written
	stacks []int          // memo id per StackID, -1 if not yet written
	// stream and streamDevices are EncodeOptions.Traces and TraceDevices.
	stream        func(int, func(*TraceEntry, Stack) error) error
	streamDevices int
}

// str writes s, or a memo reference to an earlier copy of it.
func (e *encoder) str(s string) {
	if id, ok := e.strs[s]; ok {
		e.p.get(id)
		return
	}
	e.p.str(s)
	e.strs[s] = e.p.memoize()
}

// kv is one dict item for dict.
type kv struct {
	k string
	v func() error
}

func (e *encoder) dict(items []kv, extra Dict) error {
	e.p.beginDict()
	n := len(items) + len(extra)
	return e.p.dictItems(n, func(i int) error {
		if i < len(items) {
			e.str(items[i].k)
			return items[i].v()
		}
		it := extra[i-len(items)]
		if err := e.p.value(it.Key, 1); err != nil {
			return err
		}
		return e.p.value(it.Value, 1)
	})
}

func (e *encoder) intv(v int64) func() error   { return func() error { e.p.int(v); return nil } }
func (e *encoder) uintv(v uint64) func() error { return func() error { e.p.uint(v); return nil } }
func (e *encoder) strv(v string) func() error  { return func() error { e.str(v); return nil } }
func (e *encoder) boolv(v bool) func() error   { return func() error { e.p.bool(v); return nil } }

func (e *encoder) top() error {
	s := e.s
	if s.Legacy {
		return e.segments(s.Segments)
	}
	items := []kv{
		{"segments", func() error { return e.segments(s.Segments) }},
		{"device_traces", func() error {
			if e.stream != nil {
				return e.streamTraces()
			}
			return e.traces(s.DeviceTraces)
		}},
	}
	if s.AllocatorSettings != nil {
		items = append(items, kv{"allocator_settings", func() error { return e.p.value(s.AllocatorSettings.Raw, 1) }})
	}
	if s.ExternalAnnotations != nil {
		items = append(items, kv{"external_annotations", func() error { return e.annotations(s.ExternalAnnotations) }})
	}
	if s.HostSegments != nil {
		items = append(items, kv{"host_segments", func() error { return e.segments(s.HostSegments) }})
	}
	if s.HostTraces != nil {
		items = append(items, kv{"host_traces", func() error { return e.traces(s.HostTraces) }})
	}
	return e.dict(items, s.Extra)
}

func (e *encoder) segments(segs []Segment) error {
	e.p.beginList()
	return e.p.listItems(len(segs), func(i int) error {
		g := &segs[i]
		items := []kv{
			{"device", e.intv(int64(g.Device))},
			{"address", e.uintv(g.Address)},
			{"total_size", e.intv(g.TotalSize)},
			{"allocated_size", e.intv(g.AllocatedSize)},
			{"active_size", e.intv(g.ActiveSize)},
			{"requested_size", e.intv(g.RequestedSize)},
			{"stream", e.uintv(g.Stream)},
			{"segment_type", e.strv(g.SegmentType)},
		}
		if e.f != Format20 {
			if g.HasPoolID {
				items = append(items, kv{"segment_pool_id", e.pool(g.PoolID)})
			}
			items = append(items, kv{"is_expandable", e.boolv(g.IsExpandable)})
		}
		items = append(items, kv{"blocks", func() error { return e.blocks(g.Blocks) }})
		if g.Frames != NoStack && e.f != Format20 {
			items = append(items, kv{"frames", e.stackv(g.Frames)})
		}
		return e.dict(items, g.Extra)
	})
}

func (e *encoder) pool(p PoolID) func() error {
	return func() error {
		return e.p.tuple(2, func(i int) error { e.p.int(p[i]); return nil })
	}
}

func (e *encoder) blocks(bs []Block) error {
	e.p.beginList()
	return e.p.listItems(len(bs), func(i int) error {
		b := &bs[i]
		var items []kv
		if !b.AddressComputed && e.f != Format20 {
			items = append(items, kv{"address", e.uintv(b.Address)})
		}
		items = append(items,
			kv{"size", e.intv(b.Size)},
			kv{"requested_size", e.intv(b.RequestedSize)},
			kv{"state", e.strv(string(b.State))})
		if b.Frames != NoStack {
			items = append(items, kv{"frames", e.stackv(b.Frames)})
		}
		if b.History != nil {
			items = append(items, kv{"history", func() error { return e.history(b.History) }})
		}
		return e.dict(items, b.Extra)
	})
}

func (e *encoder) history(hs []HistoryEntry) error {
	e.p.beginList()
	return e.p.listItems(len(hs), func(i int) error {
		h := &hs[i]
		items := []kv{{"addr", e.uintv(h.Addr)}, {"real_size", e.intv(h.RealSize)}}
		if h.Frames != NoStack {
			items = append(items, kv{"frames", e.stackv(h.Frames)})
		}
		if h.CPPFrames != "" {
			items = append(items, kv{"cpp_frames", e.strv(h.CPPFrames)})
		}
		return e.dict(items, nil)
	})
}

func (e *encoder) traces(ts []Trace) error {
	e.p.beginList()
	return e.p.listItems(len(ts), func(d int) error {
		tr := ts[d]
		e.p.beginList()
		return e.p.listItems(tr.Len(), func(i int) error {
			t := tr.Entry(i)
			return e.entry(&t)
		})
	})
}

// streamTraces writes device_traces from EncodeOptions.Traces, buffering
// one batch of entries at a time as CPython's pickler does.
func (e *encoder) streamTraces() error {
	type pending struct {
		e      TraceEntry
		frames Stack
	}
	e.p.beginList()
	return e.p.listItems(e.streamDevices, func(d int) error {
		e.p.beginList()
		batch := make([]pending, 0, batchSize)
		flush := func() error {
			err := e.p.listItems(len(batch), func(i int) error { return e.entryWith(&batch[i].e, batch[i].frames) })
			batch = batch[:0]
			return err
		}
		err := e.stream(d, func(t *TraceEntry, frames Stack) error {
			batch = append(batch, pending{*t, append(Stack(nil), frames...)})
			if len(batch) == batchSize {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
		return flush()
	})
}

func (e *encoder) entry(t *TraceEntry) error { return e.entryWith(t, nil) }

// entryWith writes a trace entry; frames, when not nil, replaces its Frames
// by a fresh list of these frames.
func (e *encoder) entryWith(t *TraceEntry, frames Stack) error {
	items := make([]kv, 0, 10)
	items = append(items, kv{"action", e.strv(string(t.Action))})
	if t.Action == ActionOOM {
		items = append(items, kv{"device_free", e.intv(t.DeviceFree)})
	} else {
		items = append(items, kv{"addr", e.uintv(t.Addr)})
	}
	items = append(items, kv{"size", e.intv(t.Size)}, kv{"stream", e.uintv(t.Stream)})
	if e.f != Format20 {
		items = append(items, kv{"time_us", e.intv(t.TimeUS)})
	}
	switch {
	case frames != nil:
		items = append(items, kv{"frames", func() error {
			e.p.beginList()
			return e.p.listItems(len(frames), func(i int) error { return e.frame(frames[i]) })
		}})
	case t.Frames != NoStack:
		items = append(items, kv{"frames", e.stackv(t.Frames)})
	}
	if e.f == Format28 || e.f == Format210 {
		items = append(items, kv{"compile_context", e.strv(t.CompileContext)})
	}
	if e.f == Format210 {
		items = append(items, kv{"user_metadata", e.strv(t.UserMetadata)})
	}
	var other Dict
	if x := t.Extra; x != nil {
		if x.ForwardFrames != nil {
			ff := x.ForwardFrames
			items = append(items, kv{"forward_frames", func() error {
				e.p.beginList()
				return e.p.listItems(len(ff), func(i int) error { e.str(ff[i]); return nil })
			}})
		}
		if x.HasPoolID {
			items = append(items, kv{"pool_id", e.pool(x.PoolID)})
		}
		if x.InternalMetadata != "" {
			items = append(items, kv{"internal_metadata", e.strv(x.InternalMetadata)})
		}
		if x.Category != "" {
			items = append(items, kv{"category", e.strv(x.Category)})
		}
		other = x.Other
	}
	return e.dict(items, other)
}

func (e *encoder) annotations(as []Annotation) error {
	e.p.beginList()
	return e.p.listItems(len(as), func(i int) error {
		a := &as[i]
		return e.dict([]kv{
			{"stage", e.strv(a.Stage)},
			{"name", e.strv(a.Name)},
			{"device", e.intv(int64(a.Device))},
			{"time_us", e.intv(a.TimeUS)},
		}, a.Extra)
	})
}

// stackv writes a frame list once and memo references after that.
func (e *encoder) stackv(id StackID) func() error {
	return func() error {
		if id < 0 || int(id) >= e.s.Stacks.Len() {
			return fmt.Errorf("stack id %d outside the table of %d", id, e.s.Stacks.Len())
		}
		if m := e.stacks[id]; m >= 0 && !e.fresh {
			e.p.get(m)
			return nil
		}
		st, err := e.s.Stacks.Frames(id)
		if err != nil {
			return err
		}
		e.stacks[id] = e.p.beginList()
		return e.p.listItems(len(st), func(i int) error { return e.frame(st[i]) })
	}
}

func (e *encoder) frame(id FrameID) error {
	if id < 0 || int(id) >= len(e.s.Frames) {
		return fmt.Errorf("frame id %d outside the table of %d", id, len(e.s.Frames))
	}
	if m := e.frames[id]; m >= 0 {
		e.p.get(m)
		return nil
	}
	f := &e.s.Frames[id]
	items := []kv{{"name", e.strv(f.Name)}, {"filename", e.strv(f.Filename)}, {"line", e.intv(f.Line)}}
	if e.f == Format20 {
		items[0], items[1] = items[1], items[0]
	}
	for _, x := range []struct{ k, v string }{
		{"fx_node_op", f.FXNodeOp}, {"fx_node_name", f.FXNodeName},
		{"fx_node_target", f.FXNodeTarget}, {"fx_original_trace", f.FXOriginalTrace},
	} {
		if x.v != "" {
			items = append(items, kv{x.k, e.strv(x.v)})
		}
	}
	// The frame's memo id is the dict's, taken by beginDict inside dict.
	e.frames[id] = e.p.nmemo
	return e.dict(items, nil)
}
