package gen

import (
	"strconv"

	"oomscope/snapshot"
)

// assemble builds the snapshot and its truth from the device runs.
func assemble(opt Options, runs []devRun, st *stacks) (*snapshot.Snapshot, Truth) {
	s := &snapshot.Snapshot{
		Protocol: opt.protocol(),
		Frames:   st.t.frames,
		Stacks:   st.t.stacks,
	}
	truth := Truth{Steps: opt.Steps}
	legacy := opt.Format == snapshot.Format20
	for d, r := range runs {
		cut := 0
		if opt.MaxEntries > 0 && len(r.trace) > opt.MaxEntries {
			cut = len(r.trace) - opt.MaxEntries
		}
		trace := r.trace[cut:]
		if legacy {
			for i := range trace {
				trace[i].Frames, trace[i].TimeUS = snapshot.NoStack, 0
			}
		}
		s.DeviceTraces = append(s.DeviceTraces, snapshot.TraceOf(trace...))
		segs := r.segments
		if legacy {
			for i := range segs {
				g := &segs[i]
				g.HasPoolID, g.IsExpandable, g.Frames = false, false, snapshot.NoStack
				for j := range g.Blocks {
					b := &g.Blocks[j]
					b.AddressComputed = true
					if b.State != snapshot.StateInactive {
						b.History = []snapshot.HistoryEntry{{Addr: b.Address, RealSize: b.RequestedSize, Frames: b.Frames}}
					}
					b.Frames = snapshot.NoStack
				}
			}
		}
		s.Segments = append(s.Segments, segs...)
		if !legacy {
			s.ExternalAnnotations = append(s.ExternalAnnotations, r.annotations...)
		}
		dt := deviceTruth(d, r, cut, trace, segs)
		stepTruth(&dt, r, cut, opt)
		truth.Devices = append(truth.Devices, dt)
	}
	recordStacks(s, opt.Loop.Stacks)
	if !legacy {
		s.AllocatorSettings = settings(opt.Expandable)
		if s.ExternalAnnotations == nil {
			s.ExternalAnnotations = []snapshot.Annotation{}
		}
	}
	return s, truth
}

// deviceTruth replays the deltas: everything before the first kept entry is
// the initial state, then the kept entries one by one.
func deviceTruth(d int, r devRun, cut int, trace []snapshot.TraceEntry, segs []snapshot.Segment) DeviceTruth {
	t := DeviceTruth{Device: d, Entries: len(trace), DroppedEntries: cut, Actions: map[snapshot.Action]int{},
		PeakIndex: -1, CategoriesAtPeak: map[string]int64{}}
	for _, e := range trace {
		t.Actions[e.Action]++
	}
	var live, reserved int64
	var byCat, peakCat [len(categoriesArr)]int64
	started := false
	for _, dl := range r.deltas {
		if !started && dl.trace >= cut {
			started = true
			t.InitialAllocated, t.InitialReserved = live, reserved
			t.PeakAllocated, t.PeakReserved = live, reserved
			peakCat = byCat
		}
		live += dl.live
		byCat[dl.cat] += dl.live
		reserved += dl.reserved
		if !started {
			continue
		}
		i := dl.trace - cut
		if live > t.PeakAllocated {
			t.PeakAllocated, t.PeakIndex, t.PeakTimeUS = live, i, trace[i].TimeUS
			peakCat = byCat
		}
		t.PeakReserved = max(t.PeakReserved, reserved)
		if e := trace[i]; e.Action == snapshot.ActionOOM {
			t.OOMs = append(t.OOMs, OOMTruth{Index: i, Requested: e.Size, DeviceFree: e.DeviceFree, Allocated: live, Reserved: reserved})
		}
	}
	if !started {
		t.InitialAllocated, t.InitialReserved = live, reserved
		t.PeakAllocated, t.PeakReserved = live, reserved
		peakCat = byCat
	}
	for i, c := range categoriesArr {
		t.CategoriesAtPeak[c] = peakCat[i]
	}
	t.FinalLive = live
	for _, g := range segs {
		t.FinalReserved += g.TotalSize
		for _, b := range g.Blocks {
			if b.State == snapshot.StateActiveAllocated {
				t.FinalAllocated += b.RequestedSize
				t.FinalAllocatedSize += b.Size
			}
		}
	}
	return t
}

// settings returns torch 2.6's allocator_settings.
func settings(expandable bool) *snapshot.AllocatorSettings {
	conf := ""
	if expandable {
		conf = "expandable_segments:True"
	}
	var rp snapshot.Dict
	for k := 1; k <= 32768; k *= 2 {
		rp = append(rp, snapshot.DictItem{Key: strconv.Itoa(k), Value: int64(0)})
	}
	raw := snapshot.Dict{
		{Key: "PYTORCH_CUDA_ALLOC_CONF", Value: conf},
		{Key: "max_split_size", Value: int64(-1)},
		{Key: "garbage_collection_threshold", Value: 0.0},
		{Key: "expandable_segments", Value: expandable},
		{Key: "pinned_num_register_threads", Value: int64(1)},
		{Key: "release_lock_on_cudamalloc", Value: false},
		{Key: "pinned_use_cuda_host_register", Value: false},
		{Key: "roundup_power2_divisions", Value: rp},
	}
	return &snapshot.AllocatorSettings{
		PyTorchCUDAAllocConf: conf, MaxSplitSize: -1, ExpandableSegments: expandable,
		PinnedNumRegisterThreads: 1, RoundupPower2Divisions: rp, Raw: raw,
	}
}
