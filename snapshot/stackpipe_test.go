package snapshot_test

import (
	"bytes"
	"slices"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

// TestStackWorker decodes files with lazy stacks (both families, a
// training run, a file of stacks met again and again, real files) with
// the stacks added on a second goroutine and in the decoder's own, in
// batches of the default size and of 3 stacks: every stack (ID, depth,
// laziness, summary, frames) and every stack ID of the entries, segments,
// blocks and block histories must be the same, and the snapshot must
// equal the one decoded with every stack held.
func TestStackWorker(t *testing.T) {
	inputs := mixedInputs(t, "pt26_cs336_ctx128_fullstep.pickle", "pt26_cs336_ctx128_forward.pickle")
	var buf bytes.Buffer
	if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: gen.DistinctStacks, Iterations: 8000}); err != nil {
		t.Fatal(err)
	}
	inputs["distinct/8000"] = buf.Bytes()
	for _, batch := range []int{0, 3} {
		for name, data := range inputs {
			t.Run(name, func(t *testing.T) {
				if batch > 0 {
					defer snapshot.SetStackBatch(batch)()
				}
				opt := &snapshot.Options{Summarize: analysis.Summarizer(), Source: bytes.NewReader(data), HoldFrames: 64}
				seq, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), snapshot.WithStackWorker(opt, false))
				if err != nil {
					t.Fatal(err)
				}
				opt.Summarize = analysis.Summarizer()
				par, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), snapshot.WithStackWorker(opt, true))
				if err != nil {
					t.Fatal(err)
				}
				if par.Stacks.LazyCount() == 0 {
					t.Fatalf("no lazy stack out of %d", par.Stacks.Len())
				}
				sameStacks(t, seq, par)
				held, err := snapshot.DecodeBytes(data, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !snapshot.Equal(held, par) {
					t.Fatalf("decoding with the stack goroutine differs from holding every stack: %s", snapshot.Diff(held, par))
				}
				t.Logf("%d stacks, %d lazy", par.Stacks.Len(), par.Stacks.LazyCount())
			})
		}
	}
}

// sameStacks fails unless a and b have the same stack table, ID for ID,
// and refer to the same IDs everywhere.
func sameStacks(t *testing.T, a, b *snapshot.Snapshot) {
	t.Helper()
	if a.Stacks.Len() != b.Stacks.Len() || a.Stacks.LazyCount() != b.Stacks.LazyCount() {
		t.Fatalf("%d stacks (%d lazy) in one, %d (%d lazy) in the other", a.Stacks.Len(), a.Stacks.LazyCount(), b.Stacks.Len(), b.Stacks.LazyCount())
	}
	for i := range a.Stacks.Len() {
		id := snapshot.StackID(i)
		fa, erra := a.Stacks.Frames(id)
		fb, errb := b.Stacks.Frames(id)
		if erra != nil || errb != nil {
			t.Fatalf("stack %d: %v, %v", id, erra, errb)
		}
		if a.Stacks.Lazy(id) != b.Stacks.Lazy(id) || a.Stacks.Depth(id) != b.Stacks.Depth(id) ||
			a.Stacks.Summary(id) != b.Stacks.Summary(id) || !slices.Equal(fa, fb) {
			t.Fatalf("stack %d differs: lazy %v/%v, depth %d/%d, summary %x/%x, frames %v/%v", id, a.Stacks.Lazy(id), b.Stacks.Lazy(id),
				a.Stacks.Depth(id), b.Stacks.Depth(id), a.Stacks.Summary(id), b.Stacks.Summary(id), fa, fb)
		}
	}
	if len(a.DeviceTraces) != len(b.DeviceTraces) || len(a.Segments) != len(b.Segments) {
		t.Fatalf("%d/%d traces, %d/%d segments", len(a.DeviceTraces), len(b.DeviceTraces), len(a.Segments), len(b.Segments))
	}
	for d, tr := range a.DeviceTraces {
		for i := range tr.Len() {
			if x, y := tr.Frames(i), b.DeviceTraces[d].Frames(i); x != y {
				t.Fatalf("device %d entry %d: stack %d, %d", d, i, x, y)
			}
		}
	}
	for i := range a.Segments {
		sa, sb := &a.Segments[i], &b.Segments[i]
		if sa.Frames != sb.Frames || len(sa.Blocks) != len(sb.Blocks) {
			t.Fatalf("segment %d differs", i)
		}
		for j := range sa.Blocks {
			if sa.Blocks[j].Frames != sb.Blocks[j].Frames || len(sa.Blocks[j].History) != len(sb.Blocks[j].History) {
				t.Fatalf("segment %d block %d differs", i, j)
			}
			for k := range sa.Blocks[j].History {
				if sa.Blocks[j].History[k].Frames != sb.Blocks[j].History[k].Frames {
					t.Fatalf("segment %d block %d history %d differs", i, j, k)
				}
			}
		}
	}
}

// TestStackWorkerPanic makes the summarizer panic (as a bug would) while
// the stack goroutine adds lazy stacks: Decode must raise the panic on the
// caller's goroutine, where load's recover turns it into an internal
// error, rather than end the process.
func TestStackWorkerPanic(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: gen.DistinctStacks, Iterations: 3000}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	calls := 0
	sum := analysis.Summarizer()
	opt := &snapshot.Options{Source: bytes.NewReader(data), HoldFrames: 64, Summarize: func(f []snapshot.Frame, st snapshot.Stack) snapshot.StackSummary {
		if calls++; calls == 500 {
			panic("summarizer bug")
		}
		return sum(f, st)
	}}
	defer func() {
		if r := recover(); r != "summarizer bug" {
			t.Fatalf("recovered %v, want the summarizer's panic", r)
		}
	}()
	snapshot.Decode(bytes.NewReader(data), int64(len(data)), snapshot.WithStackWorker(opt, true))
	t.Fatal("Decode returned")
}
