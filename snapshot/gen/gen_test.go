package gen

import (
	"bytes"
	"testing"

	"oomscope/snapshot"
)

// replayed is what an independent replay of a decoded snapshot finds, by
// the pairing rules of docs/snapshot.md#pairing-rule (live from alloc to
// free_completed, matched by address; the initial state rebuilt from
// unmatched frees and active blocks).
type replayed struct {
	initial, peak    int64
	peakIndex        int
	initialReserved  int64
	peakReserved     int64
	finalAllocated   int64
	finalReserved    int64
	nonAdjacentFrees int
}

func replay(s *snapshot.Snapshot, dev int) replayed {
	var r replayed
	r.peakIndex = -1
	tr := s.DeviceTraces[dev].Entries()
	open := map[uint64]bool{}
	var initial int64
	for _, e := range tr {
		switch e.Action {
		case snapshot.ActionAlloc:
			open[e.Addr] = true
		case snapshot.ActionFreeCompleted:
			if open[e.Addr] {
				delete(open, e.Addr)
			} else {
				initial += e.Size
			}
		}
	}
	var netReserved int64
	for i, e := range tr {
		switch e.Action {
		case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentMap:
			netReserved += e.Size
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			netReserved -= e.Size
		case snapshot.ActionFreeCompleted:
			if i == 0 || tr[i-1].Action != snapshot.ActionFreeRequested || tr[i-1].Addr != e.Addr {
				r.nonAdjacentFrees++
			}
		}
	}
	for _, g := range s.Segments {
		if g.Device != dev {
			continue
		}
		r.finalReserved += g.TotalSize
		for _, b := range g.Blocks {
			if b.State == snapshot.StateInactive {
				continue
			}
			if b.State == snapshot.StateActiveAllocated {
				r.finalAllocated += b.RequestedSize
			}
			if !open[b.Address] {
				initial += b.RequestedSize
			}
		}
	}
	r.initial, r.peak = initial, initial
	r.initialReserved = r.finalReserved - netReserved
	r.peakReserved = r.initialReserved
	live, reserved := initial, r.initialReserved
	for i, e := range tr {
		switch e.Action {
		case snapshot.ActionAlloc:
			live += e.Size
		case snapshot.ActionFreeCompleted:
			live -= e.Size
		case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentMap:
			reserved += e.Size
		case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
			reserved -= e.Size
		}
		if live > r.peak {
			r.peak, r.peakIndex = live, i
		}
		r.peakReserved = max(r.peakReserved, reserved)
	}
	return r
}

func TestScenarios(t *testing.T) {
	for _, name := range Scenarios() {
		t.Run(name, func(t *testing.T) {
			opt := Scenario(name)
			data, truth, err := Bytes(opt)
			if err != nil {
				t.Fatal(err)
			}
			if truth.Bytes != int64(len(data)) {
				t.Errorf("truth.Bytes = %d, wrote %d", truth.Bytes, len(data))
			}
			s, err := snapshot.DecodeBytes(data, nil)
			if err != nil {
				t.Fatal(err)
			}
			typed, _, err := Snapshot(opt)
			if err != nil {
				t.Fatal(err)
			}
			typed.Protocol = s.Protocol
			if !snapshot.Equal(s, typed) {
				t.Errorf("decoded snapshot differs from the generated one: %s", snapshot.Diff(typed, s))
			}
			if len(s.DeviceTraces) != len(truth.Devices) {
				t.Fatalf("%d traces, %d device truths", len(s.DeviceTraces), len(truth.Devices))
			}
			for d, dt := range truth.Devices {
				r := replay(s, d)
				if dt.Entries != s.DeviceTraces[d].Len() {
					t.Errorf("device %d: entries %d, truth %d", d, s.DeviceTraces[d].Len(), dt.Entries)
				}
				if r.initial != dt.InitialAllocated || r.peak != dt.PeakAllocated || r.peakIndex != dt.PeakIndex {
					t.Errorf("device %d: replay initial/peak/index %d/%d/%d, truth %d/%d/%d", d,
						r.initial, r.peak, r.peakIndex, dt.InitialAllocated, dt.PeakAllocated, dt.PeakIndex)
				}
				if r.initialReserved != dt.InitialReserved || r.peakReserved != dt.PeakReserved {
					t.Errorf("device %d: replay reserved initial/peak %d/%d, truth %d/%d", d,
						r.initialReserved, r.peakReserved, dt.InitialReserved, dt.PeakReserved)
				}
				if r.finalAllocated != dt.FinalAllocated || r.finalReserved != dt.FinalReserved {
					t.Errorf("device %d: final allocated/reserved %d/%d, truth %d/%d", d,
						r.finalAllocated, r.finalReserved, dt.FinalAllocated, dt.FinalReserved)
				}
				var sum int64
				for _, c := range categoriesArr {
					v, ok := dt.CategoriesAtPeak[c]
					if !ok || v < 0 {
						t.Errorf("device %d: category %s = %d, %v", d, c, v, ok)
					}
					sum += v
				}
				if sum != dt.PeakAllocated {
					t.Errorf("device %d: categories sum to %d, peak %d", d, sum, dt.PeakAllocated)
				}
				if dt.PeakIndex >= 0 && s.DeviceTraces[d].Action(dt.PeakIndex) != snapshot.ActionAlloc {
					t.Errorf("device %d: peak entry is %s", d, s.DeviceTraces[d].Action(dt.PeakIndex))
				}
			}
			checkFeatures(t, name, opt, data, s, truth)
		})
	}
}

