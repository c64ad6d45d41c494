package analysis

import (
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// pythonOnly drops every C++ frame, as _record_memory_history(stacks=
// "python") records: backward allocations, made in the autograd thread,
// are then left with empty stacks.
func pythonOnly(s *snapshot.Snapshot) {
	var table snapshot.Stacks
	ids := make([]snapshot.StackID, s.Stacks.Len())
	for id := range ids {
		var keep snapshot.Stack
		for _, f := range s.Stacks.MustFrames(snapshot.StackID(id)) {
			if isPython(&s.Frames[f]) {
				keep = append(keep, f)
			}
		}
		ids[id] = table.Add(keep)
	}
	remap := func(id snapshot.StackID) snapshot.StackID {
		if id < 0 {
			return id
		}
		return ids[id]
	}
	for i := range s.Segments {
		g := &s.Segments[i]
		g.Frames = remap(g.Frames)
		for j := range g.Blocks {
			g.Blocks[j].Frames = remap(g.Blocks[j].Frames)
		}
	}
	for d, tr := range s.DeviceTraces {
		es := tr.Entries()
		for i := range es {
			es[i].Frames = remap(es[i].Frames)
		}
		s.DeviceTraces[d] = snapshot.TraceOf(es...)
	}
	s.Stacks = table
}

// TestPythonOnlyStacks classifies generated training runs recorded with
// Python stacks only and compares with the generator's truth.
func TestPythonOnlyStacks(t *testing.T) {
	for _, name := range []string{"training", "pretrace_params", "ring_wrap", "two_streams"} {
		t.Run(name, func(t *testing.T) {
			s, truth, err := gen.Snapshot(gen.Scenario(name))
			if err != nil {
				t.Fatal(err)
			}
			pythonOnly(s)
			d := Analyze(s, Options{}).Report().Devices[0]
			for _, c := range Categories() {
				if got, want := d.CategoriesAtPeak.Get(c), truth.Devices[0].CategoriesAtPeak[c.String()]; got != want {
					t.Errorf("%s = %d, want %d", c, got, want)
				}
			}
			if t.Failed() {
				for _, r := range d.CategoryRules {
					t.Logf("%s %s %d", r.Rule, r.Category, r.Bytes)
				}
			}
		})
	}
}
