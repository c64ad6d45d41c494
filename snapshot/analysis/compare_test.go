package analysis

import (
	"testing"
)

// TestCompareReal compares the ctx128 and ctx256 forward passes of the same
// model: the deltas must add up to the difference of the peaks.
func TestCompareReal(t *testing.T) {
	before := Analyze(loadReal(t, "pt26_cs336_ctx128_forward.pickle"), Options{})
	after := Analyze(loadReal(t, "pt26_cs336_ctx256_forward_segfree.pickle"), Options{})
	c := Compare(before, after, 0)
	if len(c.Devices) != 1 {
		t.Fatalf("devices = %d", len(c.Devices))
	}
	d := c.Devices[0]
	// Peaks from testdata/reference_replay.py.
	if d.PeakAllocated != (Delta{19352504320, 26252175360, 26252175360 - 19352504320}) {
		t.Errorf("peak allocated = %+v", d.PeakAllocated)
	}
	var catSum, siteSum int64
	for _, cd := range d.Categories {
		catSum += cd.Bytes.Delta
	}
	for _, sd := range d.Sites {
		siteSum += sd.Bytes.Delta
		if sd.Bytes.Delta != sd.Bytes.After-sd.Bytes.Before {
			t.Errorf("site %s: delta %d != %d − %d", sd.Site, sd.Bytes.Delta, sd.Bytes.After, sd.Bytes.Before)
		}
	}
	if catSum != d.PeakAllocated.Delta || siteSum != d.PeakAllocated.Delta {
		t.Errorf("category deltas sum to %d, site deltas to %d, want %d", catSum, siteSum, d.PeakAllocated.Delta)
	}
	for i := 1; i < len(d.Sites); i++ {
		if d.Sites[i].Bytes.Delta > d.Sites[i-1].Bytes.Delta {
			t.Fatalf("sites not sorted by growth at %d", i)
		}
	}
	trimmed := Compare(before, after, 4).Devices[0].Sites
	if len(trimmed) != 4 || trimmed[0] != d.Sites[0] || trimmed[3] != d.Sites[len(d.Sites)-1] {
		t.Errorf("trimmed to 4: %+v", trimmed)
	}
}

// TestCompareSame finds no change between a snapshot and itself.
func TestCompareSame(t *testing.T) {
	a := Analyze(loadReal(t, "pt26_cs336_ctx128_fullstep.pickle"), Options{})
	c := Compare(a, a, 10)
	d := c.Devices[0]
	if d.PeakAllocated.Delta != 0 || d.PeakReserved.Delta != 0 || len(d.Sites) != 0 {
		t.Errorf("self-comparison changed: %+v", d)
	}
}
