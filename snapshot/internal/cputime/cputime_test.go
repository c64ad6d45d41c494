package cputime

import "testing"

// TestNowCounts: CPU spent between two readings shows in their difference,
// and the clock never goes back.
func TestNowCounts(t *testing.T) {
	t0 := Now()
	x := uint64(1)
	for i := 0; i < 50_000_000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	t1 := Now()
	if x == 0 {
		t.Log(x)
	}
	if t1 <= t0 {
		t.Errorf("Now went from %v to %v over a busy loop, want it to grow", t0, t1)
	}
}
