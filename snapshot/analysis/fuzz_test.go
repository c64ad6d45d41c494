package analysis

import (
	"encoding/binary"
	"testing"

	"oomscope/snapshot"
)

// fuzzSnapshot turns arbitrary bytes into a snapshot: 6-byte records of
// (action, address slot, signed size, stack) on device 0 or 1, then segments
// with blocks. Addresses come from a few slots so that reuse, double allocs,
// unmatched frees and overlapping segments all happen.
func fuzzSnapshot(data []byte) *snapshot.Snapshot {
	b := newBuilder()
	b.s.DeviceTraces = append(b.s.DeviceTraces, snapshot.Trace{})
	stacks := []snapshot.StackID{snapshot.NoStack, snapshot.EmptyStack,
		b.stack(py("/p/model.py", 1, "forward")), b.stack(cpp("torch::autograd::Engine::evaluate_function()")),
		b.stack(py(torchPkg+"/optim/adamw.py", 2, "step")), b.stack(py(torchPkg+"/nn/modules/module.py", 3, "_apply")),
		snapshot.StackID(1 << 20)} // out of range on purpose
	actions := []snapshot.Action{snapshot.ActionAlloc, snapshot.ActionFreeRequested, snapshot.ActionFreeCompleted,
		snapshot.ActionSegmentAlloc, snapshot.ActionSegmentFree, snapshot.ActionSegmentMap, snapshot.ActionSegmentUnmap,
		snapshot.ActionOOM, snapshot.ActionSnapshot, "free", "mystery"}
	for len(data) >= 6 {
		r := data[:6]
		data = data[6:]
		if r[0] == 0xff { // switch to segments
			break
		}
		dev := int(r[0]>>7) & 1
		e := snapshot.TraceEntry{
			Action: actions[int(r[0]&0x7f)%len(actions)],
			Addr:   uint64(r[1]%16) * 4096,
			Size:   int64(int16(binary.LittleEndian.Uint16(r[2:4]))) * 64,
			Frames: stacks[int(r[4])%len(stacks)],
			TimeUS: int64(r[5]) * 10,
		}
		b.s.DeviceTraces[dev].Append(e)
	}
	for len(data) >= 4 {
		r := data[:4]
		data = data[4:]
		sg := snapshot.Segment{Device: int(r[0] & 1), Address: uint64(r[1]%16) * 4096, IsExpandable: r[0]&2 != 0,
			Frames: snapshot.NoStack}
		a := sg.Address
		for k := 0; k < int(r[2]%4)+1; k++ {
			size := int64(r[3]%8+1) * 512
			st := []snapshot.BlockState{snapshot.StateActiveAllocated, snapshot.StateInactive,
				snapshot.StateActivePendingFree, "weird"}[(int(r[3])+k)%4]
			sg.Blocks = append(sg.Blocks, snapshot.Block{Address: a, Size: size, RequestedSize: size - int64(k*7),
				State: st, Frames: stacks[(int(r[2])+k)%len(stacks)]})
			sg.TotalSize += size
			a += uint64(size)
		}
		b.s.Segments = append(b.s.Segments, sg)
	}
	return b.s
}

// fuzzSeeds are FuzzAnalyze's seed inputs (TestSameNumbers pins their
// numbers too).
var fuzzSeeds = [][]byte{
	{0, 1, 10, 0, 2, 1, 2, 1, 10, 0, 2, 2, 0xff, 0, 0, 1, 2, 3},
	{3, 2, 100, 0, 0, 0, 5, 3, 100, 0, 0, 1, 6, 2, 50, 0, 0, 2, 0, 2, 1, 0, 2, 3, 7, 0, 0, 0, 0, 4, 0xff, 0, 0, 2, 1, 1, 2, 3, 7},
	{0x80, 1, 0xff, 0xff, 3, 0, 2, 1, 1, 0, 4, 1, 9, 5, 1, 0, 1, 1, 10, 5, 1, 0, 6, 1},
}

// FuzzAnalyze checks that no snapshot, however inconsistent, makes the
// analysis panic, and that the peak always equals what is live at it.
func FuzzAnalyze(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := fuzzSnapshot(data)
		a := Analyze(s, Options{TimelinePoints: 12, SeriesSites: 2})
		r := a.Report()
		for i, d := range r.Devices {
			if got := d.CategoriesAtPeak.Total(); got != d.PeakAllocatedBytes {
				t.Fatalf("device %d: live at peak %d != peak %d", d.Device, got, d.PeakAllocatedBytes)
			}
			dev := a.Devices[i]
			for _, k := range []int{-5, -1, 0, dev.Trace.Len() / 2, dev.Trace.Len() + 3} {
				dev.StateAt(k, -1, 3)
			}
			dev.AllocationView(-1)
			dev.AllocationView(dev.NumAllocs())
			checkDiagnosis(t, &d)
		}
		Markdown(r)
		MarkdownComparison(Compare(a, a, 3))
	})
}

// checkDiagnosis checks what any diagnosis must satisfy: steps in order
// without overlap inside the trace, no step or phase above the peak, the
// peak's step among the steps, a cause, and fixes that save something.
func checkDiagnosis(t *testing.T, d *DeviceReport) {
	t.Helper()
	last := -1
	for k, s := range d.Steps {
		if s.FirstEntry <= last || s.LastEntry < s.FirstEntry || s.LastEntry >= d.Entries || s.PeakAllocatedBytes > d.PeakAllocatedBytes {
			t.Fatalf("step %d %+v after %d (entries %d, peak %d)", k, s, last, d.Entries, d.PeakAllocatedBytes)
		}
		last = s.LastEntry
	}
	for _, p := range d.PhasePeaks {
		if p.Step < 0 || p.Step >= len(d.Steps) || p.PeakAllocatedBytes > d.PeakAllocatedBytes {
			t.Fatalf("phase peak %+v (steps %d, peak %d)", p, len(d.Steps), d.PeakAllocatedBytes)
		}
	}
	for k, sp := range d.PhaseSpans {
		if sp.Step < 0 || sp.Step >= len(d.Steps) || sp.FirstEntry > sp.LastEntry || sp.FirstEntry < d.Steps[sp.Step].FirstEntry ||
			sp.LastEntry > d.Steps[sp.Step].LastEntry || k > 0 && sp.FirstEntry <= d.PhaseSpans[k-1].LastEntry {
			t.Fatalf("phase span %d %+v (steps %+v)", k, sp, d.Steps)
		}
	}
	if d.PeakPhase.Step >= len(d.Steps) || d.Diagnosis.Cause == "" {
		t.Fatalf("peak phase %+v of %d steps, diagnosis %+v", d.PeakPhase, len(d.Steps), d.Diagnosis)
	}
	for _, f := range d.Fixes {
		if f.SavesBytes <= 0 {
			t.Fatalf("fix %s saves %d", f.ID, f.SavesBytes)
		}
	}
}
