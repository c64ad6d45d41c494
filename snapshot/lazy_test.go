package snapshot_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
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
	inputs := lazyInputs(t, "pt26_cs336_ctx128_fullstep.pickle", "pt20_flexgen_1.3b_snapshot.pickle")
	for _, proto := range []int{2, 5} {
		opt := gen.Scenario("training")
		opt.Protocol = proto
		data, _, err := gen.Bytes(opt)
		if err != nil {
			t.Fatal(err)
		}
		inputs["training/p"+string(rune('0'+proto))] = data
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

// mixedInputs returns lazyInputs plus a generated training run and a
// file of stacks that repeat (repeatedStacks).
func mixedInputs(t *testing.T, real ...string) map[string][]byte {
	t.Helper()
	inputs := lazyInputs(t, real...)
	data, _, err := gen.Bytes(gen.Scenario("training"))
	if err != nil {
		t.Fatal(err)
	}
	inputs["training"] = data
	inputs["repeats"] = repeatedStacks(t)
	return inputs
}

// lazyInputs returns the files the lazy-stack tests decode: both benchmark
// families, and the real snapshots named that ../shared holds.
func lazyInputs(t *testing.T, real ...string) map[string][]byte {
	t.Helper()
	inputs := map[string][]byte{}
	for _, fam := range []gen.Family{gen.RealStacks, gen.DistinctStacks} {
		var buf bytes.Buffer
		if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: fam, Iterations: 2000}); err != nil {
			t.Fatal(err)
		}
		inputs[string(fam)] = buf.Bytes()
	}
	for _, rf := range real {
		if data, err := os.ReadFile(filepath.Join("..", "..", "shared", "snapshots", rf)); err == nil {
			inputs[rf] = data
		}
	}
	return inputs
}

// TestLazyStacksMergedAfterReading decodes files with lazy stacks that
// repeat (the real family, a training run, a file of stacks that each
// come back many times) with a table of recent lazy stacks of 2 slots, so
// that most repeats become new stacks merged once the file is read: the
// snapshot must equal the one decoded with every stack held, and every
// entry must have the stack ID it has when repeats are merged as met.
// Without the stack goroutine, the merge runs with its default fragments
// of hashes, with fragments of 2 bits (most stacks of a bucket then share
// a fragment with an earlier one, and are looked up by ID) and on two
// goroutines (each scatters and searches half); with it, the
// merge looks only at stacks whose hash's slot was hit twice, with the
// slots for the input's size and with 64 slots (every stack a candidate).
func TestLazyStacksMergedAfterReading(t *testing.T) {
	t.Run("default groups", func(t *testing.T) { testLazyStacksMergedAfterReading(t, false) })
	t.Run("fragments of 2 bits", func(t *testing.T) {
		defer snapshot.SetDedupeFragBits(2)()
		testLazyStacksMergedAfterReading(t, false)
	})
	t.Run("on two goroutines", func(t *testing.T) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
		defer snapshot.SetDedupeTwoMin(0)()
		testLazyStacksMergedAfterReading(t, false)
	})
	t.Run("on two goroutines, fragments of 2 bits", func(t *testing.T) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
		defer snapshot.SetDedupeTwoMin(0)()
		defer snapshot.SetDedupeFragBits(2)()
		testLazyStacksMergedAfterReading(t, false)
	})
	t.Run("stack goroutine", func(t *testing.T) { testLazyStacksMergedAfterReading(t, true) })
	t.Run("stack goroutine, 64 slots", func(t *testing.T) {
		defer snapshot.SetSeenBits(6)()
		testLazyStacksMergedAfterReading(t, true)
	})
	for _, parts := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("stack goroutine, merged in %d parts", parts), func(t *testing.T) {
			defer snapshot.SetSeenParts(parts)()
			testLazyStacksMergedAfterReading(t, true)
		})
		t.Run(fmt.Sprintf("stack goroutine, 64 slots, merged in %d parts", parts), func(t *testing.T) {
			defer snapshot.SetSeenBits(6)()
			defer snapshot.SetSeenParts(parts)()
			testLazyStacksMergedAfterReading(t, true)
		})
	}
}

