package analysis

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"oomscope/snapshot"
)

const mib = 1 << 20

// TestReplay runs hand-built traces whose answers are worked out by hand in
// each case's comment.
func TestReplay(t *testing.T) {
	tests := []struct {
		name  string
		build func(b *builder)
		// want
		peak, initial, final, pending int64
		peakIndex, preTrace           int
		reserved                      [3]int64 // initial, peak, final
		reservedIndex                 int
		warning                       string
	}{
		{
			// Segment of 4096 B cudaMalloc'd in the trace; A (1000) and B
			// (1000) live together after entry 2 = the peak 2000; A freed,
			// C (900) reuses A's address: 1900 at the end.
			name: "address reuse",
			build: func(b *builder) {
				b.ev(snapshot.ActionSegmentAlloc, 0x1000, 4096, snapshot.NoStack)
				b.ev(snapshot.ActionAlloc, 0x1000, 1000, snapshot.EmptyStack)
				b.ev(snapshot.ActionAlloc, 0x1400, 1000, snapshot.EmptyStack)
				b.ev(snapshot.ActionFreeRequested, 0x1000, 1000, snapshot.EmptyStack)
				b.ev(snapshot.ActionFreeCompleted, 0x1000, 1000, snapshot.EmptyStack)
				b.ev(snapshot.ActionAlloc, 0x1000, 900, snapshot.EmptyStack)
				b.seg(0x1000, false, live(1024, 900, 0), live(1024, 1000, 0), free(2048))
			},
			peak: 2000, peakIndex: 2, final: 1900,
			reserved: [3]int64{0, 4096, 4096}, reservedIndex: 0,
		},
		{
			// A ghost block (2000 B requested, never in the trace) and an
			// unmatched free of 3000 B: 5000 B were live before the first
			// entry, which is the peak (index -1). Then 2000, 3000, 2000.
			name: "pre-trace freed and ghost",
			build: func(b *builder) {
				b.ev(snapshot.ActionFreeCompleted, 0x10800, 3000, snapshot.NoStack)
				b.ev(snapshot.ActionAlloc, 0x10800, 1000, snapshot.NoStack)
				b.ev(snapshot.ActionFreeCompleted, 0x10800, 1000, snapshot.NoStack)
				b.seg(0x10000, false, live(2048, 2000, 0), free(6144))
			},
			peak: 5000, peakIndex: -1, initial: 5000, preTrace: 2, final: 2000,
			reserved: [3]int64{8192, 8192, 8192}, reservedIndex: -1,
		},
		{
			// free_requested without free_completed: still live at the end,
			// shown as active_pending_free in the segments.
			name: "pending free",
			build: func(b *builder) {
				b.ev(snapshot.ActionSegmentAlloc, 0x20000, 2*mib, snapshot.NoStack)
				b.ev(snapshot.ActionAlloc, 0x20000, 512, snapshot.EmptyStack)
				b.ev(snapshot.ActionFreeRequested, 0x20000, 512, snapshot.EmptyStack)
				b.seg(0x20000, false, blk{512, 512, snapshot.StateActivePendingFree, 0}, free(2*mib-512))
			},
			peak: 512, peakIndex: 1, final: 0, pending: 512,
			reserved: [3]int64{0, 2 * mib, 2 * mib}, reservedIndex: 0,
		},
		{
			// No free_completed at all (skip_actions): allocations end at
			// free_requested. A 100 (peak, index 0), freed, B 50.
			name: "only free_requested",
			build: func(b *builder) {
				b.ev(snapshot.ActionAlloc, 0x100, 100, snapshot.EmptyStack)
				b.ev(snapshot.ActionFreeRequested, 0x100, 100, snapshot.EmptyStack)
				b.ev(snapshot.ActionAlloc, 0x200, 50, snapshot.EmptyStack)
				b.seg(0x100, false, free(256), live(512, 50, 0), free(256))
			},
			peak: 100, peakIndex: 0, final: 50,
			reserved: [3]int64{1024, 1024, 1024}, reservedIndex: -1,
			warning: "no free_completed",
		},
		{
			// Two allocs at one address without a free: the first ends at
			// the second. 100, then 200 (peak at 1).
			name: "alloc over a live address",
			build: func(b *builder) {
				b.ev(snapshot.ActionAlloc, 0x100, 100, snapshot.EmptyStack)
				b.ev(snapshot.ActionAlloc, 0x100, 200, snapshot.EmptyStack)
				b.seg(0x100, false, live(512, 200, 0), free(512))
			},
			peak: 200, peakIndex: 1, final: 200,
			reserved: [3]int64{1024, 1024, 1024}, reservedIndex: -1,
			warning: "never freed",
		},
		{
			// Expandable segments in 2 MiB pages from 0x1000000: page 0
			// mapped before the trace; map page 2 (4 MiB in two runs), map
			// page 1 (6 MiB, the peak, one run), unmap page 0 (4 MiB left).
			name:      "expandable map and unmap",
			build:     buildExpandable,
			peakIndex: -1, reserved: [3]int64{2 * mib, 6 * mib, 4 * mib}, reservedIndex: 1,
		},
		{
			// Allocations of 4 GiB and more (the open allocations' map
			// holds sizes in 32 bits, 4 GiB − 1 and up read again from the
			// trace): A 6 GiB, B 4 GiB − 1 (10 GiB − 1), A freed
			// (4 GiB − 1), C 4 GiB, D 4 GiB − 2: the peak 12 GiB − 3 at
			// entry 5; B freed: C and D, 8 GiB − 2, live at the end, where
			// the segment of 18 GiB says so too.
			name: "sizes of 4 GiB and more",
			build: func(b *builder) {
				const x, g = 0x7f0000000000, 1 << 30
				b.ev(snapshot.ActionAlloc, x, 6*g, snapshot.EmptyStack)
				b.ev(snapshot.ActionAlloc, x+6*g, 4*g-1, snapshot.EmptyStack)
				b.ev(snapshot.ActionFreeRequested, x, 6*g, snapshot.EmptyStack)
				b.ev(snapshot.ActionFreeCompleted, x, 6*g, snapshot.EmptyStack)
				b.ev(snapshot.ActionAlloc, x+10*g, 4*g, snapshot.EmptyStack)
				b.ev(snapshot.ActionAlloc, x+14*g, 4*g-2, snapshot.EmptyStack)
				b.ev(snapshot.ActionFreeRequested, x+6*g, 4*g-1, snapshot.EmptyStack)
				b.ev(snapshot.ActionFreeCompleted, x+6*g, 4*g-1, snapshot.EmptyStack)
				b.seg(x, false, free(6*g), free(4*g), live(4*g, 4*g, 0), live(4*g, 4*g-2, 0))
			},
			peak: 12<<30 - 3, peakIndex: 5, final: 8<<30 - 2,
			reserved: [3]int64{18 << 30, 18 << 30, 18 << 30}, reservedIndex: -1,
		},
		{
			// The trace says a block is live, the segments say it is free.
			name: "trace and segments disagree",
			build: func(b *builder) {
				b.ev(snapshot.ActionAlloc, 0x100, 100, snapshot.EmptyStack)
				b.seg(0x100, false, free(512))
			},
			peak: 100, peakIndex: 0, final: 0,
			reserved: [3]int64{512, 512, 512}, reservedIndex: -1,
			warning: "not live blocks in the segments",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			tt.build(b)
			a := Analyze(b.s, Options{TimelinePoints: 30})
			d := a.Report().Devices[0]
			checks := []struct {
				what      string
				got, want int64
			}{
				{"peak", d.PeakAllocatedBytes, tt.peak},
				{"peak index", int64(d.PeakIndex), int64(tt.peakIndex)},
				{"initial", d.InitialAllocatedBytes, tt.initial},
				{"pre-trace", int64(d.PreTraceAllocations), int64(tt.preTrace)},
				{"final allocated", d.FinalAllocatedBytes, tt.final},
				{"final pending", d.FinalPendingFreeBytes, tt.pending},
				{"initial reserved", d.InitialReservedBytes, tt.reserved[0]},
				{"peak reserved", d.PeakReservedBytes, tt.reserved[1]},
				{"final reserved", d.FinalReservedBytes, tt.reserved[2]},
				{"peak reserved index", int64(d.PeakReservedIndex), int64(tt.reservedIndex)},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %d, want %d", c.what, c.got, c.want)
				}
			}
			joined := strings.Join(d.Warnings, "\n")
			if tt.warning == "" && joined != "" {
				t.Errorf("unexpected warnings %q", joined)
			}
			if !strings.Contains(joined, tt.warning) {
				t.Errorf("warnings %q lack %q", joined, tt.warning)
			}
			if tt.warning == "" {
				checkInvariants(t, a, a.Devices[0], d)
			}
		})
	}
}

