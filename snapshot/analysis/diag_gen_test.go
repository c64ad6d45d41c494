package analysis

import (
	"fmt"
	"slices"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// analyzeScenario generates, decodes and analyses a generator scenario.
func analyzeScenario(t *testing.T, name string) (*Analysis, *Report, gen.Truth) {
	t.Helper()
	b, truth, err := gen.Bytes(gen.Scenario(name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.DecodeBytes(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := Analyze(s, Options{})
	return a, a.Report(), truth
}

// TestStepsMatchGenerator compares the steps (bounds, peak, step-end
// memory, micro-batches, evaluation passes), the phase peaks and the peak's
// step and phase with what the generator's loop did, on every scenario.
func TestStepsMatchGenerator(t *testing.T) {
	for _, name := range gen.Scenarios() {
		t.Run(name, func(t *testing.T) {
			opt := gen.Scenario(name)
			_, r, truth := analyzeScenario(t, name)
			for i, dt := range truth.Devices {
				d := r.Devices[i]
				if name == "legacy20" {
					// torch 2.0: no stacks, no annotations, no times.
					if len(d.Steps) != 1 || d.StepInfo.Rule != stepRuleNone || d.Steps[0].PeakAllocatedBytes != dt.PeakAllocated {
						t.Errorf("legacy trace: steps %+v (%s), want one step with the peak", d.Steps, d.StepInfo.Rule)
					}
					continue
				}
				if len(d.Steps) != len(dt.Steps) {
					t.Fatalf("device %d: %d steps, want %d (%+v)", dt.Device, len(d.Steps), len(dt.Steps), d.Steps)
				}
				stacked := opt.Loop.Stacks != gen.StacksNone
				for k, want := range dt.Steps {
					got := d.Steps[k]
					if got.FirstEntry != want.First || got.LastEntry != want.Last || got.PeakAllocatedBytes != want.PeakAllocated ||
						got.EndAllocatedBytes != want.EndAllocated {
						t.Errorf("device %d step %d: %+v, want %+v", dt.Device, k, got, want)
					}
					_, optimized := want.PhasePeaks[PhaseOptimizer.String()]
					if wantPartial := want.Partial || !optimized; got.Partial != wantPartial {
						t.Errorf("device %d step %d: partial %v, want %v", dt.Device, k, got.Partial, wantPartial)
					}
					if got.PeakAllocatedBytes != stepPhases(&d, k).max() {
						t.Errorf("device %d step %d: peak %d, phase peaks %+v", dt.Device, k, got.PeakAllocatedBytes, stepPhases(&d, k))
					}
					complete := !got.Partial
					if stacked && complete {
						if micro := max(1, opt.Loop.Accum); got.MicroBatches != micro {
							t.Errorf("device %d step %d: %d micro-batches, want %d", dt.Device, k, got.MicroBatches, micro)
						}
						eval := 0
						if opt.Loop.EvalEvery > 0 && k > 0 && k%opt.Loop.EvalEvery == 0 {
							eval = 1
						}
						if got.EvalPasses != eval {
							t.Errorf("device %d step %d: %d evaluation passes, want %d", dt.Device, k, got.EvalPasses, eval)
						}
					}
					if !stacked {
						continue // forward and backward are "other" without stacks
					}
					for ph, b := range want.PhasePeaks {
						if g := stepPhases(&d, k).get(ph); g != b {
							t.Errorf("device %d step %d: %s peak %d, want %d", dt.Device, k, ph, g, b)
						}
					}
					if len(stepPhases(&d, k)) != len(want.PhasePeaks) {
						t.Errorf("device %d step %d: phases %+v, want %v", dt.Device, k, stepPhases(&d, k), want.PhasePeaks)
					}
				}
				if d.PeakPhase.Step != dt.PeakStep || stacked && d.PeakPhase.Phase.String() != dt.PeakPhase {
					t.Errorf("device %d: peak in %+v, want step %d %s", dt.Device, d.PeakPhase, dt.PeakStep, dt.PeakPhase)
				}
			}
		})
	}
}

// phasePeaks is one step's phase peaks, for tests.
type phasePeaks []PhasePeak

// stepPhases returns the phase peaks of step k.
func stepPhases(d *DeviceReport, k int) phasePeaks {
	var out phasePeaks
	for _, p := range d.PhasePeaks {
		if p.Step == k {
			out = append(out, p)
		}
	}
	return out
}

func (ps phasePeaks) get(ph string) int64 {
	for _, p := range ps {
		if p.Phase.String() == ph {
			return p.PeakAllocatedBytes
		}
	}
	return -1
}

func (ps phasePeaks) max() int64 {
	var m int64 = -1
	for _, p := range ps {
		m = max(m, p.PeakAllocatedBytes)
	}
	return m
}

// TestLeakMatchesGenerator checks the leak verdict on every scenario: the
// two leaking loops give their site, bytes and blocks per step with high
// confidence; every other loop (varying sequence lengths, first-step
// optimizer state, evaluation passes, accumulation, a window starting
// mid-step, expandable segments' cache growth) gives none.
func TestLeakMatchesGenerator(t *testing.T) {
	for _, name := range gen.Scenarios() {
		t.Run(name, func(t *testing.T) {
			a, r, truth := analyzeScenario(t, name)
			for i, dt := range truth.Devices {
				lk := r.Devices[i].Leak
				if dt.Leak == nil {
					if lk != nil {
						t.Errorf("device %d: false leak %+v", dt.Device, *lk)
					}
					continue
				}
				if lk == nil {
					t.Fatalf("device %d: no leak found, want %+v", dt.Device, *dt.Leak)
				}
				if lk.BytesPerStep != dt.Leak.BytesPerStep || len(lk.Sites) != 1 || lk.Sites[0].Site != dt.Leak.Site ||
					lk.Sites[0].Blocks != dt.Leak.Blocks || lk.Confidence != "high" {
					t.Errorf("device %d: leak %+v, want %+v with high confidence", dt.Device, *lk, *dt.Leak)
				}
				if lk.GrowthPerStep != dt.Leak.BytesPerStep {
					t.Errorf("device %d: step-end growth %d, want %d", dt.Device, lk.GrowthPerStep, dt.Leak.BytesPerStep)
				}
				if len(lk.Sites) > 0 && len(lk.Sites[0].Stack) == 0 {
					t.Errorf("device %d: leak site without a stack", dt.Device)
				}
				if ls := lk.Sites[0]; !slices.Equal(ls.Stack, leakExample(a.Devices[i], r.Devices[i], ls.SiteIndex)) {
					t.Errorf("device %d: leak site stack %q, want the largest kept block's %q", dt.Device, ls.Stack,
						leakExample(a.Devices[i], r.Devices[i], ls.SiteIndex))
				}
				kind := map[string]LeakKind{gen.LeakHistory: "tensors", gen.LeakLossGraph: "graph"}[gen.Scenario(name).Loop.Leak]
				if lk.Kind != kind {
					t.Errorf("device %d: leak kind %q, want %q", dt.Device, lk.Kind, kind)
				}
				if want := len(dt.Steps) - 1; lk.Steps != want {
					t.Errorf("device %d: verdict on %d steps, want %d", dt.Device, lk.Steps, want)
				}
			}
		})
	}
}

// leakExample is the displayed stack of the largest allocation of site
// that the leak rule counts (made in the trace in a complete step before
// the last, alive at the end, never freed; the first of equals), read from
// the allocations and the steps.
func leakExample(d *Device, rep DeviceReport, site int32) []string {
	n := d.Trace.Len()
	var best *Allocation
	for _, al := range allocations(d) {
		if al.Site != site || al.Start < 0 || int(al.End) != n || al.FreeRequested >= 0 {
			continue
		}
		for j, s := range rep.Steps {
			if j < len(rep.Steps)-1 && !s.Partial && s.FirstEntry <= int(al.Start) && int(al.Start) <= s.LastEntry &&
				(best == nil || al.Size > best.Size) {
				best = &al
			}
		}
	}
	if best == nil {
		return nil
	}
	return DisplayStack(d.a.Snap, best.Stack)
}

// TestLeakConfidence checks that the verdict gets less sure with fewer
// steps: three steps leave two to judge (medium), two steps one (no
// verdict).
func TestLeakConfidence(t *testing.T) {
	for _, tt := range []struct {
		steps int
		want  string
	}{{5, "high"}, {4, "high"}, {3, "medium"}, {2, ""}} {
		s, _, err := gen.Snapshot(gen.Options{Seed: 3, Steps: tt.steps, Loop: gen.Loop{Leak: gen.LeakHistory}})
		if err != nil {
			t.Fatal(err)
		}
		lk := Analyze(s, Options{}).Report().Devices[0].Leak
		got := ""
		if lk != nil {
			got = lk.Confidence
		}
		if got != tt.want {
			t.Errorf("%d steps: confidence %q, want %q", tt.steps, got, tt.want)
		}
	}
}

// TestPhaseSpans checks that the phase spans tile each step of the
// training scenario, forward → backward → optimizer, each span's phase
// the one the generator recorded at its entries' peak.
func TestPhaseSpans(t *testing.T) {
	_, r, truth := analyzeScenario(t, "training")
	d := r.Devices[0]
	for k, st := range d.Steps {
		var phases []Phase
		next := st.FirstEntry
		for _, sp := range d.PhaseSpans {
			if sp.Step != k {
				continue
			}
			if sp.FirstEntry != next {
				t.Errorf("step %d: span %+v does not follow entry %d", k, sp, next-1)
			}
			next = sp.LastEntry + 1
			phases = append(phases, sp.Phase)
		}
		if next != st.LastEntry+1 {
			t.Errorf("step %d: spans end at %d, step at %d", k, next-1, st.LastEntry)
		}
		want := []Phase{PhaseForward, PhaseBackward, PhaseOptimizer}
		if _, ok := truth.Devices[0].Steps[k].PhasePeaks["other"]; ok {
			want = append([]Phase{PhaseOther}, want...)
		}
		if fmt.Sprint(phases) != fmt.Sprint(want) {
			t.Errorf("step %d phases %v, want %v", k, phases, want)
		}
	}
}

// TestOOMPhaseFromSpans checks the phase findSteps gives an OOM event's
// entry against the phase spans it reports (the span holding the entry,
// else "other"), for entries all over the trace of every scenario.
func TestOOMPhaseFromSpans(t *testing.T) {
	phases := map[Phase]int{} // the phases sampled, over all scenarios
	for _, name := range gen.Scenarios() {
		t.Run(name, func(t *testing.T) {
			a, r, _ := analyzeScenario(t, name)
			for di, d := range a.Devices {
				rep := r.Devices[di]
				src := newSource(d)
				n := d.Trace.Len()
				for i := 0; i < n; i += max(1, n/97) {
					want := PhaseOther
					for _, sp := range rep.PhaseSpans {
						if sp.FirstEntry <= i && i <= sp.LastEntry {
							want = sp.Phase
						}
					}
					oom := rep
					oom.OOMEvents = []OOMEvent{{Index: i}}
					if got := findSteps(src, &oom).oomPhase; got != want {
						t.Fatalf("device %d, OOM at entry %d: phase %q, want %q (from the phase spans)", d.ID, i, got, want)
					}
					phases[want]++
				}
			}
		})
	}
	for _, ph := range Phases {
		if phases[ph] == 0 {
			t.Errorf("no sampled entry in phase %s (%v): the check saw too little", ph, phases)
		}
	}
}