func testLazyStacksMergedAfterReading(t *testing.T, worker bool) {
	inputs := lazyInputs(t, "pt26_cs336_ctx128_fullstep.pickle", "pt26_cs336_ctx128_forward.pickle")
	opt := gen.Scenario("training")
	data, _, err := gen.Bytes(opt)
	if err != nil {
		t.Fatal(err)
	}
	inputs["training"] = data
	inputs["repeats"] = repeatedStacks(t)
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			held, err := snapshot.DecodeBytes(data, nil)
			if err != nil {
				t.Fatal(err)
			}
			lazyOpt := snapshot.WithStackWorker(&snapshot.Options{Summarize: analysis.Summarizer(), Source: bytes.NewReader(data), HoldFrames: 64}, worker)
			asMet, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), lazyOpt)
			if err != nil {
				t.Fatal(err)
			}
			after, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), snapshot.WithRecentLazyStacks(lazyOpt, 1))
			if err != nil {
				t.Fatal(err)
			}
			if after.Stacks.LazyCount() == 0 {
				t.Fatalf("no lazy stack out of %d", after.Stacks.Len())
			}
			if !snapshot.Equal(held, after) {
				t.Fatalf("merging after reading differs from holding every stack: %s", snapshot.Diff(held, after))
			}
			if after.Stacks.Len() != asMet.Stacks.Len() || after.Stacks.Len() != held.Stacks.Len() {
				t.Fatalf("%d stacks merged after reading, %d merged as met, %d held", after.Stacks.Len(), asMet.Stacks.Len(), held.Stacks.Len())
			}
			for d, tr := range asMet.DeviceTraces {
				for i := range tr.Len() {
					if got, want := after.DeviceTraces[d].Frames(i), tr.Frames(i); got != want {
						t.Fatalf("device %d entry %d: stack %d merged after reading, %d as met", d, i, got, want)
					}
					if got, want := after.DeviceTraces[d].Frames(i), held.DeviceTraces[d].Frames(i); got != want {
						t.Fatalf("device %d entry %d: stack %d merged after reading, %d held", d, i, got, want)
					}
				}
			}
			for id := range after.Stacks.Len() {
				st, err := after.Stacks.Frames(snapshot.StackID(id))
				if err != nil {
					t.Fatal(err)
				}
				if got, want := after.Stacks.Summary(snapshot.StackID(id)), lazyOpt.Summarize(after.Frames, st); got != want {
					t.Fatalf("stack %d: summary %x, its frames give %x", id, got, want)
				}
			}
			t.Logf("%d stacks, %d lazy", after.Stacks.Len(), after.Stacks.LazyCount())
		})
	}
}

