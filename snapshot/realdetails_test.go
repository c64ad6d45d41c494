package snapshot

import "testing"

func TestRealFileDetails(t *testing.T) {
	for _, dec := range decoders {
		t.Run(dec.name, func(t *testing.T) {
			s, err := dec.fn(readReal(t, "pt26_cs336_ctx128_fullstep.pickle"))
			if err != nil {
				t.Fatal(err)
			}
			wantAnn := []struct{ stage, name string }{
				{"START", "Optimizer.zero_grad#AdamW.zero_grad"},
				{"END", "Optimizer.zero_grad#AdamW.zero_grad"},
				{"START", "Optimizer.step#AdamW.step"},
				{"END", "Optimizer.step#AdamW.step"},
			}
			if len(s.ExternalAnnotations) != len(wantAnn) {
				t.Fatalf("annotations = %d, want %d", len(s.ExternalAnnotations), len(wantAnn))
			}
			for i, w := range wantAnn {
				a := s.ExternalAnnotations[i]
				if a.Stage != w.stage || a.Name != w.name || a.TimeUS < 1e15 {
					t.Errorf("annotation %d = %+v, want %s %s", i, a, w.stage, w.name)
				}
			}
			as := s.AllocatorSettings
			if as == nil || as.MaxSplitSize != -1 || as.PinnedNumRegisterThreads != 1 || len(as.RoundupPower2Divisions) != 16 || len(as.Raw) != 8 {
				t.Errorf("allocator settings = %+v", as)
			}
			// Every entry of the 2.6 files has frames and a timestamp, and
			// the notes measured 668 distinct frame objects in this file.
			for i, e := range s.DeviceTraces[0].Entries() {
				if e.Frames == NoStack || e.TimeUS == 0 {
					t.Fatalf("entry %d: frames %d time %d", i, e.Frames, e.TimeUS)
				}
			}
			if n := len(s.Frames); n == 0 || n > 668 {
				t.Errorf("frames table has %d frames, want 1..668", n)
			}
			for _, seg := range s.Segments {
				for _, b := range seg.Blocks {
					if b.AddressComputed {
						t.Fatalf("block %#x: address computed in a 2.6 file", b.Address)
					}
				}
			}
		})
	}
}

func TestRealLegacyBlocks(t *testing.T) {
	for _, dec := range decoders {
		t.Run(dec.name, func(t *testing.T) {
			s, err := dec.fn(readReal(t, "pt20_flexgen_1.3b_snapshot.pickle"))
			if err != nil {
				t.Fatal(err)
			}
			var hist, withStack int
			for _, seg := range s.Segments {
				for _, b := range seg.Blocks {
					if !b.AddressComputed || b.Frames != NoStack {
						t.Fatalf("2.0 block %#x: computed=%v frames=%d", b.Address, b.AddressComputed, b.Frames)
					}
					hist += len(b.History)
					if b.AllocStack() != NoStack {
						withStack++
					}
				}
			}
			if hist == 0 || withStack == 0 {
				t.Errorf("history entries %d, blocks with a history stack %d", hist, withStack)
			}
			if e := s.DeviceTraces[0].Entry(0); e.Frames != NoStack || e.TimeUS != 0 {
				t.Errorf("2.0 entry has frames %d time %d, want none", e.Frames, e.TimeUS)
			}
		})
	}
}