// TestReplayPipelineHand runs TestReplay's cases with the replay's
// pipeline on.
func TestReplayPipelineHand(t *testing.T) {
	withPipeline(t, func() { TestReplay(t) })
}

// TestExpandableLayout checks the mapped runs at each moment of the
// "expandable map and unmap" case.
func TestExpandableLayout(t *testing.T) {
	b := newBuilder()
	buildExpandable(b)
	d := Analyze(b.s, Options{}).Devices[0]
	want := map[int][]string{
		-1: {"0x1000000:2097152"},
		0:  {"0x1000000:2097152", "0x1400000:2097152"},
		1:  {"0x1000000:6291456"},
		2:  {"0x1200000:4194304"},
	}
	for i, w := range want {
		var got []string
		st := d.StateAt(i, -1, 0)
		for _, s := range st.Segments {
			got = append(got, s.Address+":"+itoa(s.Size))
		}
		if !slices.Equal(got, w) {
			t.Errorf("segments after %d = %q, want %q", i, got, w)
		}
		if st.Fragmentation.LargestFreeBlockBytes != st.ReservedBytes-0 && len(w) == 1 {
			t.Errorf("after %d: largest free %d, want the whole run %d", i, st.Fragmentation.LargestFreeBlockBytes, st.ReservedBytes)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// buildExpandable maps and unmaps 2 MiB pages of an expandable segment.
func buildExpandable(b *builder) {
	const base, page = 0x1000000, 2 * mib
	b.ev(snapshot.ActionSegmentMap, base+2*page, page, snapshot.NoStack)
	b.ev(snapshot.ActionSegmentMap, base+page, page, snapshot.NoStack)
	b.ev(snapshot.ActionSegmentUnmap, base, page, snapshot.NoStack)
	b.seg(base+page, true, free(2*page))
}
