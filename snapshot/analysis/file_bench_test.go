package analysis

import (
	"testing"
	"time"

	"oomscope/snapshot"
	"oomscope/snapshot/internal/benchfile"
	"oomscope/snapshot/internal/cputime"
)

// BenchmarkFileStages times, on the snapshot file OOMSCOPE_ANALYSIS_FILE
// (skipped when unset), decoded once outside the timer, the stages of a
// load after the decode (load.Load's): AnalyzeSummary up to its summary,
// then ReportFirst up to its first result and to its end, in CPU time
// (cputime.Now: the process's CPU time, Node's in WebAssembly). Run it in
// WebAssembly (GOOS=js GOARCH=wasm go test -c, then Node) to see the
// browser worker's analysis.
func BenchmarkFileStages(b *testing.B) {
	f, size := benchfile.Open(b, "OOMSCOPE_ANALYSIS_FILE")
	s, err := snapshot.Decode(f, size, &snapshot.Options{Source: f, Fold: Fold()})
	if err != nil {
		b.Fatal(err)
	}
	var analyze, first, all time.Duration
	for b.Loop() {
		t0 := cputime.Now()
		var t1, t2 time.Duration
		an := AnalyzeSummary(s, Options{TimelinePoints: DefaultTimelinePoints}, func([]Headline, [][]Point) { t1 = cputime.Now() })
		an.ReportFirst(func(*Report) { t2 = cputime.Now() })
		t3 := cputime.Now()
		analyze += t1 - t0
		first += t2 - t0
		all += t3 - t0
	}
	n := float64(b.N)
	b.ReportMetric(float64(analyze.Microseconds())/n/1e3, "summary-cpu-ms")
	b.ReportMetric(float64(first.Microseconds())/n/1e3, "first-cpu-ms")
	b.ReportMetric(float64(all.Microseconds())/n/1e3, "all-cpu-ms")
}
