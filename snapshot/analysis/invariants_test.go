package analysis

import (
	"testing"

	"oomscope/snapshot"
)

// checkInvariants checks the identities every analysis must satisfy,
// computing the expected side directly from the trace and the segments.
func checkInvariants(t *testing.T, a *Analysis, dev *Device, d DeviceReport) {
	t.Helper()
	if got := d.CategoriesAtPeak.Total(); got != d.PeakAllocatedBytes {
		t.Errorf("categories at peak sum to %d, want the peak %d", got, d.PeakAllocatedBytes)
	}
	var ruleSum int64
	for _, r := range d.CategoryRules {
		ruleSum += r.Bytes
	}
	if ruleSum != d.PeakAllocatedBytes {
		t.Errorf("category rules sum to %d, want %d", ruleSum, d.PeakAllocatedBytes)
	}
	var siteSum int64
	for _, sb := range dev.siteTotals(dev.liveAt(d.PeakIndex), 0, nil) {
		siteSum += sb.Bytes
	}
	if siteSum != d.PeakAllocatedBytes {
		t.Errorf("sites at peak sum to %d, want %d", siteSum, d.PeakAllocatedBytes)
	}

	// Totals from the segments, computed here.
	var final, pending, reserved, internal, external, largest int64
	for i := range a.Snap.Segments {
		seg := &a.Snap.Segments[i]
		if seg.Device != dev.ID {
			continue
		}
		reserved += seg.TotalSize
		var run int64
		for _, b := range seg.Blocks {
			switch b.State {
			case snapshot.StateActiveAllocated:
				final += b.RequestedSize
			case snapshot.StateActivePendingFree:
				pending += b.RequestedSize
			}
			if b.State == snapshot.StateInactive {
				external += b.Size
				run += b.Size
				largest = max(largest, run)
			} else {
				internal += b.Size - b.RequestedSize
				run = 0
			}
		}
	}
	if d.FinalAllocatedBytes != final || d.FinalPendingFreeBytes != pending || d.FinalReservedBytes != reserved {
		t.Errorf("final allocated/pending/reserved = %d/%d/%d, segments say %d/%d/%d",
			d.FinalAllocatedBytes, d.FinalPendingFreeBytes, d.FinalReservedBytes, final, pending, reserved)
	}

	n := dev.Trace.Len()
	states := []struct {
		i              int
		alloc, reserve int64
	}{
		{-1, d.InitialAllocatedBytes, d.InitialReservedBytes},
		{d.PeakIndex, d.PeakAllocatedBytes, -1},
		{n - 1, final + pending, reserved},
	}
	for _, st := range states {
		got := dev.StateAt(st.i, -1, 5)
		if got.AllocatedBytes != st.alloc {
			t.Errorf("StateAt(%d) allocated = %d, want %d", st.i, got.AllocatedBytes, st.alloc)
		}
		if st.reserve >= 0 && got.ReservedBytes != st.reserve {
			t.Errorf("StateAt(%d) reserved = %d, want %d", st.i, got.ReservedBytes, st.reserve)
		}
		f := got.Fragmentation
		if f.OutsideSegments == 0 && f.InternalFreeBytes+f.ExternalFreeBytes != f.FreeBytes {
			t.Errorf("StateAt(%d): internal %d + external %d != free %d", st.i, f.InternalFreeBytes, f.ExternalFreeBytes, f.FreeBytes)
		}
		var segSum, blockReq int64
		for _, ss := range got.Segments {
			segSum += ss.Size
			for _, b := range ss.Blocks {
				blockReq += b.Requested
			}
		}
		if segSum != got.ReservedBytes || (f.OutsideSegments == 0 && blockReq != got.AllocatedBytes) {
			t.Errorf("StateAt(%d): segment views hold %d reserved / %d requested, want %d / %d", st.i, segSum, blockReq, got.ReservedBytes, got.AllocatedBytes)
		}
	}
	// The n largest segments, biggest first, with the rest counted.
	top := dev.StateAt(d.PeakIndex, 3, 0)
	var shown int64
	for k, ss := range top.Segments {
		shown += ss.Size
		if k > 0 && ss.Size > top.Segments[k-1].Size {
			t.Errorf("segments not biggest first")
		}
		for _, b := range ss.Blocks {
			if top.SiteLabels[b.Site] != a.Sites[b.Site].Label {
				t.Errorf("site label of block %+v missing", b)
			}
		}
	}
	if len(top.Segments) > 3 || shown+top.OmittedBytes != top.ReservedBytes || len(top.Segments)+top.OmittedSegments != top.Fragmentation.Segments {
		t.Errorf("top segments: %d shown (%d B), %d omitted (%d B), reserved %d in %d", len(top.Segments), shown,
			top.OmittedSegments, top.OmittedBytes, top.ReservedBytes, top.Fragmentation.Segments)
	}
	last := dev.StateAt(n-1, 0, 0).Fragmentation
	if last.EstimatedBlocks == 0 && (last.InternalFreeBytes != internal || last.ExternalFreeBytes != external || last.LargestFreeBlockBytes != largest) {
		t.Errorf("final fragmentation internal/external/largest = %d/%d/%d, segments say %d/%d/%d",
			last.InternalFreeBytes, last.ExternalFreeBytes, last.LargestFreeBlockBytes, internal, external, largest)
	}

	// Reserved at segment events: the range replay against the running sum.
	run := d.InitialReservedBytes
	checked := 0
	for i := range dev.Trace.Len() {
		e := dev.Trace.Entry(i)
		switch e.Action {
		case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentMap:
			run += e.Size
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			run -= e.Size
		default:
			continue
		}
		if checked++; checked%37 == 1 {
			if got := dev.StateAt(i, 0, 0).ReservedBytes; got != run {
				t.Errorf("reserved after entry %d = %d, running sum %d", i, got, run)
			}
		}
	}

	// Timeline and site series.
	if len(d.Timeline) > 0 {
		if first, last := d.Timeline[0].Index, d.Timeline[len(d.Timeline)-1].Index; first != -1 || last != n-1 {
			t.Errorf("timeline covers %d..%d, want -1..%d", first, last, n-1)
		}
		foundPeak := false
		for j, p := range d.Timeline {
			if j > 0 && p.Index <= d.Timeline[j-1].Index {
				t.Fatalf("timeline not increasing at %d", j)
			}
			if p.Allocated > d.PeakAllocatedBytes || p.Reserved > d.PeakReservedBytes {
				t.Errorf("timeline point %+v above the peaks", p)
			}
			foundPeak = foundPeak || (p.Index == d.PeakIndex && p.Allocated == d.PeakAllocatedBytes)
			if j%50 == 0 {
				st := dev.StateAt(p.Index, 0, 0)
				if st.AllocatedBytes != p.Allocated || st.ReservedBytes != p.Reserved {
					t.Errorf("timeline point %+v, StateAt says %d/%d", p, st.AllocatedBytes, st.ReservedBytes)
				}
			}
			var col int64
			for _, row := range d.SiteSeries.Values {
				col += row[j]
			}
			if col != p.Allocated {
				t.Errorf("site series at point %d sums to %d, want %d", j, col, p.Allocated)
			}
		}
		if !foundPeak {
			t.Errorf("timeline lacks the exact peak %d at %d", d.PeakAllocatedBytes, d.PeakIndex)
		}
	}
}
