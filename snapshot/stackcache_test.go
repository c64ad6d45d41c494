package snapshot_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

// TestStackCacheSameSnapshot decodes files of both benchmark families,
// generated training runs, a file whose stacks extend one another past an
// APPENDS batch, and the real snapshots, with the stack cache and without
// it (the path every frame list took before): the snapshots must be equal,
// with the same stack ID at every entry, held and lazy. Where stacks
// repeat, the cache must have been used.
func TestStackCacheSameSnapshot(t *testing.T) {
	type input struct {
		data     []byte
		wantHits bool
	}
	inputs := map[string]input{}
	for _, fam := range []gen.Family{gen.RealStacks, gen.DistinctStacks} {
		var buf bytes.Buffer
		if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: fam, Iterations: 3000}); err != nil {
			t.Fatal(err)
		}
		inputs[string(fam)] = input{buf.Bytes(), fam == gen.RealStacks}
	}
	for _, proto := range []int{2, 4, 5} {
		opt := gen.Scenario("training")
		opt.Protocol = proto
		data, _, err := gen.Bytes(opt)
		if err != nil {
			t.Fatal(err)
		}
		inputs[fmt.Sprintf("training/p%d", proto)] = input{data, false}
	}
	inputs["extended stacks"] = input{extendedStacks(t), true}
	reals, _ := filepath.Glob(filepath.Join("..", "..", "shared", "snapshots", "*.pickle"))
	for _, p := range reals {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(p)] = input{data, false}
	}
	if len(reals) == 0 {
		t.Log("no real snapshots in ../../shared/snapshots")
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			for _, hold := range []int{0, 64} {
				opt := &snapshot.Options{}
				if hold > 0 {
					opt = &snapshot.Options{Summarize: analysis.Summarizer(), Source: bytes.NewReader(in.data), HoldFrames: hold}
				}
				hits := 0
				with, err := snapshot.Decode(bytes.NewReader(in.data), int64(len(in.data)), snapshot.CountStackCacheHits(opt, &hits))
				if err != nil {
					t.Fatal(err)
				}
				without, err := snapshot.Decode(bytes.NewReader(in.data), int64(len(in.data)), snapshot.WithoutStackCache(opt))
				if err != nil {
					t.Fatal(err)
				}
				if !snapshot.Equal(with, without) {
					t.Fatalf("hold %d: the stack cache changes the snapshot: %s", hold, snapshot.Diff(without, with))
				}
				if with.Stacks.Len() != without.Stacks.Len() || with.Stacks.LazyCount() != without.Stacks.LazyCount() {
					t.Fatalf("hold %d: %d stacks (%d lazy) with the cache, %d (%d) without", hold, with.Stacks.Len(),
						with.Stacks.LazyCount(), without.Stacks.Len(), without.Stacks.LazyCount())
				}
				for d, tr := range without.DeviceTraces {
					for i := range tr.Len() {
						if got, want := with.DeviceTraces[d].Frames(i), tr.Frames(i); got != want {
							t.Fatalf("hold %d: device %d entry %d: stack %d with the cache, %d without", hold, d, i, got, want)
						}
					}
				}
				if in.wantHits && hold == 0 && hits == 0 {
					t.Errorf("the stack cache found no frame list")
				}
				t.Logf("hold %d: %d stacks, %d cache hits", hold, with.Stacks.Len(), hits)
			}
		})
	}
}

// extendedStacks pickles, as torch does (a fresh list per entry), a trace
// whose stacks share prefixes across APPENDS batches (1000 frames): A of
// 1000 frames, B = A and 500 more, C = the first 999 frames of A, each
// several times and interleaved.
func extendedStacks(t *testing.T) []byte {
	s := &snapshot.Snapshot{}
	for i := range 1500 {
		s.Frames = append(s.Frames, snapshot.Frame{Name: fmt.Sprintf("f%d", i), Filename: "x.py", Line: int64(i)})
	}
	all := make(snapshot.Stack, 1500)
	for i := range all {
		all[i] = snapshot.FrameID(i)
	}
	a, b, c := s.Stacks.Add(all[:1000]), s.Stacks.Add(all), s.Stacks.Add(all[:999])
	var tr snapshot.Trace
	for i, id := range []snapshot.StackID{a, b, a, c, b, a, c, b} {
		tr.Append(snapshot.TraceEntry{Action: snapshot.ActionAlloc, Addr: uint64(512 * (i + 1)), Size: 512, Frames: id})
	}
	s.DeviceTraces = []snapshot.Trace{tr}
	var buf bytes.Buffer
	if err := snapshot.Encode(&buf, s, snapshot.EncodeOptions{Protocol: 4, FreshStackLists: true}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestIndexAppends compares the eight-bytes-at-a-time search for the
// APPENDS byte with bytes.IndexByte on every length up to 40 and every
// position of one or two 'e' bytes among bytes that differ from it by one
// bit (the carries of the word trick).
func TestIndexAppends(t *testing.T) {
	near := []byte{'e' ^ 1, 'e' ^ 0x80, 'e' - 1, 'e' + 1, 0, 0xff}
	for n := range 41 {
		for _, fill := range near {
			b := bytes.Repeat([]byte{fill}, n)
			check := func() {
				if got, want := snapshot.IndexAppends(b), bytes.IndexByte(b, 'e'); got != want {
					t.Fatalf("%x: %d, want %d", b, got, want)
				}
			}
			check()
			for i := range n {
				b[i] = 'e'
				check()
				for j := i + 1; j < n; j++ {
					b[j] = 'e'
					check()
					b[j] = fill
				}
				b[i] = fill
			}
		}
	}
}
