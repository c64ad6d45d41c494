package triage

import (
	"encoding/json"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"oomscope/untrusted/hostile"
)

// peakHeap runs fn and returns the most heap memory that live objects held
// above what they held before, sampled every 200 µs (so a peak shorter than
// that may be missed).
func peakHeap(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	peak := base
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return max(peak, read()) - base
}

// TestHostilePastes triages every adversarial class of hostile.Pastes at
// 10 MB: the invariants of any input hold, findings stop at the cap, the
// JSON stays small, and the heap never holds more than 3× the input + 100
// MB (the bound). Times are in BenchmarkHostilePastes.
func TestHostilePastes(t *testing.T) {
	size := 10 << 20
	if testing.Short() {
		size = 1 << 20
	}
	for _, p := range hostile.Pastes(size) {
		t.Run(p.Class, func(t *testing.T) {
			var res Result
			peak := peakHeap(func() { res = Triage(p.Text, Options{When: WhenLongInputs}) })
			checkInvariants(t, p.Text, res)
			if limit := 3*uint64(len(p.Text)) + 100<<20; peak > limit {
				t.Errorf("heap grew by %d MB on a %d MB paste; the bound is %d MB", peak>>20, len(p.Text)>>20, limit>>20)
			}
			js, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if len(js) > 8<<20 {
				t.Errorf("JSON of %d MB for %d findings", len(js)>>20, len(res.Findings))
			}
			t.Logf("%d bytes: %d findings, heap +%d MB, JSON %d kB", len(p.Text), len(res.Findings), peak>>20, len(js)>>10)
		})
	}
}

// BenchmarkHostilePastes times triage of each adversarial class at 10 MB
// and reports the heap's peak growth (peak-MB).
func BenchmarkHostilePastes(b *testing.B) {
	for _, p := range hostile.Pastes(10 << 20) {
		b.Run(p.Class, func(b *testing.B) {
			b.SetBytes(int64(len(p.Text)))
			var peak uint64
			for b.Loop() {
				peak = max(peak, peakHeap(func() { Triage(p.Text, Options{}) }))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
		})
	}
}

// TestNearMissesNameEveryKeyword checks that hostile's near-miss paste
// holds a keyword of every format, so that every head search runs over all
// of it in TestHostilePastes and BenchmarkHostilePastes.
func TestNearMissesNameEveryKeyword(t *testing.T) {
	var text string
	for _, p := range hostile.Pastes(4096) {
		if p.Class == "every keyword, near misses" {
			text = asciiLower(p.Text)
		}
	}
	if text == "" {
		t.Fatal("no near-miss class in hostile.Pastes")
	}
	for _, f := range formats() {
		for _, kw := range f.keywords {
			if len(keywordHits(text, kw)) == 0 {
				t.Errorf("format %s: keyword %q missing", f.name, kw)
			}
		}
	}
}
