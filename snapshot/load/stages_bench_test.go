package load

import (
	"bytes"
	"os"
	"runtime/debug"
	"testing"
	"time"

	"oomscope/snapshot/analysis"
	"oomscope/snapshot/internal/cputime"
)

// BenchmarkWorkerStages loads the snapshot file OOMSCOPE_LOAD_FILE
// (skipped when unset) as the browser's worker does, after a warm-up like
// the worker's (WarmUp, then a small file loaded with its summary and
// first result encoded): Load from a reader, the worker's timeline points
// and collector setting, the summary and the first result encoded as the
// worker posts them. It reports the CPU time (cputime.Now: the process's
// CPU time, Node's in WebAssembly) of the decode and, from the end of the
// decode (the "analyse" stage), to the summary, to the first result
// encoded and to the end. Run it in WebAssembly (GOOS=js GOARCH=wasm go
// test -c, then Node) to see the worker's analysis; its first iteration
// is the one a user's first file gets.
func BenchmarkWorkerStages(b *testing.B) {
	path := os.Getenv("OOMSCOPE_LOAD_FILE")
	if path == "" {
		b.Skip("OOMSCOPE_LOAD_FILE not set")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(GCPercent))
	if err := WarmUp(nil, nil); err != nil {
		b.Fatal(err)
	}
	encode := func(r Response) {
		if _, _, err := EncodeResponse(r); err != nil {
			b.Fatal(err)
		}
	}
	var ta, ts, tf time.Duration // the ends of the decode, of the summary, of the first result
	opt := Options{
		Analysis: analysis.Options{TimelinePoints: TimelinePoints},
		Progress: func(stage Stage, done, total int64) {
			if stage == StageAnalyse {
				ta = cputime.Now()
			}
		},
		Summary: func(hs []analysis.Headline, tls [][]analysis.Point) {
			encode(Response{Type: ResponseSummary, Summary: hs, Timelines: tls})
			ts = cputime.Now()
		},
		First: func(r *Result) {
			encode(Response{Type: ResponseResult, Result: r})
			tf = cputime.Now()
		},
	}
	warm := warmFile(false, WarmSteps.Real, func() bool { return false }, nil)
	if _, err := Load(Input{Name: "warm", R: bytes.NewReader(warm), Size: int64(len(warm)), Source: bytes.NewReader(warm)}, opt); err != nil {
		b.Fatal(err)
	}
	var decode, summary, first, all time.Duration
	for b.Loop() {
		fh, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		st, err := fh.Stat()
		if err != nil {
			b.Fatal(err)
		}
		t0 := cputime.Now()
		if _, err := Load(Input{Name: path, R: fh, Size: st.Size(), Source: fh}, opt); err != nil {
			b.Fatal(err)
		}
		t1 := cputime.Now()
		fh.Close()
		decode += ta - t0
		summary += ts - ta
		first += tf - ta
		all += t1 - ta
	}
	n := float64(b.N)
	b.ReportMetric(float64(decode.Microseconds())/n/1e3, "decode-cpu-ms")
	b.ReportMetric(float64(summary.Microseconds())/n/1e3, "summary-cpu-ms")
	b.ReportMetric(float64(first.Microseconds())/n/1e3, "first-cpu-ms")
	b.ReportMetric(float64(all.Microseconds())/n/1e3, "all-cpu-ms")
}
