package snapshot_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
	"oomscope/snapshot/internal/adversarial"
)

// FuzzDecode feeds arbitrary bytes to the decoders: they must return a
// snapshot or an error, never panic or hang, and a snapshot they return
// must only refer to frames and stacks that exist. Decoded with a split
// at the middle (lazy stacks, as the split needs), the snapshot must be
// the one decoded without, or both fail.
func FuzzDecode(f *testing.F) {
	defer snapshot.SetPartPrefix(4 << 10)()
	files, _ := filepath.Glob("../../shared/snapshots/*.pickle")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 4096)])
		f.Add(data[:min(len(data), 64<<10)])
		if len(data) < 256<<10 {
			f.Add(data)
		}
	}
	for _, name := range gen.Scenarios() {
		opt := gen.Scenario(name)
		opt.Steps, opt.Layers = 1, 1
		data, _, err := gen.Bytes(opt)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, c := range adversarial.Corpus() {
		if len(c.Data) <= 1<<20 { // the fuzzer mutates small inputs best
			f.Add(c.Data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := snapshot.DecodeBytes(data, nil)
		if err == nil {
			checkRefs(t, s)
		}
		_, _ = snapshot.DecodeValue(data)
		if len(data) > 1<<20 {
			return
		}
		size := int64(len(data))
		serial, err := snapshot.Decode(bytes.NewReader(data), size, splitOptions(data, 1))
		opt, _ := snapshot.WithSplitAt(splitOptions(data, 1), data, size/2, nil)
		split, errSplit := snapshot.Decode(bytes.NewReader(data), size, opt)
		switch {
		case (err == nil) != (errSplit == nil):
			t.Fatalf("decoded with a split: %v, without: %v", errSplit, err)
		case err == nil && !snapshot.Equal(serial, split):
			t.Fatalf("the split decode differs: %s", snapshot.Diff(serial, split))
		}
	})
}

func checkRefs(t *testing.T, s *snapshot.Snapshot) {
	stack := func(id snapshot.StackID) {
		if id < snapshot.NoStack || int(id) >= s.Stacks.Len() {
			t.Fatalf("stack id %d outside %d stacks", id, s.Stacks.Len())
		}
	}
	for id := range s.Stacks.Len() {
		st, err := s.Stacks.Frames(snapshot.StackID(id))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range st {
			if f < 0 || int(f) >= len(s.Frames) {
				t.Fatalf("frame id %d outside %d frames", f, len(s.Frames))
			}
		}
	}
	for _, g := range append(append([]snapshot.Segment{}, s.Segments...), s.HostSegments...) {
		stack(g.Frames)
		for _, b := range g.Blocks {
			stack(b.Frames)
			for _, h := range b.History {
				stack(h.Frames)
			}
		}
	}
	for _, tr := range append(append([]snapshot.Trace{}, s.DeviceTraces...), s.HostTraces...) {
		for i := range tr.Len() {
			stack(tr.Frames(i))
		}
	}
}
