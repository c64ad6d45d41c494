package analysis

import (
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// TestGeneratedScenarios replays every scenario of the fixture generator
// (ring wrap, expandable segments, two streams, OOM, protocol 5, parameters
// before the trace, torch 2.0 and 2.10 keys, two devices) and compares with
// the truth its allocator simulation recorded.
func TestGeneratedScenarios(t *testing.T) {
	for _, name := range gen.Scenarios() {
		t.Run(name, func(t *testing.T) {
			b, truth, err := gen.Bytes(gen.Scenario(name))
			if err != nil {
				t.Fatal(err)
			}
			s, err := snapshot.DecodeBytes(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			a := Analyze(s, Options{TimelinePoints: 90})
			r := a.Report()
			if len(r.Devices) != len(truth.Devices) {
				t.Fatalf("devices = %d, want %d", len(r.Devices), len(truth.Devices))
			}
			for i, dt := range truth.Devices {
				d := r.Devices[i]
				checks := []struct {
					what      string
					got, want int64
				}{
					{"device", int64(d.Device), int64(dt.Device)},
					{"entries", int64(d.Entries), int64(dt.Entries)},
					{"initial allocated", d.InitialAllocatedBytes, dt.InitialAllocated},
					{"peak allocated", d.PeakAllocatedBytes, dt.PeakAllocated},
					{"peak index", int64(d.PeakIndex), int64(dt.PeakIndex)},
					{"initial reserved", d.InitialReservedBytes, dt.InitialReserved},
					{"peak reserved", d.PeakReservedBytes, dt.PeakReserved},
					{"final allocated", d.FinalAllocatedBytes, dt.FinalAllocated},
					{"final reserved", d.FinalReservedBytes, dt.FinalReserved},
					{"final live", d.FinalAllocatedBytes + d.FinalPendingFreeBytes, dt.FinalLive},
					{"oom events", int64(len(d.OOMEvents)), int64(len(dt.OOMs))},
				}
				if dt.PeakIndex >= 0 {
					checks = append(checks, struct {
						what      string
						got, want int64
					}{"peak time", d.PeakTimeUS, dt.PeakTimeUS})
				}
				for _, c := range checks {
					if c.got != c.want {
						t.Errorf("device %d: %s = %d, want %d", dt.Device, c.what, c.got, c.want)
					}
				}
				for action, n := range dt.Actions {
					if d.Actions[string(action)] != n {
						t.Errorf("device %d: %s entries = %d, want %d", dt.Device, action, d.Actions[string(action)], n)
					}
				}
				for k, o := range dt.OOMs {
					if k >= len(d.OOMEvents) {
						break
					}
					g := d.OOMEvents[k]
					if g.Index != o.Index || g.RequestedBytes != o.Requested || g.DeviceFreeBytes != o.DeviceFree ||
						g.AllocatedBytes != o.Allocated || g.ReservedBytes != o.Reserved {
						t.Errorf("device %d: oom %+v, want %+v", dt.Device, g, o)
					}
				}
				// torch 2.0 traces and context=None recordings have no
				// stacks, so only the blocks still alive at the end can be
				// labelled: the split is not checked.
				if name != "legacy20" && gen.Scenario(name).Loop.Stacks != gen.StacksNone {
					for _, c := range Categories() {
						if got, want := d.CategoriesAtPeak.Get(c), dt.CategoriesAtPeak[c.String()]; got != want {
							t.Errorf("device %d: %s at peak = %d, want %d", dt.Device, c, got, want)
						}
					}
				}
				if len(d.Warnings) > 0 {
					t.Errorf("device %d: warnings %q", dt.Device, d.Warnings)
				}
				checkInvariants(t, a, a.Devices[i], d)
			}
		})
	}
}
