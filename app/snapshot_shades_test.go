package app

import (
	"fmt"
	"testing"

	"oomscope/snapshot/analysis"
)

// TestPhaseShades checks each span's band, class and tooltip against its
// phase and step, with phases in every order and a number that is no
// phase (a class of nothing then).
func TestPhaseShades(t *testing.T) {
	names := map[analysis.Phase]string{analysis.PhaseForward: "forward", analysis.PhaseBackward: "backward",
		analysis.PhaseOptimizer: "optimizer", analysis.PhaseOther: "other"}
	phases := []analysis.Phase{analysis.PhaseForward, analysis.PhaseBackward, analysis.PhaseForward, analysis.PhaseOptimizer,
		analysis.PhaseOther, 9, analysis.PhaseOptimizer, analysis.PhaseBackward}
	d := &analysis.DeviceReport{}
	for k, ph := range phases {
		d.PhaseSpans = append(d.PhaseSpans, analysis.PhaseSpan{Step: k / 3, Phase: ph, FirstEntry: 10 * k, LastEntry: 10*k + 9})
	}
	got, class, label := phaseShades(d), phaseShadeClass(d), phaseShadeLabel(d)
	if len(got) != len(phases) {
		t.Fatalf("%d shades for %d spans", len(got), len(phases))
	}
	for k, ph := range phases {
		want := ""
		if n, ok := names[ph]; ok {
			want = fmt.Sprintf("shade-%s shade-step-%d", n, (k/3)%2)
			if l, w := label(k), fmt.Sprintf("step %d: %s (entries %d–%d)", k/3, n, 10*k, 10*k+9); l != w {
				t.Errorf("span %d: tooltip %q, want %q", k, l, w)
			}
		}
		if s := got[k]; class(k) != want || s.From != 10*k || s.To != 10*k+9 {
			t.Errorf("span %d: %+v class %q, want class %q over %d–%d", k, s, class(k), want, 10*k, 10*k+9)
		}
	}
}
