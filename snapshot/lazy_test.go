package snapshot_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

// TestLazyStacks decodes files of both benchmark families, a generated
// training run (protocols 2 and 5) and the real files with a source and a
// small HoldFrames, so that most stacks stay in the file: the snapshot
// must equal the one decoded with every stack held, frame by frame (Equal
// reads each lazy stack back), and the summaries must be those of the
// frames read back.
func TestLazyStacks(t *testing.T) {
	inputs := map[string][]byte{}
	for _, fam := range []gen.Family{gen.RealStacks, gen.DistinctStacks} {
		var buf bytes.Buffer
		if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: fam, Iterations: 2000}); err != nil {
			t.Fatal(err)
		}
		inputs[string(fam)] = buf.Bytes()
	}
	for _, proto := range []int{2, 5} {
		opt := gen.Scenario("training")
		opt.Protocol = proto
		data, _, err := gen.Bytes(opt)
		if err != nil {
			t.Fatal(err)
		}
		inputs["training/p"+string(rune('0'+proto))] = data
	}
	for _, rf := range []string{"pt26_cs336_ctx128_fullstep.pickle", "pt20_flexgen_1.3b_snapshot.pickle"} {
		if data, err := readShared(rf); err == nil {
			inputs[rf] = data
		}
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			held, err := snapshot.DecodeBytes(data, nil)
			if err != nil {
				t.Fatal(err)
			}
			sum := analysis.Summarizer()
			lazy, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)),
				&snapshot.Options{Summarize: sum, Source: bytes.NewReader(data), HoldFrames: 64})
			if err != nil {
				t.Fatal(err)
			}
			n := lazy.Stacks.LazyCount()
			if name != "pt20_flexgen_1.3b_snapshot.pickle" && n == 0 {
				t.Fatalf("no lazy stack out of %d", lazy.Stacks.Len())
			}
			if !snapshot.Equal(held, lazy) {
				t.Fatalf("lazy decoding differs: %s", snapshot.Diff(held, lazy))
			}
			for id := range lazy.Stacks.Len() {
				st, err := lazy.Stacks.Frames(snapshot.StackID(id))
				if err != nil {
					t.Fatal(err)
				}
				if got, want := lazy.Stacks.Summary(snapshot.StackID(id)), sum(lazy.Frames, st); got != want {
					t.Fatalf("stack %d: summary %x, frames give %x", id, got, want)
				}
			}
			t.Logf("%d of %d stacks lazy", n, lazy.Stacks.Len())
		})
	}
}

// TestLazyStackFileChanged reads lazy stacks back from bytes that changed:
// an error, not wrong frames.
func TestLazyStackFileChanged(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: gen.DistinctStacks, Iterations: 500}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	changed := bytes.Repeat([]byte{'N'}, len(data))
	s, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)),
		&snapshot.Options{Summarize: analysis.Summarizer(), Source: bytes.NewReader(changed), HoldFrames: 16})
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for id := range s.Stacks.Len() {
		if !s.Stacks.Lazy(snapshot.StackID(id)) {
			continue
		}
		if _, err := s.Stacks.Frames(snapshot.StackID(id)); err != nil {
			failed++
		}
	}
	if failed == 0 || failed != s.Stacks.LazyCount() {
		t.Errorf("%d of %d lazy stacks failed to read from changed bytes, want all", failed, s.Stacks.LazyCount())
	}
}

// readShared reads a real snapshot from ../shared/snapshots.
func readShared(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("..", "..", "shared", "snapshots", name))
}
