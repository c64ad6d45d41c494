package main

import (
	"runtime/debug"
	"testing"

	"oomscope/snapshot/analysis"
)

// TestOutputMemory: the analyses are dropped before the output (only the
// reports are written), and collection is off while it is written only
// where a memory limit bounds it (known sizes), then restored.
func TestOutputMemory(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(40))
	for _, size := range []int64{1 << 20, 100 << 20, -1} {
		snaps := []snapshotFile{{name: "a", an: &analysis.Analysis{}}, {name: "b", an: &analysis.Analysis{}}}
		restore := outputMemory(snaps, size)
		for i, s := range snaps {
			if s.an != nil {
				t.Errorf("size %d: analysis %d kept for the output", size, i)
			}
		}
		during := debug.SetGCPercent(40)
		debug.SetGCPercent(during)
		if want := map[bool]int{true: -1, false: 40}[size >= 0]; during != want {
			t.Errorf("size %d: GC percent %d while writing, want %d", size, during, want)
		}
		restore()
		if after := debug.SetGCPercent(40); after != 40 {
			t.Errorf("size %d: GC percent %d after the output, want 40 restored", size, after)
		}
	}
}
