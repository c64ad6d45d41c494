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
		if _, err := Advise(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFeasible is the feasible region alone: the largest micro-batch
// at each sequence length and the longest sequence at each micro-batch.
func BenchmarkFeasible(b *testing.B) {
	r := DefaultRequest()
	r.Method, r.Ckpt = MethodQLoRA, CkptFull
	p, err := newPlan(r)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if len(p.feasible()) == 0 || len(p.feasibleByBatch()) == 0 {
			b.Fatal("empty region")
		}
	}
}

// BenchmarkAnalyzeServe is everything /estimate shows in serve mode.
func BenchmarkAnalyzeServe(b *testing.B) {
	r := DefaultRequest()
	r.Mode, r.Model, r.TP, r.MaxModelLen = ModeServe, "gpt-oss-120b", 2, 32768
	for b.Loop() {
		if _, err := Advise(r); err != nil {
			b.Fatal(err)
		}
	}
}