// checkFeatures checks that each scenario contains what it promises.
func checkFeatures(t *testing.T, name string, opt Options, data []byte, s *snapshot.Snapshot, truth Truth) {
	t.Helper()
	opt, _ = opt.withDefaults()
	dt := truth.Devices[0]
	tr := s.DeviceTraces[0].Entries()
	if opt.MaxEntries > 0 && (dt.DroppedEntries == 0 || len(tr) != opt.MaxEntries) {
		t.Errorf("ring buffer: dropped %d, kept %d of max %d", dt.DroppedEntries, len(tr), opt.MaxEntries)
	}
	if opt.MaxEntries > 0 && dt.InitialAllocated == 0 {
		t.Errorf("ring buffer: nothing live at the window start")
	}
	if opt.Expandable {
		exp := 0
		for _, g := range s.Segments {
			if g.IsExpandable {
				exp++
			}
		}
		if exp == 0 || dt.Actions[snapshot.ActionSegmentMap] == 0 || dt.Actions[snapshot.ActionSegmentUnmap] == 0 ||
			!s.AllocatorSettings.ExpandableSegments {
			t.Errorf("expandable: %d expandable segments, actions %v", exp, dt.Actions)
		}
	}
	if opt.TwoStreams {
		streams := map[uint64]bool{}
		for _, e := range tr {
			streams[e.Stream] = true
		}
		if len(streams) != 2 || replay(s, 0).nonAdjacentFrees == 0 {
			t.Errorf("two streams: streams %v, delayed frees %d", streams, replay(s, 0).nonAdjacentFrees)
		}
	}
	if opt.OOM {
		if len(dt.OOMs) != 1 || tr[len(tr)-1].Action != snapshot.ActionOOM || dt.OOMs[0].Index != len(tr)-1 {
			t.Errorf("oom: %+v, last action %s", dt.OOMs, tr[len(tr)-1].Action)
		}
	} else if len(dt.OOMs) != 0 {
		t.Errorf("unexpected ooms %+v", dt.OOMs)
	}
	wantProto := opt.protocol()
	if data[0] != 0x80 || int(data[1]) != wantProto || s.Protocol != wantProto {
		t.Errorf("protocol header % x, decoded %d, want %d", data[:2], s.Protocol, wantProto)
	}
	if hasFrame := data[2] == 0x95; hasFrame != (wantProto >= 4) {
		t.Errorf("protocol %d: FRAME after PROTO = %v", wantProto, hasFrame)
	}
	if opt.PreTraceParams {
		ghosts := 0
		for _, g := range s.Segments {
			for _, b := range g.Blocks {
				if b.State == snapshot.StateActiveAllocated && b.Frames == snapshot.EmptyStack {
					ghosts++
				}
			}
		}
		if ghosts != 6*opt.Layers*opt.Devices {
			t.Errorf("pre-trace params: %d ghost blocks, want %d", ghosts, 6*opt.Layers*opt.Devices)
		}
	}
	if opt.Format == snapshot.Format20 {
		for _, g := range s.Segments {
			for _, b := range g.Blocks {
				if !b.AddressComputed || (b.State != snapshot.StateInactive && len(b.History) != 1) {
					t.Fatalf("legacy block %+v", b)
				}
			}
		}
	}
	if opt.Format == snapshot.Format210 {
		n := 0
		for _, e := range tr {
			if e.UserMetadata != "" {
				n++
			}
		}
		if n == 0 {
			t.Errorf("post-2.10: no user_metadata")
		}
	}
	if opt.PrivatePool {
		private := 0
		for _, g := range s.Segments {
			if g.HasPoolID && g.PoolID == (snapshot.PoolID{1, 0}) {
				private++
			}
		}
		if private == 0 {
			t.Errorf("private pool: no segment in pool (1, 0)")
		}
	}
	if opt.Devices > 1 && len(truth.Devices) != opt.Devices {
		t.Errorf("devices: %d truths", len(truth.Devices))
	}
}

func TestTargetBytes(t *testing.T) {
	const target = 2 << 20
	_, truth, err := Bytes(Options{Seed: 1, TargetBytes: target})
	if err != nil {
		t.Fatal(err)
	}
	if truth.Bytes < target*9/10 || truth.Bytes > target*11/10 {
		t.Errorf("TargetBytes %d produced %d bytes (%d steps)", target, truth.Bytes, truth.Steps)
	}
}

func TestDeterministic(t *testing.T) {
	a, _, err := Bytes(Scenario("everything"))
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := Bytes(Scenario("everything"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("same options gave different bytes")
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Protocol: 6}, {Protocol: -1}, {Layers: -1}, {MaxEntries: -5}, {Devices: 99}} {
		if _, _, err := Bytes(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}