// repeatedStacks pickles, as torch does (a fresh list per entry), 40
// stacks of 30 frames, each used by 50 entries in turn, then a segment
// whose blocks carry some of them.
func repeatedStacks(t *testing.T) []byte {
	s := &snapshot.Snapshot{}
	for i := range 200 {
		s.Frames = append(s.Frames, snapshot.Frame{Name: fmt.Sprintf("f%d", i), Filename: "x.py", Line: int64(i)})
	}
	var ids []snapshot.StackID
	for k := range 40 {
		st := make(snapshot.Stack, 30)
		for i := range st {
			st[i] = snapshot.FrameID((k*7 + i*3) % 200)
		}
		ids = append(ids, s.Stacks.Add(st))
	}
	var tr snapshot.Trace
	for i := range 2000 {
		tr.Append(snapshot.TraceEntry{Action: snapshot.ActionAlloc, Addr: uint64(512 * (i + 1)), Size: 512, Frames: ids[(i*13)%len(ids)]})
	}
	s.DeviceTraces = []snapshot.Trace{tr}
	seg := snapshot.Segment{Address: 1 << 20, TotalSize: 4 << 20, Frames: ids[3]}
	for i := range 4 {
		seg.Blocks = append(seg.Blocks, snapshot.Block{Size: 1 << 20, RequestedSize: 1 << 20, State: snapshot.StateActiveAllocated,
			Frames: ids[(i*11)%len(ids)]})
	}
	s.Segments = []snapshot.Segment{seg}
	var buf bytes.Buffer
	if err := snapshot.Encode(&buf, s, snapshot.EncodeOptions{Protocol: 4, FreshStackLists: true}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestLazyStackBounds decodes, with a source and HoldFrames 1, stacks at
// and past the frame count a lazy stack's packed place holds (4095): the
// longer one stays held, the others are lazy, and the snapshot equals the
// one decoded with every stack held.
func TestLazyStackBounds(t *testing.T) {
	s := &snapshot.Snapshot{}
	for i := range 80000 {
		s.Frames = append(s.Frames, snapshot.Frame{Name: fmt.Sprintf("f%d", i), Filename: "x.py", Line: int64(i)})
	}
	// Frame IDs past 65535 take 5 bytes per reference (LONG_BINGET).
	mk := func(n, from int) snapshot.Stack {
		st := make(snapshot.Stack, n)
		for i := range st {
			st[i] = snapshot.FrameID(from + i)
		}
		return st
	}
	var tr snapshot.Trace
	// The first stack brings every frame the others use: they are lists of
	// memo references, which can be lazy.
	lens := []int{10100, 3, 4095, 4096, 3000, 10}
	for i, n := range lens {
		id := s.Stacks.Add(mk(n, 60000+i))
		tr.Append(snapshot.TraceEntry{Action: snapshot.ActionAlloc, Addr: uint64(512 * (i + 1)), Size: 512, Frames: id})
	}
	s.DeviceTraces = []snapshot.Trace{tr}
	var buf bytes.Buffer
	if err := snapshot.Encode(&buf, s, snapshot.EncodeOptions{Protocol: 4, FreshStackLists: true}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	held, err := snapshot.DecodeBytes(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	lazy, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)),
		&snapshot.Options{Summarize: analysis.Summarizer(), Source: bytes.NewReader(data), HoldFrames: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !snapshot.Equal(held, lazy) {
		t.Fatalf("lazy decoding differs: %s", snapshot.Diff(held, lazy))
	}
	tl := lazy.DeviceTraces[0]
	for i, n := range lens {
		id := tl.Frames(i)
		// The first stack is held (nothing is held yet, and it is long);
		// 4096 frames do not fit a lazy place.
		wantLazy := i > 0 && n < 4096
		if lazy.Stacks.Lazy(id) != wantLazy || lazy.Stacks.Depth(id) != n {
			t.Errorf("stack of %d frames: lazy %v depth %d, want lazy %v depth %d", n, lazy.Stacks.Lazy(id), lazy.Stacks.Depth(id), wantLazy, n)
		}
	}
}

// TestLazySooner decodes both benchmark families with the default
// HoldFrames (1 Mi frame IDs: none of these small files reaches it) and
// the first check for repeats at 4096 frame IDs: the distinct family, whose
// stacks hardly repeat, must go lazy there (at most 4096/8 stacks held),
// the real family, whose 300 stacks (13 k frame IDs) repeat, must hold
// them all; both must
// equal the snapshot decoded with every stack held, and the lazy stacks'
// summaries those of their frames read back.
func TestLazySooner(t *testing.T) {
	defer snapshot.SetLazySoon(4096)()
	inputs := lazyInputs(t)
	for _, fam := range []string{"real", "distinct"} {
		data := inputs[fam]
		t.Run(fam, func(t *testing.T) {
			held, err := snapshot.DecodeBytes(data, nil)
			if err != nil {
				t.Fatal(err)
			}
			sum := analysis.Summarizer()
			for _, opt := range []*snapshot.Options{
				{Summarize: sum, Source: bytes.NewReader(data)},
				{Fold: analysis.Fold(), Source: bytes.NewReader(data)},
			} {
				s, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), snapshot.WithStackWorker(opt, false))
				if err != nil {
					t.Fatal(err)
				}
				n, all := s.Stacks.LazyCount(), s.Stacks.Len()
				switch {
				case fam == "real" && n != 0:
					t.Fatalf("%d of %d stacks lazy, want none: they repeat", n, all)
				case fam == "distinct" && (n == 0 || all-n > 4096/8):
					t.Fatalf("%d of %d stacks held, want at most 512 (4096 frame IDs of 8-30 frames a stack)", all-n, all)
				}
				if !snapshot.Equal(held, s) {
					t.Fatalf("decoding differs: %s", snapshot.Diff(held, s))
				}
				for id := range all {
					st, err := s.Stacks.Frames(snapshot.StackID(id))
					if err != nil {
						t.Fatal(err)
					}
					if got, want := s.Stacks.Summary(snapshot.StackID(id)), sum(s.Frames, st); got != want {
						t.Fatalf("stack %d: summary %x, frames give %x", id, got, want)
					}
				}
				t.Logf("%d of %d stacks lazy", n, all)
			}
		})
	}
}

// TestLazyAfterHoldFrames decodes the distinct-stacks family with the
// analysis's Fold (lazy stacks made in entryRun's way, lazyFrames) and a
// HoldFrames of a few thousand frame IDs: the trace's stacks met first are
// held until they hold HoldFrames frame IDs (the last one held passes it),
// the next new one is lazy, and the snapshot equals the one decoded with
// every stack held; with a HoldFrames above the file's frames, none is lazy.
func TestLazyAfterHoldFrames(t *testing.T) {
	data := lazyInputs(t)["distinct"]
	held, err := snapshot.DecodeBytes(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, hold := range []int{3000, 1 << 30} {
		opt := &snapshot.Options{Fold: analysis.Fold(), Source: bytes.NewReader(data), HoldFrames: hold}
		s, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), snapshot.WithStackWorker(opt, false))
		if err != nil {
			t.Fatal(err)
		}
		if !snapshot.Equal(held, s) {
			t.Fatalf("HoldFrames %d: decoding differs: %s", hold, snapshot.Diff(held, s))
		}
		// The held stacks before the first lazy one (the segments' blocks,
		// read after the trace, add held stacks after the lazy ones).
		frames, last, lazy := 0, 0, 0
		for id := 1; id < s.Stacks.Len(); id++ {
			if s.Stacks.Lazy(snapshot.StackID(id)) {
				lazy++
			} else if lazy == 0 {
				last = s.Stacks.Depth(snapshot.StackID(id))
				frames += last
			}
		}
		switch {
		case hold == 1<<30 && lazy != 0:
			t.Fatalf("HoldFrames %d: %d lazy stacks, want none", hold, lazy)
		case hold < 1<<30 && (lazy == 0 || frames < hold || frames-last >= hold):
			t.Fatalf("HoldFrames %d: %d lazy stacks after %d held frame IDs (the last held stack %d)", hold, lazy, frames, last)
		}
		t.Logf("HoldFrames %d: %d held frame IDs, %d lazy stacks of %d", hold, frames, lazy, s.Stacks.Len())
	}
}
