package triage

import (
	"math"
	"net/url"
	"strings"
	"testing"

	"oomscope/estimator"
)

// llama8B returns a request for Llama 3.1 8B (vocab 128256, hidden 4096,
// 32 heads) after checking the catalog still has those dimensions, which the
// expected sizes below are computed from by hand: a catalog change fails
// these tests (update the expected sizes) rather than skipping them.
func llama8B(t *testing.T, batch, seq int, attn string) estimator.Request {
	t.Helper()
	m, ok := estimator.LookupModel("llama-3.1-8b")
	if !ok || m.Vocab != 128256 || m.Hidden != 4096 || m.Heads != 32 {
		t.Fatalf("catalog llama-3.1-8b changed (the expected sizes below assume vocab 128256, hidden 4096, 32 heads): %+v", m)
	}
	r := estimator.DefaultRequest()
	r.Model, r.Batch, r.Seq, r.Attn = "llama-3.1-8b", batch, seq, attn
	return r
}

func one(t *testing.T, text string) *Finding {
	t.Helper()
	res := Triage(text, Options{})
	if len(res.Findings) != 1 {
		t.Fatalf("found %d messages in %q, want 1", len(res.Findings), text)
	}
	return &res.Findings[0]
}

func matchNames(m Matching) []string {
	var names []string
	for _, x := range m.Matches {
		names = append(names, x.Name)
	}
	return names
}

func TestMatchTensors(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		batch int
		seq   int
		attn  string
		want  string // a substring of a matched tensor name; "" for none
		note  string // a substring of the note
	}{
		// 1·2048·128256·4 B = 1050673152 B = 1002.00 MiB, already a multiple of 2 MiB.
		{"fp32 logits", "CUDA out of memory. Tried to allocate 1002.00 MiB. GPU 0 has a total capacity of 23.63 GiB of which 500.00 MiB is free.", 1, 2048, "sdpa", "logits in fp32", ""},
		// 4·2048·128256·4 B = 4008.00 MiB = 3.91 GiB (4202692608 B; printed ±0.005 GiB).
		{"fp32 logits at batch 4, printed in GiB", "CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is free.", 4, 2048, "sdpa", "logits in fp32", ""},
		// 1·32·2048²·2 B = 256.00 MiB: eager attention scores in bf16.
		{"eager scores", "CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total capacity of 23.63 GiB of which 100.00 MiB is free.", 1, 2048, "eager", "attention scores", ""},
		{"segment size names nothing", "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.63 GiB of which 0 bytes is free.", 1, 2048, "sdpa", "", "one allocator segment"},
		{"no tensor of that size", "CUDA out of memory. Tried to allocate 505.00 MiB. GPU 0 has a total capacity of 23.63 GiB of which 0 bytes is free.", 1, 2048, "sdpa", "", "no tensor of llama-3.1-8b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := one(t, tt.text)
			m, err := MatchTensors(f, llama8B(t, tt.batch, tt.seq, tt.attn))
			if err != nil {
				t.Fatal(err)
			}
			names := strings.Join(matchNames(m), "; ")
			if tt.want != "" && !strings.Contains(names, tt.want) {
				t.Errorf("matches %q lack %q (note %q)", names, tt.want, m.Note)
			}
			if tt.want == "" && len(m.Matches) != 0 {
				t.Errorf("matches %q, want none", names)
			}
			if !strings.Contains(m.Note, tt.note) {
				t.Errorf("note %q lacks %q", m.Note, tt.note)
			}
			if len(m.Matches) == 0 && tt.note == "no tensor of llama-3.1-8b" {
				if len(m.Nearest) != 3 {
					t.Fatalf("nearest = %+v, want 3", m.Nearest)
				}
				for i := 1; i < len(m.Nearest); i++ {
					if math.Abs(math.Log(m.Nearest[i].Ratio)) < math.Abs(math.Log(m.Nearest[i-1].Ratio)) {
						t.Errorf("nearest not sorted by distance: %+v", m.Nearest)
					}
				}
				// 505 MiB is closest to 1·2048·128256 bf16 logits = 501 MiB → a 502 MiB request (ratio 1.006; the fp32 softmax, 512 MiB, is 0.986).
				if m.Nearest[0].RequestBytes != 502<<20 || m.Nearest[0].Name != "logits in bf16" {
					t.Errorf("nearest[0] = %s %d, want logits in bf16 at 502 MiB", m.Nearest[0].Name, m.Nearest[0].RequestBytes)
				}
			}
		})
	}
}

func TestAllocatorRequest(t *testing.T) {
	cuda := &Finding{Backend: "cuda", Kind: "cuda-2x"}
	async := &Finding{Backend: "cuda", Kind: "cuda-async"}
	tests := []struct {
		f    *Finding
		n    int64
		want int64
	}{
		{cuda, 1, 2 << 20},
		{cuda, 1 << 20, 2 << 20},
		{cuda, 1<<20 + 1, 20 << 20},
		{cuda, 10<<20 - 512, 20 << 20},
		{cuda, 10 << 20, 10 << 20},
		{cuda, 10<<20 + 1, 12 << 20},
		{async, 10<<20 + 1, 10<<20 + 1},
	}
	for _, tt := range tests {
		if got, _ := allocatorRequest(tt.f, tt.n); got != tt.want {
			t.Errorf("allocatorRequest(%s, %d) = %d, want %d", tt.f.Kind, tt.n, got, tt.want)
		}
	}
}

