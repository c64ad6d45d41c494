package analysis

import (
	"os"
	"path/filepath"
	"testing"

	"oomscope/snapshot"
)

// realDir holds the real snapshots (../shared/snapshots, read by path).
const realDir = "../../../shared/snapshots"

// loadReal decodes a real snapshot, skipping the test if the file is absent.
func loadReal(t testing.TB, name string) *snapshot.Snapshot {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realDir, name))
	if os.IsNotExist(err) {
		t.Skipf("%s not present", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.DecodeBytes(b, nil)
	if err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return s
}

// TestRealFiles checks the replay of the real snapshots against
// ../shared/snapshots/README.md (final totals, the MemoryViz-style peak of
// fullstep), docs/snapshot.md#peaks (the 1.3b file's true peak is its starting
// state) and testdata/reference_replay.py (an independent Python replay;
// its output for each file is copied below).
func TestRealFiles(t *testing.T) {
	tests := []struct {
		file                          string
		entries                       int
		initial                       int64
		preTrace                      int
		peak                          int64
		peakIndex                     int
		peakTime                      int64
		finalRequested, finalReserved int64
		initialReserved, peakReserved int64
		peakReservedIndex             int
	}{
		{"pt20_flexgen_1.3b_snapshot.pickle", 1, 5692346376, 786, 5692346376, -1, 0, 5683449864, 7608467456, 7608467456, 7608467456, -1},
		{"pt20_flexgen_oom_snapshot.pickle", 1, 11840159744, 460, 11840159744, -1, 0, 11840159744, 11844714496, 11844714496, 11844714496, -1},
		{"pt26_cs336_ctx128_forward.pickle", 4657, 13628553216, 324, 19352504320, 4656, 1748729392114839, 19352504320, 19667091456, 13763608576, 19667091456, 4655},
		{"pt26_cs336_ctx128_fullstep.pickle", 19342, 13628553216, 324, 54802667524, 19335, 1748730220159619, 54597857284, 61111009280, 13763608576, 61111009280, 19334},
		{"pt26_cs336_ctx256_forward_segfree.pickle", 5125, 13663422464, 325, 26252175360, 5124, 1748732525011702, 26252175360, 26545750016, 19667091456, 26545750016, 5123},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := loadReal(t, tt.file)
			a := Analyze(s, Options{TimelinePoints: 300})
			r := a.Report()
			if len(r.Devices) != 1 {
				t.Fatalf("devices = %d, want 1", len(r.Devices))
			}
			d := r.Devices[0]
			checks := []struct {
				name      string
				got, want int64
			}{
				{"entries", int64(d.Entries), int64(tt.entries)},
				{"initial allocated", d.InitialAllocatedBytes, tt.initial},
				{"pre-trace allocations", int64(d.PreTraceAllocations), int64(tt.preTrace)},
				{"peak allocated", d.PeakAllocatedBytes, tt.peak},
				{"peak index", int64(d.PeakIndex), int64(tt.peakIndex)},
				{"peak time", d.PeakTimeUS, tt.peakTime},
				{"final allocated", d.FinalAllocatedBytes, tt.finalRequested},
				{"final reserved", d.FinalReservedBytes, tt.finalReserved},
				{"initial reserved", d.InitialReservedBytes, tt.initialReserved},
				{"peak reserved", d.PeakReservedBytes, tt.peakReserved},
				{"peak reserved index", int64(d.PeakReservedIndex), int64(tt.peakReservedIndex)},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
				}
			}
			if len(d.Warnings) != 0 {
				t.Errorf("warnings on a consistent real file: %q", d.Warnings)
			}
			checkInvariants(t, a, a.Devices[0], d)
		})
	}
}

// TestRealFullstepBuckets checks what the classification finds at the peak
// of the AdamW training step. Independent numbers (Python, stdlib pickle):
// the allocations made at optimizers.py:82 and :84 (exp_avg, exp_avg_sq)
// that are alive at the end sum to 13627238400 B each; the 324 pre-trace
// blocks hold 13628553216 B.
func TestRealFullstepBuckets(t *testing.T) {
	s := loadReal(t, "pt26_cs336_ctx128_fullstep.pickle")
	d := Analyze(s, Options{}).Report().Devices[0]
	c := d.CategoriesAtPeak
	if c.OptimizerState != 2*13627238400 {
		t.Errorf("optimizer state = %d, want %d", c.OptimizerState, 2*13627238400)
	}
	if c.Parameter != 13628553216 {
		t.Errorf("parameters = %d, want the pre-trace blocks' 13628553216", c.Parameter)
	}
	if diff := c.Gradient - c.Parameter; diff < -c.Parameter/100 || diff > c.Parameter/100 {
		t.Errorf("gradients %d vs parameters %d: want within 1 %%", c.Gradient, c.Parameter)
	}
	var workspace int64 // two 32 MiB cuBLAS workspaces (TestWorkspacesRealFiles)
	for _, r := range d.CategoryRules {
		if r.Rule == "workspace" {
			workspace = r.Bytes
		}
	}
	if rest := c.Activation + c.Temporary + c.Other - workspace; rest > c.Parameter/50 {
		t.Errorf("activations+temporaries+other (less workspaces) = %d at an optimizer-step peak; want small", rest)
	}
	if d.TopSites[0].Kind != SiteNone || d.TopSites[1].Label != "cs336_basics/optimizers.py:82 step" {
		t.Errorf("top sites = %q, %q", d.TopSites[0].Label, d.TopSites[1].Label)
	}
}
