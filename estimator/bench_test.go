package estimator

import "testing"

func BenchmarkEstimate(b *testing.B) {
	r := DefaultRequest()
	r.Seq = 4096
	for b.Loop() {
		if _, err := Estimate(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMaxBatchSeq is the two searches the page runs on every change.
func BenchmarkMaxBatchSeq(b *testing.B) {
	r := DefaultRequest()
	r.Model, r.Method, r.Ckpt = "llama-3.1-70b", MethodQLoRA, CkptFull
	p, err := newPlan(r)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if p.maxBatch() == 0 || p.maxSeq() == 0 {
			b.Fatal("nothing fits")
		}
	}
}

// BenchmarkAnalyze is everything /estimate shows: estimate, smallest GPU,
// GPUs needed, max batch and seq, and the fix ladder.
func BenchmarkAnalyze(b *testing.B) {
	r := DefaultRequest()
	for b.Loop() {
		if _, err := Analyze(r); err != nil {
			b.Fatal(err)
		}
	}
}
