package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oomscope/snapshot/gen"
	"oomscope/snapshot/load"
)

// TestSnapshotRanks analyses a directory of four generated ranks in which
// rank 2 runs a model twice as deep: the overview lists the ranks in order
// with the peaks the generator's truth gives and marks rank 2 alone as the
// outlier; --json carries the same, and --budget checks the highest peak.
func TestSnapshotRanks(t *testing.T) {
	dir := t.TempDir()
	_, peaks, err := gen.WriteRanks(dir, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a rank"), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errs := runCLI([]string{"--json", dir}, nil)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var o load.Overview
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Ranks) != 4 {
		t.Fatalf("%d ranks, want 4 (notes.txt is not a snapshot file)", len(o.Ranks))
	}
	for i, r := range o.Ranks {
		if r.Rank != i || r.PeakAllocatedBytes != peaks[i] || r.Error != "" {
			t.Errorf("row %d = rank %d peak %d error %q, want rank %d peak %d", i, r.Rank, r.PeakAllocatedBytes, r.Error, i, peaks[i])
		}
		if r.Outlier != (i == 2) {
			t.Errorf("rank %d outlier = %v (%q)", i, r.Outlier, r.Why)
		}
	}

	code, out, _ = runCLI([]string{dir}, nil)
	if code != exitOK || !strings.Contains(out, "4 files as ranks of one job") || strings.Count(out, "outlier: peak allocated") != 1 {
		t.Errorf("text overview (exit %d):\n%s", code, out)
	}
	// Each rank's row says when its peak came: seconds since its first
	// trace entry, from the times the analysis gives here.
	for i, r := range o.Ranks {
		h := r.Devices[0]
		want := fmt.Sprintf("%.3f s", float64(h.PeakTimeUS-h.FirstTimeUS)/1e6)
		row := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, fmt.Sprintf("snapshot_rank%d.pickle", i)) {
				row = l
			}
		}
		if h.PeakTimeUS <= h.FirstTimeUS || !strings.Contains(row, "  "+want+"  ") {
			t.Errorf("rank %d's row %q does not give its peak at %s", i, row, want)
		}
	}
	code, _, errs = runCLI([]string{"--budget", "1KiB", dir}, nil)
	if code != exitCheck || !strings.Contains(errs, "over the budget") {
		t.Errorf("budget: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI([]string{filepath.Join(dir, "snapshot_rank0.pickle"), filepath.Join(dir, "snapshot_rank1.pickle"), "--ranks"}, nil)
	if code != exitOK {
		t.Errorf("--ranks with two files: exit %d, %q", code, errs)
	}
	code, _, errs = runCLI([]string{t.TempDir()}, nil)
	if code != exitBadInput || !strings.Contains(errs, "holds no") {
		t.Errorf("empty directory: exit %d, %q", code, errs)
	}
}
