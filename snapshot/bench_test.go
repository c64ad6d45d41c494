package snapshot_test

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/nlpodyssey/gopickle/pickle"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

var (
	benchMu    sync.Mutex
	benchFiles = map[int][]byte{}
)

// benchFile generates (once per size) a training-loop snapshot of about
// mb megabytes, never written to disk.
func benchFile(b *testing.B, mb int) []byte {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if data, ok := benchFiles[mb]; ok {
		return data
	}
	data, _, err := gen.Bytes(gen.Options{Seed: 1, Layers: 8, TargetBytes: int64(mb) << 20})
	if err != nil {
		b.Fatal(err)
	}
	benchFiles[mb] = data
	return data
}

// reportAlloc reports bytes allocated per operation relative to the file
// size.
func reportAlloc(b *testing.B, size int, before runtime.MemStats) {
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	alloc := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N)
	b.ReportMetric(alloc/float64(size), "alloc/filesize")
	b.ReportMetric(float64(size)/1e6, "MB")
	b.SetBytes(int64(size))
}

func BenchmarkDecodeFast(b *testing.B) {
	for _, mb := range []int{10, 50, 200} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			data := benchFile(b, mb)
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			var s *snapshot.Snapshot
			for range b.N {
				var err error
				if s, err = snapshot.DecodeBytes(data, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportAlloc(b, len(data), before)
			// What the decoded snapshot keeps in memory.
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(len(data)), "retained/filesize")
			runtime.KeepAlive(s)
		})
	}
}

// BenchmarkDecodeGopickle is gopickle's generic unpickler on the same
// bytes: the baseline the fast path must beat by 10x.
func BenchmarkDecodeGopickle(b *testing.B) {
	for _, mb := range []int{10, 50} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			data := benchFile(b, mb)
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for range b.N {
				u := pickle.NewUnpickler(bytes.NewReader(data))
				if _, err := u.Load(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportAlloc(b, len(data), before)
		})
	}
}

// BenchmarkSpeedup decodes the 50 MB file alternately with the fast
// decoder and gopickle's generic unpickler and reports how many times
// faster the fast one is (alternating keeps machine load from favouring
// either).
func BenchmarkSpeedup(b *testing.B) {
	data := benchFile(b, 50)
	var fast, slow time.Duration
	for range b.N {
		t0 := time.Now()
		if _, err := snapshot.DecodeBytes(data, nil); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		u := pickle.NewUnpickler(bytes.NewReader(data))
		if _, err := u.Load(); err != nil {
			b.Fatal(err)
		}
		fast += t1.Sub(t0)
		slow += time.Since(t1)
	}
	b.ReportMetric(float64(slow)/float64(fast), "speedup")
	b.ReportMetric(float64(fast.Milliseconds())/float64(b.N), "fast-ms")
	b.ReportMetric(float64(slow.Milliseconds())/float64(b.N), "gopickle-ms")
}

// BenchmarkDecodeStream decodes from an io.Reader with a 4 MiB window
// (what a browser worker reading a Blob in chunks would do).
func BenchmarkDecodeStream(b *testing.B) {
	data := benchFile(b, 50)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for range b.N {
		if _, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportAlloc(b, len(data), before)
}

// BenchmarkDecodeReal decodes the largest real snapshot (torch 2.6, 3.2 MB)
// with both decoders.
func BenchmarkDecodeReal(b *testing.B) {
	data, err := os.ReadFile("../../shared/snapshots/pt26_cs336_ctx128_fullstep.pickle")
	if err != nil {
		b.Skip("real snapshot not present")
	}
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for range b.N {
			if _, err := snapshot.DecodeBytes(data, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gopickle", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for range b.N {
			u := pickle.NewUnpickler(bytes.NewReader(data))
			if _, err := u.Load(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLazyStackRead reads lazy stacks back from the file, as the page
// does for each stack it shows (and the diagnosis for its flame graph's
// 120 heaviest): a distinct-family file decoded with HoldFrames 1.
func BenchmarkLazyStackRead(b *testing.B) {
	var buf bytes.Buffer
	if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: gen.DistinctStacks, Iterations: 20000}); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	s, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)),
		&snapshot.Options{Fold: analysis.Fold(), Source: bytes.NewReader(data), HoldFrames: 1})
	if err != nil {
		b.Fatal(err)
	}
	var lazy []snapshot.StackID
	for id := range s.Stacks.Len() {
		if s.Stacks.Lazy(snapshot.StackID(id)) {
			lazy = append(lazy, snapshot.StackID(id))
		}
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Stacks.Frames(lazy[i%len(lazy)]); err != nil {
			b.Fatal(err)
		}
	}
}
