package snapshot_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

// splitInputs returns the files the split tests decode: both families
// (several seeds, a few MiB) and the real snapshots, with whether the
// split must be taken somewhere on them (distinct: every new stack is
// lazy early; the others with HoldFrames 1).
func splitInputs(t *testing.T, mib int64, seeds ...uint64) map[string][]byte {
	t.Helper()
	inputs := map[string][]byte{}
	for _, fam := range []gen.Family{gen.DistinctStacks, gen.RealStacks} {
		for _, seed := range seeds {
			var buf bytes.Buffer
			if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: fam, TargetBytes: mib << 20, Seed: seed}); err != nil {
				t.Fatal(err)
			}
			inputs[fmt.Sprintf("%s-%d", fam, seed)] = buf.Bytes()
		}
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "snapshots", "*.pickle"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(f)] = data
	}
	return inputs
}

// sameDecode fails unless b is a equals a exactly: Equal, the same frames
// in the same order, the same stack per entry and block, and the same
// stack table (summaries, depths, laziness, frames).
func sameDecode(t *testing.T, a, b *snapshot.Snapshot) {
	t.Helper()
	if !snapshot.Equal(a, b) {
		t.Fatalf("split decode differs: %s", snapshot.Diff(a, b))
	}
	if !slices.Equal(a.Frames, b.Frames) {
		t.Fatalf("frames differ: %d vs %d", len(a.Frames), len(b.Frames))
	}
	sameStackIDs(t, a, b)
	for d, tr := range a.DeviceTraces {
		for i := range tr.Len() {
			if tr.Entry(i) != b.DeviceTraces[d].Entry(i) {
				t.Fatalf("device %d entry %d: %+v, split %+v", d, i, tr.Entry(i), b.DeviceTraces[d].Entry(i))
			}
		}
	}
	for id := range a.Stacks.Len() {
		fa, ea := a.Stacks.Frames(snapshot.StackID(id))
		fb, eb := b.Stacks.Frames(snapshot.StackID(id))
		if ea != nil || eb != nil || !slices.Equal(fa, fb) {
			t.Fatalf("stack %d: %v %v / %v %v", id, fa, ea, fb, eb)
		}
	}
}

func splitOptions(data []byte, hold int) *snapshot.Options {
	return snapshot.WithoutSplit(&snapshot.Options{Source: bytes.NewReader(data), Fold: analysis.Fold(), HoldFrames: hold})
}

// TestSplitAnywhere splits every input at every 3 % of it and at edge
// cases: the snapshot must equal the serial decode, and the split must
// have been taken at most places on the families.
func TestSplitAnywhere(t *testing.T) {
	defer snapshot.SetPartPrefix(64 << 10)()
	for name, data := range splitInputs(t, 3, 1, 2) {
		for _, hold := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s/hold%d", name, hold), func(t *testing.T) {
				size := int64(len(data))
				serial, err := snapshot.Decode(bytes.NewReader(data), size, splitOptions(data, hold))
				if err != nil {
					t.Fatal(err)
				}
				ats := []int64{0, 1, 100, 70 << 10, size - 2000, size - 300, size - 1}
				for i := int64(0); i < 34; i++ {
					ats = append(ats, size*i/33)
				}
				taken := 0
				for _, at := range ats {
					at = max(0, min(at, size-1))
					opt, res := snapshot.WithSplitAt(splitOptions(data, hold), data, at, nil)
					s, err := snapshot.Decode(bytes.NewReader(data), size, opt)
					if err != nil {
						t.Fatalf("at %d: %v", at, err)
					}
					snapshot.SplitOutcome(opt, res)
					sameDecode(t, serial, s)
					if res.Taken {
						taken++
					}
					if testing.Verbose() && !res.Taken {
						t.Logf("at %d: not taken (part: %v; %s)", at, res.PartErr, res.Why)
					}
				}
				t.Logf("split taken at %d of %d places", taken, len(ats))
				if (hold == 1 || strings.HasPrefix(name, "distinct")) && len(data) > 1<<20 && taken < len(ats)/2 {
					t.Errorf("split taken at only %d of %d places", taken, len(ats))
				}
			})
		}
	}
}
