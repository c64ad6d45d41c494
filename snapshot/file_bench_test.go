package snapshot_test

import (
	"runtime"
	"testing"
	"time"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/internal/benchfile"
	"oomscope/snapshot/internal/cputime"
)

// BenchmarkFileDecode decodes the snapshot file OOMSCOPE_DECODE_FILE
// (skipped when unset) as a load does (the analysis's Fold, the file as
// the source of lazy stacks) and reports the decode's CPU time
// (cputime.Now: the process's CPU time, Node's in WebAssembly). Run it in
// WebAssembly (GOOS=js GOARCH=wasm go test -c, then Node) to see the
// browser worker's decode.
func BenchmarkFileDecode(b *testing.B) {
	f, size := benchfile.Open(b, "OOMSCOPE_DECODE_FILE")
	var cpu time.Duration
	for b.Loop() {
		if _, err := f.Seek(0, 0); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		t0 := cputime.Now()
		s, err := snapshot.Decode(f, size, &snapshot.Options{Source: f, Fold: analysis.Fold()})
		cpu += cputime.Now() - t0
		if err != nil {
			b.Fatal(err)
		}
		runtime.KeepAlive(s)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1e3, "decode-cpu-ms")
}
