package analysis

import (
	"oomscope/snapshot"
)

// builder assembles small snapshots by hand for tests with known answers.
type builder struct {
	s *snapshot.Snapshot
}

func newBuilder() *builder {
	return &builder{s: &snapshot.Snapshot{Protocol: 4, DeviceTraces: []snapshot.Trace{{}}}}
}

// py is a Python frame.
func py(file string, line int64, name string) snapshot.Frame {
	return snapshot.Frame{Filename: file, Line: line, Name: name}
}

// cpp is an unsymbolized C++ frame.
func cpp(name string) snapshot.Frame { return snapshot.Frame{Filename: "??", Name: name} }

// stack adds a stack (innermost first) and returns its ID.
func (b *builder) stack(frames ...snapshot.Frame) snapshot.StackID {
	var st snapshot.Stack
	for _, f := range frames {
		b.s.Frames = append(b.s.Frames, f)
		st = append(st, snapshot.FrameID(len(b.s.Frames)-1))
	}
	return b.s.Stacks.Add(st)
}

// ev appends a trace entry to device 0 and returns its index.
func (b *builder) ev(action snapshot.Action, addr uint64, size int64, frames snapshot.StackID) int {
	t := &b.s.DeviceTraces[0]
	t.Append(snapshot.TraceEntry{Action: action, Addr: addr, Size: size, Frames: frames, TimeUS: int64(1000 + t.Len())})
	return t.Len() - 1
}

// edit changes entry i of device 0.
func (b *builder) edit(i int, change func(e *snapshot.TraceEntry)) {
	es := b.s.DeviceTraces[0].Entries()
	change(&es[i])
	b.s.DeviceTraces[0] = snapshot.TraceOf(es...)
}

// blk is a block for seg.
type blk struct {
	size, requested int64
	state           snapshot.BlockState
	frames          snapshot.StackID
}

// seg adds a device-0 segment whose blocks tile it from addr.
func (b *builder) seg(addr uint64, expandable bool, blocks ...blk) {
	sg := snapshot.Segment{Address: addr, IsExpandable: expandable, SegmentType: "large", Frames: snapshot.NoStack}
	a := addr
	for _, bl := range blocks {
		sg.Blocks = append(sg.Blocks, snapshot.Block{Address: a, Size: bl.size, RequestedSize: bl.requested,
			State: bl.state, Frames: bl.frames})
		sg.TotalSize += bl.size
		a += uint64(bl.size)
	}
	b.s.Segments = append(b.s.Segments, sg)
}

func live(size, requested int64, frames snapshot.StackID) blk {
	return blk{size, requested, snapshot.StateActiveAllocated, frames}
}

func free(size int64) blk { return blk{size, size, snapshot.StateInactive, snapshot.EmptyStack} }
