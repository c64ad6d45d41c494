package snapshot_test

import (
	"bytes"
	"fmt"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
)

// TestFoldedStacks decodes files of both benchmark families, a training
// run, stacks that repeat and real files with lazy stacks twice: with
// Options.Fold (each new frame list summarized, and in WebAssembly hashed,
// as it is read) and with the same rules as a plain Summarizer (a pass of
// its own per new stack). Both must give every entry and block the same
// stack ID, every stack the same summary, depth and laziness, and a
// snapshot equal to the one decoded with every stack held; with the
// default table of recent lazy stacks and with one of 2 slots (repeats
// merged after reading, by hash: a hash taken while reading that differed
// from the stack's would keep them apart), without and with the stack
// goroutine (which does not fold), and with progress steps that cut
// lists short.
func TestFoldedStacks(t *testing.T) {
	inputs := mixedInputs(t, "pt26_cs336_ctx128_fullstep.pickle", "pt20_flexgen_oom_snapshot.pickle")
	for name, data := range inputs {
		for _, recent := range []int{0, 1} {
			for _, worker := range []bool{false, true} {
				for _, hold := range []int{1, 64} {
					every := int64(0)
					if hold == 1 {
						// Progress steps every 97 bytes cut many lists
						// short (the fast paths stop at them).
						every = 97
					}
					t.Run(fmt.Sprintf("%s/recent%d/worker%v/hold%d", name, recent, worker, hold), func(t *testing.T) {
						held, err := snapshot.DecodeBytes(data, nil)
						if err != nil {
							t.Fatal(err)
						}
						base := snapshot.WithStackWorker(&snapshot.Options{Source: bytes.NewReader(data), HoldFrames: hold,
							ProgressEvery: every, Progress: func(int64, int64) bool { return true }}, worker)
						if recent > 0 {
							base = snapshot.WithRecentLazyStacks(base, recent)
						}
						plain, folded := *base, *base
						plain.Summarize = analysis.Fold().Summarizer()
						folded.Fold = analysis.Fold()
						a, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), &plain)
						if err != nil {
							t.Fatal(err)
						}
						b, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), &folded)
						if err != nil {
							t.Fatal(err)
						}
						if !snapshot.Equal(held, b) {
							t.Fatalf("folded decoding differs from holding every stack: %s", snapshot.Diff(held, b))
						}
						sameStackIDs(t, a, b)
						if a.Stacks.LazyCount() == 0 && name != "pt20_flexgen_oom_snapshot.pickle" {
							t.Fatalf("no lazy stack out of %d", a.Stacks.Len())
						}
					})
				}
			}
		}
	}
}

// sameStackIDs checks that a and b, decoded from the same bytes, give the
// same stack IDs everywhere and the same stacks under them.
func sameStackIDs(t *testing.T, a, b *snapshot.Snapshot) {
	t.Helper()
	if a.Stacks.Len() != b.Stacks.Len() || a.Stacks.LazyCount() != b.Stacks.LazyCount() {
		t.Fatalf("%d stacks (%d lazy), folded %d (%d lazy)", a.Stacks.Len(), a.Stacks.LazyCount(), b.Stacks.Len(), b.Stacks.LazyCount())
	}
	for d, tr := range a.DeviceTraces {
		for i := range tr.Len() {
			if got, want := b.DeviceTraces[d].Frames(i), tr.Frames(i); got != want {
				t.Fatalf("device %d entry %d: stack %d folded, %d not", d, i, got, want)
			}
		}
	}
	for i, seg := range a.Segments {
		for j, blk := range seg.Blocks {
			if got := b.Segments[i].Blocks[j].Frames; got != blk.Frames {
				t.Fatalf("segment %d block %d: stack %d folded, %d not", i, j, got, blk.Frames)
			}
		}
	}
	for id := range a.Stacks.Len() {
		s := snapshot.StackID(id)
		if a.Stacks.Summary(s) != b.Stacks.Summary(s) || a.Stacks.Depth(s) != b.Stacks.Depth(s) || a.Stacks.Lazy(s) != b.Stacks.Lazy(s) {
			t.Fatalf("stack %d: summary %x depth %d lazy %v, folded %x %d %v", id, a.Stacks.Summary(s), a.Stacks.Depth(s), a.Stacks.Lazy(s),
				b.Stacks.Summary(s), b.Stacks.Depth(s), b.Stacks.Lazy(s))
		}
	}
}
