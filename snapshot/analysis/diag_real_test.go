package analysis

import (
	"strings"
	"testing"

	"oomscope/estimator"
)

// TestDiagnosisRealFiles checks steps, phases, leak and fixes on the real
// snapshots. Independent numbers: the fullstep peak (README: 54,802,667,524
// B) is in its Optimizer.step annotation window, and its optimizer state
// at the peak is 27,254,476,800 B (the Python count in testdata's
// reference replay notes), so 8-bit AdamW saves ¾ of it while the peak
// stays in the optimizer step; its parameters are 13,628,553,216 B alive
// before the trace (README's initial allocated), 4 B each with AdamW's two
// fp32 states.
func TestDiagnosisRealFiles(t *testing.T) {
	t.Run("fullstep", func(t *testing.T) {
		r := Analyze(loadReal(t, "pt26_cs336_ctx128_fullstep.pickle"), Options{}).Report()
		d := r.Devices[0]
		if len(d.Steps) != 1 || d.Steps[0].PeakAllocatedBytes != 54802667524 || d.PeakPhase != (PeakPhase{0, PhaseOptimizer}) {
			t.Errorf("steps %+v, peak in %+v; want one step peaking at 54802667524 B in the optimizer phase", d.Steps, d.PeakPhase)
		}
		if d.Leak != nil {
			t.Errorf("one step cannot show a leak: %+v", *d.Leak)
		}
		if d.Diagnosis.Cause != "capacity" {
			t.Errorf("cause %+v", d.Diagnosis)
		}
		fx := fixByID(d.Fixes, "optimizer-8bit")
		if fx == nil || fx.SavesBytes != 27254476800/4*3 {
			t.Errorf("8-bit optimizer %+v, want a saving of ¾ × 27254476800", fx)
		}
		s := d.Setup
		if s == nil || s.ParamBytes != 13628553216 || s.Params != 13628553216/4 || s.ParamDtype != estimator.DtypeFP32 ||
			s.Optimizer != estimator.OptAdamW || s.OptimizerBytes != 27254476800 || s.Mode != estimator.ModeTrain {
			t.Errorf("setup %+v", s)
		}
	})
	for _, f := range []string{"pt26_cs336_ctx128_forward.pickle", "pt26_cs336_ctx256_forward_segfree.pickle"} {
		t.Run(f, func(t *testing.T) {
			d := Analyze(loadReal(t, f), Options{}).Report().Devices[0]
			if len(d.Steps) != 1 || d.StepInfo.Rule != stepRuleNone || d.PeakPhase.Phase != PhaseForward || d.Leak != nil {
				t.Errorf("steps %+v (%s), peak %+v, leak %v", d.Steps, d.StepInfo.Rule, d.PeakPhase, d.Leak)
			}
			if d.Setup == nil || d.Setup.Mode != estimator.ModeInfer || d.Setup.ParamDtype != estimator.DtypeFP32 {
				t.Errorf("setup %+v", d.Setup)
			}
			if fixByID(d.Fixes, "checkpointing") == nil {
				t.Errorf("a forward pass holding activations gets no checkpointing: %+v", d.Fixes)
			}
		})
	}
	// The torch 2.0 files hold one trace entry: no steps, the peak before
	// it. The 1.3b file has 1.78 GiB of its 7.09 GiB reserved free between
	// blocks (README: reserved 7,608,467,456, active 5,683,450,880), over a
	// quarter: fragmentation.
	for f, cause := range map[string]string{"pt20_flexgen_1.3b_snapshot.pickle": "fragmentation", "pt20_flexgen_oom_snapshot.pickle": "capacity"} {
		t.Run(f, func(t *testing.T) {
			d := Analyze(loadReal(t, f), Options{}).Report().Devices[0]
			if len(d.Steps) != 0 || d.PeakPhase != (PeakPhase{-1, PhaseOther}) || d.Leak != nil || d.Diagnosis.Cause != cause {
				t.Errorf("steps %+v, peak %+v, leak %v, cause %+v", d.Steps, d.PeakPhase, d.Leak, d.Diagnosis)
			}
		})
	}
}

// TestWorkspacesRealFiles checks that cuBLAS workspaces are other, not
// activations or gradients: the bytes the workspace rule labels at the
// peak equal the allocations whose own frames name the cuBLAS handle pool
// and that no free entry ever ends, found by pairing the trace here.
func TestWorkspacesRealFiles(t *testing.T) {
	for _, f := range []string{"pt26_cs336_ctx128_fullstep.pickle", "pt26_cs336_ctx128_forward.pickle"} {
		t.Run(f, func(t *testing.T) {
			s := loadReal(t, f)
			open := map[uint64]int64{}
			for _, e := range s.DeviceTraces[0].Entries() {
				switch e.Action {
				case "alloc":
					for _, fid := range s.Stacks.MustFrames(e.Frames) {
						if n := s.Frames[fid].Name; strings.Contains(n, "getCurrentCUDABlasHandle") || strings.Contains(n, "getNewWorkspace") {
							open[e.Addr] = e.Size
						}
					}
				case "free_completed":
					delete(open, e.Addr)
				}
			}
			var want int64
			for _, n := range open {
				want += n
			}
			if want == 0 {
				t.Fatal("no workspace in the file")
			}
			d := Analyze(s, Options{}).Report().Devices[0]
			var got int64
			for _, r := range d.CategoryRules {
				if r.Rule == "workspace" {
					got = r.Bytes
					if r.Category != "other" {
						t.Errorf("workspace rule category %s", r.Category)
					}
				}
			}
			if got != want {
				t.Errorf("workspace bytes at the peak %d, want %d", got, want)
			}
		})
	}
}

// TestSetupMatchesCatalog checks the snapshot → estimator inference on a
// loop with GPT-2's parameter shapes in fp32 trained with AdamW: the
// catalog's GPT-2 matches, dtype and optimizer are found, and the measured
// weights and optimizer state are within 2 % of the estimator's formulas
// (GPT-2 also has position embeddings, norms and biases the loop lacks).
func TestSetupMatchesCatalog(t *testing.T) {
	_, r, _ := analyzeScenario(t, "gpt2")
	s := r.Devices[0].Setup
	if s == nil || len(s.Models) == 0 || s.Models[0].ID != "gpt2" || s.ParamDtype != estimator.DtypeFP32 || s.Optimizer != estimator.OptAdamW ||
		s.Method != estimator.MethodFull || !strings.Contains(s.Query, "model=gpt2") {
		t.Fatalf("setup %+v", s)
	}
	if len(s.Buckets) != 0 {
		t.Error("Analyze should leave the estimate out (the worker does not carry the formulas)")
	}
	got := map[string]BucketCompare{}
	for _, b := range s.CompareBuckets("") {
		got[b.Bucket] = b
	}
	for _, name := range []string{estimator.BucketWeights, estimator.BucketGradients, estimator.BucketOptimizer} {
		b, ok := got[name]
		if !ok || b.EstimatedBytes <= 0 {
			t.Errorf("%s: %+v", name, b)
			continue
		}
		if off := float64(b.MeasuredBytes)/float64(b.EstimatedBytes) - 1; off > 0.02 || off < -0.02 {
			t.Errorf("%s measured %d, estimated %d: %.1f %% apart", name, b.MeasuredBytes, b.EstimatedBytes, 100*off)
		}
	}
	if other := s.CompareBuckets("llama-3.1-8b"); len(other) == 0 || other[0].EstimatedBytes <= got[estimator.BucketWeights].EstimatedBytes {
		t.Errorf("a picked model gets its own estimate: %+v", other)
	}
}
