package load

import (
	"testing"

	"oomscope/snapshot/analysis"
)

// TestStepsBufferCut reads every cut-short prefix, and a few corrupted
// copies, of a device's packed steps: each is an error, never a panic or
// a silently shorter list.
func TestStepsBufferCut(t *testing.T) {
	f := loadGenerated(t, "everything")
	d := &f.Report.Devices[f.Report.Busiest()]
	if len(d.Steps) == 0 || len(d.PhasePeaks) == 0 || len(d.PhaseSpans) == 0 {
		t.Fatalf("%d steps, %d phase peaks, %d spans: the test does not test", len(d.Steps), len(d.PhasePeaks), len(d.PhaseSpans))
	}
	b := packSteps(d)
	var whole analysis.DeviceReport
	if err := unpackSteps(b, &whole); err != nil || len(whole.PhaseSpans) != len(d.PhaseSpans) {
		t.Fatalf("the whole buffer: %v, %d spans", err, len(whole.PhaseSpans))
	}
	for n := range len(b) {
		var got analysis.DeviceReport
		if err := unpackSteps(b[:n], &got); err == nil {
			t.Fatalf("a buffer cut to %d of %d bytes reads without an error", n, len(b))
		}
	}
	if err := unpackSteps(append(b[:len(b):len(b)], 0), new(analysis.DeviceReport)); err == nil {
		t.Errorf("a trailing byte reads without an error")
	}
	// A huge count and an unknown phase name.
	for _, bad := range [][]byte{{0, 0xff, 0xff, 0xff, 0xff, 0x0f}, {1, 1, 'x', 1, 2, 2, 5, 0, 0, 1}} {
		if err := unpackSteps(bad, new(analysis.DeviceReport)); err == nil {
			t.Errorf("% x reads without an error", bad)
		}
	}
}
