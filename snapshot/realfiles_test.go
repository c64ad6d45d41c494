package snapshot

import (
	"os"
	"path/filepath"
	"testing"
)

// realDir is where the shared real snapshots live, relative to this package.
const realDir = "../../shared/snapshots"

// realFile describes one file of ../shared/snapshots with the totals its
// README lists (verified there with python3's pickle).
type realFile struct {
	name      string
	segments  int
	blocks    int
	entries   int // device 0
	reserved  int64
	allocated int64 // sum of size of active_allocated blocks
	requested int64 // sum of requested_size of active_allocated blocks
	actions   map[Action]int
}

var realFiles = []realFile{
	{name: "pt20_flexgen_oom_snapshot.pickle", segments: 176, blocks: 463, entries: 1,
		reserved: 11844714496, allocated: 11840159744, requested: 11840159744,
		actions: map[Action]int{ActionSnapshot: 1}},
	{name: "pt20_flexgen_1.3b_snapshot.pickle", segments: 257, blocks: 948, entries: 1,
		reserved: 7608467456, allocated: 5683450880, requested: 5683449864,
		actions: map[Action]int{ActionFreeCompleted: 1}},
	{name: "pt26_cs336_ctx128_forward.pickle", segments: 516, blocks: 1276, entries: 4657,
		reserved: 19667091456, allocated: 19498420224, requested: 19352504320,
		actions: map[Action]int{ActionSegmentAlloc: 289, ActionAlloc: 2058, ActionFreeRequested: 1155, ActionFreeCompleted: 1155}},
	{name: "pt26_cs336_ctx128_fullstep.pickle", segments: 1010, blocks: 1525, entries: 19342,
		reserved: 61111009280, allocated: 54873829888, requested: 54597857284,
		actions: map[Action]int{ActionSegmentAlloc: 783, ActionAlloc: 6771, ActionFreeRequested: 5894, ActionFreeCompleted: 5894}},
	{name: "pt26_cs336_ctx256_forward_segfree.pickle", segments: 700, blocks: 1297, entries: 5125,
		reserved: 26545750016, allocated: 26388097024, requested: 26252175360,
		actions: map[Action]int{ActionSegmentFree: 287, ActionSegmentAlloc: 471, ActionAlloc: 2057, ActionFreeRequested: 1155, ActionFreeCompleted: 1155}},
}

// readReal returns the bytes of a real snapshot, skipping the test if the
// shared folder is missing.
func readReal(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(realDir, name))
	if os.IsNotExist(err) {
		tb.Skipf("real snapshot %s not present", name)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// decoders lists the decoders every real-file test runs against.
var decoders = []struct {
	name string
	fn   func([]byte) (*Snapshot, error)
}{
	{"fast", func(b []byte) (*Snapshot, error) { return DecodeBytes(b, nil) }},
	{"reference", func(b []byte) (*Snapshot, error) { return DecodeReferenceBytes(b) }},
}

func TestRealFilesTotals(t *testing.T) {
	for _, rf := range realFiles {
		for _, dec := range decoders {
			t.Run(rf.name+"/"+dec.name, func(t *testing.T) {
				s, err := dec.fn(readReal(t, rf.name))
				if err != nil {
					t.Fatal(err)
				}
				if got := len(s.Segments); got != rf.segments {
					t.Errorf("segments = %d, want %d", got, rf.segments)
				}
				var blocks int
				var reserved, allocated, requested int64
				for _, seg := range s.Segments {
					reserved += seg.TotalSize
					var sum int64
					for _, b := range seg.Blocks {
						blocks++
						sum += b.Size
						if b.State == StateActiveAllocated {
							allocated += b.Size
							requested += b.RequestedSize
						}
					}
					if sum != seg.TotalSize {
						t.Errorf("segment %#x: blocks sum to %d, total_size %d", seg.Address, sum, seg.TotalSize)
					}
					if n := len(seg.Blocks); n > 0 {
						last := seg.Blocks[n-1]
						if last.Address+uint64(last.Size) != seg.Address+uint64(seg.TotalSize) {
							t.Errorf("segment %#x: last block ends at %#x, segment at %#x", seg.Address,
								last.Address+uint64(last.Size), seg.Address+uint64(seg.TotalSize))
						}
					}
				}
				if blocks != rf.blocks {
					t.Errorf("blocks = %d, want %d", blocks, rf.blocks)
				}
				if reserved != rf.reserved || allocated != rf.allocated || requested != rf.requested {
					t.Errorf("reserved/allocated/requested = %d/%d/%d, want %d/%d/%d",
						reserved, allocated, requested, rf.reserved, rf.allocated, rf.requested)
				}
				if len(s.DeviceTraces) == 0 {
					t.Fatal("no device traces")
				}
				tr := s.DeviceTraces[0].Entries()
				if len(tr) != rf.entries {
					t.Errorf("entries = %d, want %d", len(tr), rf.entries)
				}
				got := map[Action]int{}
				for _, e := range tr {
					got[e.Action]++
				}
				if len(got) != len(rf.actions) {
					t.Errorf("actions = %v, want %v", got, rf.actions)
				}
				for a, n := range rf.actions {
					if got[a] != n {
						t.Errorf("action %s = %d, want %d", a, got[a], n)
					}
				}
				if s.Protocol != 4 {
					t.Errorf("protocol = %d, want 4", s.Protocol)
				}
			})
		}
	}
}
