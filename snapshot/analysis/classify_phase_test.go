package analysis

import (
	"math/rand/v2"
	"testing"
)

// TestPhaseRule: phaseRule (classify's inlined path for allocations of the
// forward, backward and optimizer phases) gives traceRule's rule for every
// allocation of those phases, over random phase runs (some forward runs
// with a backward start) and allocations queried in trace order, in
// random order and before the first run, so that the run hint is right,
// one behind, far off or unset.
func TestPhaseRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	phases := []phase{phaseForward, phaseBackward, phaseOptimizer}
	for trial := range 200 {
		n := int32(50 + rng.IntN(500))
		var runs []phaseRun
		for s := int32(1 + rng.IntN(20)); s < n; s += int32(1 + rng.IntN(40)) {
			r := phaseRun{phase: phases[rng.IntN(3)], start: s, end: n, bwdStart: -1}
			if len(runs) > 0 {
				runs[len(runs)-1].end = s
			}
			runs = append(runs, r)
		}
		for i := range runs {
			r := &runs[i]
			r.last = r.start + int32(rng.IntN(int(r.end-r.start)))
			if r.phase == phaseForward && rng.IntN(2) == 0 {
				r.bwdStart = r.last + int32(rng.IntN(int(r.end-r.last)+1))
			}
		}
		got, want := &classifier{runs: runs}, &classifier{runs: runs}
		check := func(start int32) {
			end := start + int32(rng.IntN(int(n-start)+1))
			p := phases[rng.IntN(3)]
			if g, w := got.phaseRule(start, end, p), want.traceRule(start, end, 0, p); g != w {
				t.Fatalf("trial %d, runs %v: allocation %d-%d of phase %d: phaseRule %d, traceRule %d", trial, runs, start, end, p, g, w)
			}
		}
		for s := range n {
			check(s)
		}
		for range 2 * n {
			check(int32(rng.IntN(int(n))))
		}
	}
}
