package app

import (
	"fmt"
	"testing"

	"oomscope/snapshot/analysis"
)

// TestPhaseShades checks each span's band against its phase and step,
// with phases in every order and one the analysis does not name.
func TestPhaseShades(t *testing.T) {
	phases := []string{analysis.PhaseForward, analysis.PhaseBackward, analysis.PhaseForward, analysis.PhaseOptimizer,
		"custom", analysis.PhaseOther, analysis.PhaseOptimizer, analysis.PhaseBackward}
	d := &analysis.DeviceReport{}
	for k, ph := range phases {
		d.PhaseSpans = append(d.PhaseSpans, analysis.PhaseSpan{Step: k / 3, Phase: ph, FirstEntry: 10 * k, LastEntry: 10*k + 9})
	}
	got := phaseShades(d)
	if len(got) != len(phases) {
		t.Fatalf("%d shades for %d spans", len(got), len(phases))
	}
	for k, ph := range phases {
		want := fmt.Sprintf("shade-%s shade-step-%d", ph, (k/3)%2)
		if s := got[k]; s.Class != want || s.From != 10*k || s.To != 10*k+9 {
			t.Errorf("span %d: %+v, want class %q over %d–%d", k, s, want, 10*k, 10*k+9)
		}
	}
}
