package main

import (
	"encoding/json"
	"testing"

	"oomscope/snapshot/gen"
)

// contract is the part of `oomscope snapshot --json` whose key names the
// issue fixes, decoded by name only: a renamed key reads as zero and fails.
type contract struct {
	Steps []struct {
		FirstEntry         *int   `json:"first_entry"`
		LastEntry          *int   `json:"last_entry"`
		PeakAllocatedBytes *int64 `json:"peak_allocated_bytes"`
		EndAllocatedBytes  *int64 `json:"end_allocated_bytes"`
	} `json:"steps"`
	PeakPhase *struct {
		Step  *int    `json:"step"`
		Phase *string `json:"phase"`
	} `json:"peak_phase"`
	PhasePeaks []struct {
		Step               *int    `json:"step"`
		Phase              *string `json:"phase"`
		PeakAllocatedBytes *int64  `json:"peak_allocated_bytes"`
	} `json:"phase_peaks"`
	Leak *struct {
		BytesPerStep *int64  `json:"bytes_per_step"`
		Steps        *int    `json:"steps"`
		Confidence   *string `json:"confidence"`
		Sites        []struct {
			Site         *string `json:"site"`
			BytesPerStep *int64  `json:"bytes_per_step"`
			Blocks       *int    `json:"blocks"`
		} `json:"sites"`
	} `json:"leak"`
	Diagnosis *struct {
		Cause *string `json:"cause"`
		Why   *string `json:"why"`
		Rule  *string `json:"rule"`
	} `json:"diagnosis"`
	Fixes []struct {
		ID         *string `json:"id"`
		Title      *string `json:"title"`
		SavesBytes *int64  `json:"saves_bytes"`
		Why        *string `json:"why"`
	} `json:"fixes"`
}

// complete reports the first contract key missing from c.
func (c *contract) missing() string {
	for _, s := range c.Steps {
		if s.FirstEntry == nil || s.LastEntry == nil || s.PeakAllocatedBytes == nil || s.EndAllocatedBytes == nil {
			return "steps[]"
		}
	}
	if c.PeakPhase == nil || c.PeakPhase.Step == nil || c.PeakPhase.Phase == nil {
		return "peak_phase"
	}
	for _, p := range c.PhasePeaks {
		if p.Step == nil || p.Phase == nil || p.PeakAllocatedBytes == nil {
			return "phase_peaks[]"
		}
	}
	if l := c.Leak; l != nil {
		if l.BytesPerStep == nil || l.Steps == nil || l.Confidence == nil || len(l.Sites) == 0 {
			return "leak"
		}
		for _, s := range l.Sites {
			if s.Site == nil || s.BytesPerStep == nil || s.Blocks == nil {
				return "leak.sites[]"
			}
		}
	}
	if d := c.Diagnosis; d == nil || d.Cause == nil || d.Why == nil || d.Rule == nil {
		return "diagnosis"
	}
	for _, f := range c.Fixes {
		if f.ID == nil || f.Title == nil || f.SavesBytes == nil || f.Why == nil {
			return "fixes[]"
		}
	}
	return ""
}

