package snapshot

import (
	"fmt"
	"reflect"
)

// plainSnapshot is a Snapshot in a form reflect.DeepEqual can compare:
// traces as entry slices, stacks as frame lists, and frame and stack IDs
// renumbered in order of first use (segments with their blocks, block
// history and segment frames, then device traces, host segments, host
// traces), so that the IDs do not depend on the order a decoder met them.
type plainSnapshot struct {
	Protocol            int
	Legacy              bool
	Segments            []Segment
	DeviceTraces        [][]TraceEntry
	AllocatorSettings   *AllocatorSettings
	ExternalAnnotations []Annotation
	HostSegments        []Segment
	HostTraces          [][]TraceEntry
	Frames              []Frame
	Stacks              []Stack
	Extra               Dict
}

// plain converts s (which it does not modify).
func plain(s *Snapshot) *plainSnapshot {
	p := &plainSnapshot{Protocol: s.Protocol, Legacy: s.Legacy, AllocatorSettings: s.AllocatorSettings,
		ExternalAnnotations: s.ExternalAnnotations, Extra: s.Extra, Frames: []Frame{}, Stacks: []Stack{{}}}
	stackMap := map[StackID]StackID{EmptyStack: EmptyStack}
	frameMap := map[FrameID]FrameID{}
	remap := func(id StackID) StackID {
		if id < 0 || int(id) >= s.Stacks.Len() {
			return id
		}
		if n, ok := stackMap[id]; ok {
			return n
		}
		var st Stack
		frames, err := s.Stacks.Frames(id)
		if err != nil {
			panic(err)
		}
		for _, f := range frames {
			n, ok := frameMap[f]
			if !ok {
				n = FrameID(len(p.Frames))
				p.Frames = append(p.Frames, s.Frames[f])
				frameMap[f] = n
			}
			st = append(st, n)
		}
		n := StackID(len(p.Stacks))
		p.Stacks = append(p.Stacks, st)
		stackMap[id] = n
		return n
	}
	segs := func(list []Segment) []Segment {
		if list == nil {
			return nil
		}
		out := make([]Segment, len(list))
		for i, g := range list {
			g.Blocks = append([]Block(nil), g.Blocks...)
			if list[i].Blocks != nil && g.Blocks == nil {
				g.Blocks = []Block{}
			}
			for j := range g.Blocks {
				b := &g.Blocks[j]
				b.Frames = remap(b.Frames)
				if b.History != nil {
					b.History = append([]HistoryEntry{}, b.History...)
				}
				for k := range b.History {
					b.History[k].Frames = remap(b.History[k].Frames)
				}
			}
			g.Frames = remap(g.Frames)
			out[i] = g
		}
		return out
	}
	traces := func(list []Trace) [][]TraceEntry {
		if list == nil {
			return nil
		}
		out := make([][]TraceEntry, len(list))
		for d, tr := range list {
			out[d] = tr.Entries()
			for i := range out[d] {
				out[d][i].Frames = remap(out[d][i].Frames)
			}
		}
		return out
	}
	p.Segments = segs(s.Segments)
	p.DeviceTraces = traces(s.DeviceTraces)
	p.HostSegments = segs(s.HostSegments)
	p.HostTraces = traces(s.HostTraces)
	return p
}

// Equal reports whether a and b hold the same snapshot: the same fields
// and entries, and stacks with the same frames, whatever their IDs (frame
// and stack IDs are compared renumbered in order of first use). Lazy stacks
// are read from their source.
func Equal(a, b *Snapshot) bool { return reflect.DeepEqual(plain(a), plain(b)) }

// Diff describes the first difference between two snapshots (for test
// failure messages); see Equal.
func Diff(sa, sb *Snapshot) string {
	a, b := plain(sa), plain(sb)
	if a.Protocol != b.Protocol || a.Legacy != b.Legacy {
		return fmt.Sprintf("protocol/legacy %d/%v vs %d/%v", a.Protocol, a.Legacy, b.Protocol, b.Legacy)
	}
	if len(a.Segments) != len(b.Segments) {
		return fmt.Sprintf("%d vs %d segments", len(a.Segments), len(b.Segments))
	}
	for i := range a.Segments {
		if !reflect.DeepEqual(a.Segments[i], b.Segments[i]) {
			return fmt.Sprintf("segment %d:\n%+v\nvs\n%+v", i, a.Segments[i], b.Segments[i])
		}
	}
	if len(a.DeviceTraces) != len(b.DeviceTraces) {
		return fmt.Sprintf("%d vs %d device traces", len(a.DeviceTraces), len(b.DeviceTraces))
	}
	for d := range a.DeviceTraces {
		if len(a.DeviceTraces[d]) != len(b.DeviceTraces[d]) {
			return fmt.Sprintf("device %d: %d vs %d entries", d, len(a.DeviceTraces[d]), len(b.DeviceTraces[d]))
		}
		for i := range a.DeviceTraces[d] {
			if !reflect.DeepEqual(a.DeviceTraces[d][i], b.DeviceTraces[d][i]) {
				return fmt.Sprintf("device %d entry %d:\n%+v\nvs\n%+v", d, i, a.DeviceTraces[d][i], b.DeviceTraces[d][i])
			}
		}
	}
	if !reflect.DeepEqual(a.Frames, b.Frames) {
		return fmt.Sprintf("frame tables differ (%d vs %d frames)", len(a.Frames), len(b.Frames))
	}
	if !reflect.DeepEqual(a.Stacks, b.Stacks) {
		return fmt.Sprintf("stack tables differ (%d vs %d stacks)", len(a.Stacks), len(b.Stacks))
	}
	if !reflect.DeepEqual(a.AllocatorSettings, b.AllocatorSettings) {
		return fmt.Sprintf("allocator settings %+v vs %+v", a.AllocatorSettings, b.AllocatorSettings)
	}
	if !reflect.DeepEqual(a.ExternalAnnotations, b.ExternalAnnotations) {
		return "external annotations differ"
	}
	return fmt.Sprintf("other fields differ: extra %v vs %v, host %d/%d vs %d/%d", a.Extra, b.Extra,
		len(a.HostSegments), len(a.HostTraces), len(b.HostSegments), len(b.HostTraces))
}
