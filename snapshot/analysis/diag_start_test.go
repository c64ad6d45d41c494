package analysis

import (
	"reflect"
	"testing"

	"oomscope/snapshot/gen"
)

// TestStepsHeadSuffices checks that the steps found from stepsHead (what
// Report hands the steps' goroutine before the rest of the report is
// made) are those found from the complete report, for every scenario,
// with no OOM event and with one at entries all over the trace.
func TestStepsHeadSuffices(t *testing.T) {
	oomPhases := map[Phase]int{}
	for _, name := range gen.Scenarios() {
		t.Run(name, func(t *testing.T) {
			a, r, _ := analyzeScenario(t, name)
			for di, d := range a.Devices {
				full := r.Devices[di]
				src := newSource(d)
				head := stepsHead(d, &full)
				if got, want := findSteps(src, &head), findSteps(src, &full); !reflect.DeepEqual(got, want) {
					t.Fatalf("device %d: the steps from the head differ from those of the report:\n got %+v\nwant %+v", d.ID, got.info, want.info)
				}
				n := d.Trace.Len()
				for i := 0; i < n; i += max(1, n/31) {
					dd := *d
					dd.ooms = []int32{int32(i / 2), int32(i)}
					oom := full
					oom.OOMEvents = []OOMEvent{{Index: i / 2}, {Index: i}}
					head := stepsHead(&dd, &oom)
					got, want := findSteps(src, &head), findSteps(src, &oom)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("device %d, OOMs at entries %d and %d: the steps from the head differ (OOM phase %q, want %q)",
							d.ID, i/2, i, got.oomPhase, want.oomPhase)
					}
					oomPhases[want.oomPhase]++
				}
			}
		})
	}
	if len(oomPhases) < 3 {
		t.Errorf("OOM phases sampled %v: want at least 3 distinct, or the test checks little", oomPhases)
	}
}