func decodeContract(t *testing.T, out string) (devs []contract, raw []map[string]json.RawMessage) {
	t.Helper()
	var v struct {
		Devices []contract `json:"devices"`
	}
	var r struct {
		Devices []map[string]json.RawMessage `json:"devices"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for i := range v.Devices {
		if m := v.Devices[i].missing(); m != "" {
			t.Errorf("device %d: %s missing or renamed", i, m)
		}
		if string(r.Devices[i]["leak"]) == "" {
			t.Errorf("device %d: the leak key is absent (want null or an object)", i)
		}
	}
	return v.Devices, r.Devices
}

// TestSnapshotDiagnosisContract checks the diagnosis keys of --json and
// their values against the generator's own record of the loop it ran (an
// independent witness): steps, the peak's step and phase, the leak's bytes
// per step and site; and, on the real fullstep file, the 8-bit optimizer's
// saving against the optimizer state at the peak counted in Python
// (27,254,476,800 B).
func TestSnapshotDiagnosisContract(t *testing.T) {
	for _, name := range []string{"leak_history", "leak_loss_graph", "vary_seq", "oom_card", "mid_step"} {
		t.Run(name, func(t *testing.T) {
			data, truth, err := gen.Bytes(gen.Scenario(name))
			if err != nil {
				t.Fatal(err)
			}
			code, out, errs := runCLI([]string{"--json", "-"}, data)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			devs, _ := decodeContract(t, out)
			dt, d := truth.Devices[0], devs[0]
			if len(d.Steps) != len(dt.Steps) {
				t.Fatalf("%d steps, want %d", len(d.Steps), len(dt.Steps))
			}
			for k, s := range dt.Steps {
				g := d.Steps[k]
				if *g.FirstEntry != s.First || *g.LastEntry != s.Last || *g.PeakAllocatedBytes != s.PeakAllocated || *g.EndAllocatedBytes != s.EndAllocated {
					t.Errorf("step %d: %d–%d peak %d end %d, want %+v", k, *g.FirstEntry, *g.LastEntry, *g.PeakAllocatedBytes, *g.EndAllocatedBytes, s)
				}
			}
			if *d.PeakPhase.Step != dt.PeakStep || *d.PeakPhase.Phase != dt.PeakPhase {
				t.Errorf("peak in step %d %s, want %d %s", *d.PeakPhase.Step, *d.PeakPhase.Phase, dt.PeakStep, dt.PeakPhase)
			}
			switch {
			case dt.Leak == nil && d.Leak != nil:
				t.Errorf("false leak: %+v", *d.Leak)
			case dt.Leak != nil && (d.Leak == nil || *d.Leak.BytesPerStep != dt.Leak.BytesPerStep || *d.Leak.Sites[0].Site != dt.Leak.Site ||
				*d.Leak.Sites[0].Blocks != dt.Leak.Blocks):
				t.Errorf("leak %+v, want %+v", d.Leak, *dt.Leak)
			}
			if dt.Leak != nil && *d.Diagnosis.Cause != "leak" {
				t.Errorf("cause %s, want leak", *d.Diagnosis.Cause)
			}
			for i := 1; i < len(d.Fixes); i++ {
				if *d.Fixes[i].SavesBytes <= 0 {
					t.Errorf("fix %s saves nothing", *d.Fixes[i].ID)
				}
			}
		})
	}
	t.Run("fullstep", func(t *testing.T) {
		code, out, errs := runCLI([]string{"--json", realSnapshot(t, fullstep)}, nil)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errs)
		}
		devs, _ := decodeContract(t, out)
		d := devs[0]
		if *d.Diagnosis.Cause != "capacity" || *d.PeakPhase.Phase != "optimizer" || d.Leak != nil {
			t.Errorf("cause %s, peak phase %s, leak %v", *d.Diagnosis.Cause, *d.PeakPhase.Phase, d.Leak)
		}
		found := false
		for _, f := range d.Fixes {
			if *f.ID == "optimizer-8bit" {
				found = true
				if *f.SavesBytes != 27254476800/4*3 {
					t.Errorf("8-bit optimizer saves %d, want ¾ × 27254476800", *f.SavesBytes)
				}
			}
		}
		if !found {
			t.Error("no 8-bit optimizer fix for an AdamW peak")
		}
	})
}

// TestSnapshotBudgetWithDiagnosis checks that --budget keeps its meaning:
// the exit code follows the peak only, whatever the diagnosis says.
func TestSnapshotBudgetWithDiagnosis(t *testing.T) {
	data, truth, err := gen.Bytes(gen.Scenario("leak_history"))
	if err != nil {
		t.Fatal(err)
	}
	peak := truth.Devices[0].PeakAllocated
	for _, tt := range []struct {
		budget string
		want   int
	}{{"1GiB", exitOK}, {"100MiB", exitCheck}} {
		if code, _, _ := runCLI([]string{"--json", "--budget", tt.budget, "-"}, data); code != tt.want {
			t.Errorf("budget %s on a %d B peak: exit %d, want %d", tt.budget, peak, code, tt.want)
		}
	}
}

// TestSnapshotDiagnosisGolden compares the whole outputs for generated
// loops with a leak and with an OOM (read from stdin, so the file name is
// "-"); rerun with -update after an intended change and review the diff.
func TestSnapshotDiagnosisGolden(t *testing.T) {
	for _, tt := range []struct{ scenario, golden, flag string }{
		{"leak_history", "leak_history.json", "--json"},
		{"leak_loss_graph", "leak_loss_graph.md", "--markdown"},
		{"oom_card", "oom_card.txt", ""},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			data, _, err := gen.Bytes(gen.Scenario(tt.scenario))
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"--top", "3", "-"}
			if tt.flag != "" {
				args = append([]string{tt.flag}, args...)
			}
			code, out, errs := runCLI(args, data)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			golden(t, "snapshot", tt.golden, []byte(out))
		})
	}
}
