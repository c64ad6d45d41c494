package load

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"oomscope/snapshot/gen"
)

// benchFile is one input of BenchmarkLoad.
type benchFile struct{ name, path string }

// benchFiles writes the benchmark files: both families (repeated and
// distinct stacks) at each size in MiB of OOMSCOPE_BENCH_MB (default
// 10,55,200; add 1024 for the 1 GiB files, which need that much disk), then
// the real snapshots of ../shared/snapshots.
func benchFiles(b *testing.B) []benchFile {
	dir := os.Getenv("OOMSCOPE_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	sizes := "10,55,200"
	if v := os.Getenv("OOMSCOPE_BENCH_MB"); v != "" {
		sizes = v
	}
	var fs []benchFile
	for _, f := range strings.Split(sizes, ",") {
		mb, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || mb <= 0 {
			b.Fatalf("OOMSCOPE_BENCH_MB=%q: want sizes in MiB such as 10,55,200,1024", sizes)
		}
		for _, fam := range []gen.Family{gen.RealStacks, gen.DistinctStacks} {
			name := fmt.Sprintf("%s-%dMiB", fam, mb)
			path := filepath.Join(dir, name+".pickle")
			if _, err := os.Stat(path); err != nil {
				fh, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				_, err = gen.WriteFamily(fh, gen.FamilyOptions{Family: fam, TargetBytes: mb << 20})
				if cerr := fh.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			fs = append(fs, benchFile{name, path})
		}
	}
	reals, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "snapshots", "*.pickle"))
	for _, p := range reals {
		fs = append(fs, benchFile{strings.TrimSuffix(filepath.Base(p), ".pickle"), p})
	}
	return fs
}

// BenchmarkLoad loads each benchmark file as the CLI does (OpenFile: decode,
// analyse, report; stacks of files with many distinct stacks stay in the
// file) with the CLI's collector setting, and prints per file: its size,
// entries, distinct and lazy stacks, the time, the heap's peak growth
// (sampled) and what stays live once loaded.
func BenchmarkLoad(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(GCPercent))
	type row struct {
		name                 string
		bytes                int64
		st                   Stats
		ms, peakMiB, liveMiB float64
		mappedMiB            float64
		decodeMS, analyseMS  float64
	}
	var rows []row
	files := benchFiles(b)
	if v := os.Getenv("OOMSCOPE_BENCH_WARM"); v != "" {
		// The worker's warm-up first (default, or the steps of the real
		// and the distinct stacks' input), as a browser worker runs it
		// before the first file.
		var sr, sd int
		if _, err := fmt.Sscanf(v, "%d,%d", &sr, &sd); err == nil {
			defer func(w struct{ Real, Distinct int }) { WarmSteps = w }(WarmSteps)
			WarmSteps.Real, WarmSteps.Distinct = sr, sd
		} else if v != "1" {
			b.Fatalf("OOMSCOPE_BENCH_WARM=%q: want 1 or the steps of each family, such as 12000,20000", v)
		}
		start := time.Now()
		if err := WarmUp(nil, nil); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("warm-up %v: %.0f ms\n", v, float64(time.Since(start).Microseconds())/1000)
	}
	for _, bf := range files {
		b.Run(bf.name, func(b *testing.B) {
			var r row
			for b.Loop() {
				var f *File
				var closer interface{ Close() error }
				var err error
				runtime.GC()
				peak, mapped := peakMemory(func() { f, closer, err = OpenFile(bf.path, nil, Options{}) })
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				r = row{name: bf.name, bytes: f.Bytes, st: f.Stats(), peakMiB: float64(peak) / (1 << 20),
					liveMiB: float64(ms.HeapAlloc) / (1 << 20), mappedMiB: float64(mapped) / (1 << 20), decodeMS: float64(f.Decode.Milliseconds()),
					analyseMS: float64(f.Analyse.Milliseconds())}
				b.SetBytes(f.Bytes)
				runtime.KeepAlive(f)
				closer.Close()
			}
			r.ms = float64(b.Elapsed().Milliseconds()) / float64(b.N)
			b.ReportMetric(float64(r.st.Entries), "entries")
			b.ReportMetric(float64(r.st.Stacks), "stacks")
			b.ReportMetric(r.peakMiB, "MiB-peak")
			b.ReportMetric(r.liveMiB, "MiB-live")
			b.ReportMetric(r.mappedMiB, "MiB-mapped")
			rows = append(rows, r)
		})
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n%-34s %8s %9s %9s %9s %9s %9s %9s %10s %10s %10s\n", "file", "MB", "entries", "stacks", "lazy",
		"decode", "analyse", "total", "heap peak", "heap live", "mapped")
	for _, r := range rows {
		fmt.Fprintf(&out, "%-34s %8.1f %9d %9d %9d %6.0f ms %6.0f ms %6.0f ms %6.0f MiB %6.0f MiB %6.0f MiB\n", r.name, float64(r.bytes)/1e6,
			r.st.Entries, r.st.Stacks, r.st.LazyStacks, r.decodeMS, r.analyseMS, r.ms, r.peakMiB, r.liveMiB, r.mappedMiB)
	}
	fmt.Fprintf(&out, "(heap peak: growth of the Go heap while loading, sampled every 200 µs; heap live: after a collection, the file loaded;\n"+
		" mapped: peak of the memory the runtime held from the system and had not released, free spans included, as RSS counts it)\n")
	fmt.Print(out.String())
}
