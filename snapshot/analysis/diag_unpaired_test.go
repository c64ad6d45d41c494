package analysis

import (
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// TestStepsUnpairedTrace checks the steps of traces whose entries do not
// pair (a free whose size is not its alloc's, an address allocated twice,
// frees of blocks from before the window): summing the entries' sizes
// disagrees with the replay there, so the scan's intervals are measured
// again from the live ranges (remeasure). Every step's and phase's peak
// and end are recomputed here by brute force: the allocations alive after
// each entry.
func TestStepsUnpairedTrace(t *testing.T) {
	alloc := func(addr uint64, size int64, st snapshot.StackID) snapshot.TraceEntry {
		return snapshot.TraceEntry{Action: snapshot.ActionAlloc, Addr: addr, Size: size, Frames: st}
	}
	free := func(addr uint64, size int64) snapshot.TraceEntry {
		return snapshot.TraceEntry{Action: snapshot.ActionFreeCompleted, Addr: addr, Size: size, Frames: snapshot.NoStack}
	}
	var fam []byte
	{
		var buf = new(bytesBuffer)
		if _, err := gen.WriteFamily(buf, gen.FamilyOptions{Family: gen.RealStacks, Iterations: 3000}); err != nil {
			t.Fatal(err)
		}
		fam = buf.b
	}
	famSnap, err := snapshot.DecodeBytes(fam, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]*snapshot.Snapshot{"family_real": famSnap}
	{
		// Two training steps by stack phase; the second step's free of
		// 0x100 says 64 B where the alloc said 4 KiB, 0x300 is allocated
		// twice, 0x900 was allocated before the window.
		//
		// late: the same in one step whose peak comes before any
		// disagreement, which only the end shows.
		var st snapshot.Stacks
		fr := []snapshot.Frame{
			{Name: "forward", Filename: "/p/model.py", Line: 1},
			{Name: "backward", Filename: "/usr/lib/python3/site-packages/torch/_tensor.py", Line: 2},
			{Name: "step", Filename: "/usr/lib/python3/site-packages/torch/optim/adamw.py", Line: 3},
		}
		fwd, bwd, opt := st.Add(snapshot.Stack{0}), st.Add(snapshot.Stack{1}), st.Add(snapshot.Stack{2})
		var es []snapshot.TraceEntry
		for step := range 2 {
			es = append(es, alloc(0x100, 4096, fwd), alloc(0x200, 8192, fwd), alloc(0x300, 1024, fwd), alloc(0x300, 2048, fwd),
				alloc(0x400, 512, bwd), free(0x200, 8192), free(0x100, []int64{4096, 64}[step]), free(0x300, 2048), free(0x400, 512),
				alloc(0x500, 256, opt), free(0x500, 256))
			if step == 0 {
				es = append(es, free(0x900, 777))
			}
		}
		s := &snapshot.Snapshot{Frames: fr, Stacks: st, DeviceTraces: []snapshot.Trace{snapshot.TraceOf(es...)}}
		cases["hand"] = s
		es = []snapshot.TraceEntry{alloc(0x100, 1<<20, fwd), alloc(0x400, 512, bwd), free(0x100, 1<<20), free(0x400, 512),
			alloc(0x500, 256, opt), free(0x500, 256),
			alloc(0x200, 4096, fwd), alloc(0x400, 512, bwd), free(0x200, 64), free(0x400, 512), alloc(0x500, 256, opt), free(0x500, 256)}
		cases["late"] = &snapshot.Snapshot{Frames: fr, Stacks: st, DeviceTraces: []snapshot.Trace{snapshot.TraceOf(es...)}}
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			a := Analyze(s, Options{})
			r := a.Report()
			d, dr := a.Devices[0], r.Devices[0]
			n := d.Trace.Len()
			// The entries' own sizes must disagree with the replay, or
			// remeasure is not what this test exercises.
			var sum, sumPeak int64 = dr.InitialAllocatedBytes, dr.InitialAllocatedBytes
			for i := range n {
				switch d.Trace.Kind(i) {
				case snapshot.KindAlloc:
					sum += d.Trace.Size(i)
				case snapshot.KindFreeCompleted:
					sum -= d.Trace.Size(i)
				}
				sumPeak = max(sumPeak, sum)
			}
			if name == "hand" && sumPeak == dr.PeakAllocatedBytes || name == "late" && sum == liveAfter(d, n-1) {
				t.Fatalf("the summed sizes agree with the replay (peak %d): the trace pairs", sumPeak)
			}
			live := make([]int64, n)
			for i := range n {
				live[i] = liveAfter(d, i)
			}
			if len(dr.Steps) == 0 {
				t.Fatal("no steps")
			}
			for _, sp := range dr.Steps {
				peak, at := int64(-1<<63), -1
				for i := sp.FirstEntry; i <= sp.LastEntry; i++ {
					if live[i] > peak {
						peak, at = live[i], i
					}
				}
				if sp.PeakAllocatedBytes != peak || sp.PeakIndex != at || sp.EndAllocatedBytes != live[sp.LastEntry] {
					t.Errorf("step %+v: want peak %d at %d, end %d", sp, peak, at, live[sp.LastEntry])
				}
			}
			for _, pp := range dr.PhasePeaks {
				if pp.PeakIndex >= 0 && live[pp.PeakIndex] != pp.PeakAllocatedBytes {
					t.Errorf("phase peak %+v: %d live there", pp, live[pp.PeakIndex])
				}
			}
		})
	}
}

// liveAfter is the allocated memory after entry i, from the live ranges.
func liveAfter(d *Device, i int) int64 {
	var v int64
	for _, al := range allocations(d) {
		if aliveAfter(al, i) {
			v += al.Size
		}
	}
	return v
}

// bytesBuffer is a minimal io.Writer.
type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