func TestPrintedTolerance(t *testing.T) {
	tests := []struct {
		text string
		want int64
	}{
		{"CUDA out of memory. Tried to allocate 2.50 GiB.", 5368710},    // ceil(2^30 / 100 / 2)
		{"CUDA out of memory. Tried to allocate 256.00 MiB.", 5243},     // ceil(2^20 / 200)
		{"CUDA out of memory. Tried to allocate 1024 bytes (GPU 0;", 1}, // exact bytes: ceil(1/2)
	}
	for _, tt := range tests {
		if got := printedTolerance(one(t, tt.text)); got != tt.want {
			t.Errorf("printedTolerance(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

func TestMatchTensorsErrors(t *testing.T) {
	f := one(t, "CUDA out of memory. Tried to allocate 256.00 MiB.")
	r := estimator.DefaultRequest()
	r.Model = "no-such-model"
	if _, err := MatchTensors(f, r); err == nil || !strings.Contains(err.Error(), "no-such-model") {
		t.Errorf("unknown model: err = %v", err)
	}
	r = estimator.DefaultRequest()
	r.Batch = 0
	if _, err := MatchTensors(f, r); err == nil {
		t.Error("batch 0 accepted")
	}
	noSize := one(t, "RuntimeError: CUDA error: out of memory")
	m, err := MatchTensors(noSize, estimator.DefaultRequest())
	if err != nil || len(m.Matches) != 0 || m.Note == "" {
		t.Errorf("message without size: %+v, %v", m, err)
	}
}

func TestEstimatorParams(t *testing.T) {
	a100, ok := estimator.LookupGPU("a100-80gb")
	if !ok {
		t.Fatal("catalog lacks a100-80gb, which these cases expect")
	}
	tests := []struct {
		name  string
		text  string
		query string
	}{
		// 79.15 GiB is the A100 80GB's capacity; 79.15 − 17.62 MiB − 77.64 GiB ≈ 1.49 GiB held elsewhere (1.9 % < 10 % default headroom).
		{"catalog GPU", "CUDA out of memory. Tried to allocate 18.00 MiB. GPU 7 has a total capacity of 79.15 GiB of which 17.62 MiB is free. Including non-PyTorch memory, this process has 79.12 GiB memory in use. Of the allocated memory 77.43 GiB is allocated by PyTorch, and 219.12 MiB is reserved by PyTorch but unallocated.", "gpu=" + a100.ID},
		// 23.63 − 0.03 − (20.73 + 0.04) = 2.83 GiB held elsewhere = 11.98 % → 12.
		{"custom capacity and headroom", "CUDA out of memory. Tried to allocate 54.00 MiB. GPU 0 has a total capacity of 23.63 GiB of which 34.56 MiB is free. Process 1 has 558.00 MiB memory in use. Process 2 has 1.03 GiB memory in use. Including non-PyTorch memory, this process has 21.22 GiB memory in use. Of the allocated memory 20.73 GiB is allocated by PyTorch, and 35.86 MiB is reserved by PyTorch but unallocated.", "gpu=23.63GiB&headroom=12"},
		// vLLM: a serving link with the printed total and utilization (headroom is not a serving field).
		{"vLLM start-up", "ValueError: Free memory on device (0.49/79.32 GiB) on startup is less than desired GPU memory utilization (0.6, 47.59 GiB).", "gpu=79.32GiB&mode=serve&engine=vllm&gpu_memory_utilization=0.6"},
		// 10.76 − 0.4 − 9.5 = 0.86 GiB (8 %) stays under the default headroom.
		{"1.x", "RuntimeError: CUDA out of memory. Tried to allocate 1.00 GiB (GPU 0; 10.76 GiB total capacity; 9.00 GiB already allocated; 400.00 MiB free; 9.50 GiB reserved in total by PyTorch)", "gpu=10.76GiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, ok := EstimatorParams(one(t, tt.text))
			if !ok || l.Query != tt.query {
				t.Errorf("query = %q (%v), want %q; reasons %q", l.Query, ok, tt.query, l.Reasons)
			}
			if len(l.Reasons) != len(l.Params) {
				t.Errorf("%d reasons for %d params", len(l.Reasons), len(l.Params))
			}
			r, err := estimator.ParseQuery(mustQuery(t, l.Query))
			if err != nil {
				t.Fatalf("the estimator rejects %q: %v", l.Query, err)
			}
			// The GPU the estimator resolves has the printed capacity, to
			// the printed precision (±0.005 GiB) or the catalog tolerance.
			g, err := estimator.ResolveGPU(r.GPU)
			if err != nil {
				t.Fatalf("the estimator cannot resolve gpu=%q: %v", r.GPU, err)
			}
			f := one(t, tt.text)
			if d := float64(g.CapacityBytes) - f.TotalBytes.Float64(); d > gpuMatchTolerance || d < -gpuMatchTolerance {
				t.Errorf("gpu %s has %d B, the message printed %s", g.ID, g.CapacityBytes, f.TotalBytes)
			}
		})
	}
	if _, ok := EstimatorParams(one(t, "RuntimeError: CUDA error: out of memory")); ok {
		t.Error("a message without capacity gave estimator parameters")
	}
}

func mustQuery(t *testing.T, q string) map[string][]string {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
