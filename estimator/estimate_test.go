package estimator

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// gb rounds bytes to decimal GB with one decimal, as the issue states them.
func gb(n int64) string { return fmt.Sprintf("%.1f", math.Round(float64(n)/1e8)/10) }

// overheadBytes is what lies beyond the tensors: workspaces, allocator and
// non-torch memory (none in paper mode).
func overheadBytes(res *Result) int64 {
	return res.Buckets.Workspace + res.Buckets.Allocator + res.Buckets.NonTorch
}

func mustEstimate(t testing.TB, r Request) *Result {
	t.Helper()
	res, err := Estimate(r)
	if err != nil {
		t.Fatalf("Estimate(%s): %v", r.QueryString(), err)
	}
	return res
}

// TestPaperReference is the reference case of issue 3: Llama 3.1 8B, seq
// 4096, batch 1, bf16 weights + fp32 master + AdamW, SDPA, paper mode.
func TestPaperReference(t *testing.T) {
	r := DefaultRequest()
	r.Model, r.Seq, r.Batch, r.Dtype, r.Master, r.Optimizer, r.Attn, r.Activations =
		"llama-3.1-8b", 4096, 1, DtypeBF16, true, OptAdamW, AttnSDPA, ActivationsPaper
	res := mustEstimate(t, r)
	if res.Params != 8_030_261_248 {
		t.Errorf("params = %d, want 8,030,261,248", res.Params)
	}
	checks := []struct {
		what string
		got  int64
		want string
	}{
		{"weights", res.Buckets.Weights, "16.1"},
		{"gradients + optimizer", res.Buckets.Gradients + res.Buckets.Optimizer, "112.4"},
		{"activations", res.Buckets.Activations, "18.3"},
		{"logits", res.Buckets.Logits, "2.1"},
		{"total", res.TotalBytes, "148.8"},
	}
	for _, c := range checks {
		if g := gb(c.got); g != c.want {
			t.Errorf("%s = %s GB (%d B), want %s GB", c.what, g, c.got, c.want)
		}
	}
}

// TestPaperRules checks more paper-mode cases against the formulas written
// out here by hand.
func TestPaperRules(t *testing.T) {
	type want struct{ weights, grads, opt, acts, logits int64 }
	tests := []struct {
		name string
		edit func(*Request)
		want want
	}{
		{
			"llama-2-7b fp32 adamw eager b2 s2048",
			func(r *Request) {
				r.Model, r.Dtype, r.Batch, r.Seq, r.Attn = "llama-2-7b", DtypeFP32, 2, 2048, AttnEager
			},
			want{
				weights: 6_738_415_616 * 4, grads: 6_738_415_616 * 4, opt: 6_738_415_616 * 8,
				// s·b·h·(34 + 5·a·s/h) per layer, doubled for fp32, 32 layers.
				acts:   (34*2048*2*4096 + 5*32*2048*2048*2) * 2 * 32,
				logits: 2048 * 2 * 32000 * 4,
			},
		},
		{
			"qwen2.5-7b pure bf16 sgd-momentum full ckpt b4 s1024",
			func(r *Request) {
				r.Model, r.Optimizer, r.Batch, r.Seq, r.Ckpt = "qwen2.5-7b", OptSGDMomentum, 4, 1024, CkptFull
			},
			want{
				weights: 7_615_616_512 * 2, grads: 7_615_616_512 * 2, opt: 7_615_616_512 * 2,
				acts:   2 * 1024 * 4 * 3584 * 28,
				logits: 1024 * 4 * 152064 * 4,
			},
		},
		{
			"llama-3.1-70b bf16 master adamw zero1 on 8",
			func(r *Request) {
				r.Model, r.Master, r.GPUs, r.Shard, r.Seq = "llama-3.1-70b", true, 8, ShardZero1, 4096
			},
			want{
				weights: 70_553_706_496 * 2, grads: 70_553_706_496 * 2, opt: 70_553_706_496 * 12 / 8,
				acts:   34 * 4096 * 8192 * 80,
				logits: 4096 * 128256 * 4,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := DefaultRequest()
			r.Activations = ActivationsPaper
			tt.edit(&r)
			res := mustEstimate(t, r)
			got := want{res.Buckets.Weights, res.Buckets.Gradients, res.Buckets.Optimizer, res.Buckets.Activations, res.Buckets.Logits}
			if got != tt.want {
				t.Errorf("buckets = %+v\nwant      %+v", got, tt.want)
			}
			if overheadBytes(res) != 0 || res.TotalBytes != got.weights+got.grads+got.opt+got.acts+got.logits {
				t.Errorf("paper total %d is not the sum of model states, activations and logits", res.TotalBytes)
			}
		})
	}
}

// TestBytesPerParam checks the precision regimes of docs/estimator.md#5-gradients-optimizer-states-and-precision.
func TestBytesPerParam(t *testing.T) {
	tests := []struct {
		name                 string
		edit                 func(*Request)
		weights, grads, opts int64 // bytes per param
	}{
		{"fp32 adamw", func(r *Request) { r.Dtype = DtypeFP32 }, 4, 4, 8},
		{"autocast adamw", func(r *Request) { r.Autocast = true }, 4, 4, 8},
		{"pure bf16 adamw", func(r *Request) {}, 2, 2, 4},
		{"bf16 master adamw", func(r *Request) { r.Master = true }, 2, 2, 12},
		{"fp16 master sgd", func(r *Request) { r.Dtype, r.Master, r.Optimizer = DtypeFP16, true, OptSGD }, 2, 2, 4},
		{"pure bf16 lion", func(r *Request) { r.Optimizer = OptLion }, 2, 2, 2},
		{"fp32 sgd-momentum", func(r *Request) { r.Dtype, r.Optimizer = DtypeFP32, OptSGDMomentum }, 4, 4, 4},
	}
	for _, tt := range tests {
		r := DefaultRequest()
		tt.edit(&r)
		res := mustEstimate(t, r)
		n := res.Params
		if res.Buckets.Weights != n*tt.weights || res.Buckets.Gradients != n*tt.grads || res.Buckets.Optimizer != n*tt.opts {
			t.Errorf("%s: %d/%d/%d B, want %d/%d/%d B per param", tt.name,
				res.Buckets.Weights/n, res.Buckets.Gradients/n, res.Buckets.Optimizer/n, tt.weights, tt.grads, tt.opts)
		}
	}
	// 8-bit AdamW: two int8 states + an fp32 absmax per 256 values each.
	r := DefaultRequest()
	r.Optimizer = OptAdamW8bit
	res := mustEstimate(t, r)
	if want := res.Params*2 + 8*((res.Params+255)/256); res.Buckets.Optimizer != want {
		t.Errorf("adamw-8bit optimizer = %d, want %d", res.Buckets.Optimizer, want)
	}
}

// TestLoRATrainable checks trainable = r·(d_in + d_out) per adapted linear,
// with the module shapes written out by hand.
func TestLoRATrainable(t *testing.T) {
	h, kv, i := int64(4096), int64(1024), int64(14336) // Llama 3.1 8B
	tests := []struct {
		targets string
		rank    int
		want    int64
	}{
		{"q_proj,v_proj", 16, 32 * 16 * ((h + h) + (h + kv))},
		{"attention", 8, 32 * 8 * ((h + h) + (h + kv) + (h + kv) + (h + h))},
		// The well-known PEFT figure for r=16 all-linear: 41,943,040.
		{"all-linear", 16, 41_943_040},
		{"all-linear", 16, 32 * 16 * ((h + h) + 2*(h+kv) + (h + h) + 3*(h+i))},
		{"down_proj", 64, 32 * 64 * (i + h)},
	}
	for _, method := range []string{MethodLoRA, MethodQLoRA} {
		for _, tt := range tests {
			r := DefaultRequest()
			r.Method, r.LoraTargets, r.LoraRank = method, tt.targets, tt.rank
			res := mustEstimate(t, r)
			if res.TrainableParams != tt.want {
				t.Errorf("%s %s r=%d: trainable = %d, want %d", method, tt.targets, tt.rank, res.TrainableParams, tt.want)
			}
			if res.Buckets.Gradients != tt.want*2 {
				t.Errorf("%s %s: gradients %d, want trainable × 2 B = %d", method, tt.targets, res.Buckets.Gradients, tt.want*2)
			}
		}
	}
	// Mixtral: all-linear adapts every expert's w1, w3, w2, not the router.
	r := DefaultRequest()
	r.Model, r.Method, r.LoraRank = "mixtral-8x7b", MethodLoRA, 8
	res := mustEstimate(t, r)
	attn := (h + h) + 2*(h+kv) + (h + h)
	if want := 32 * 8 * (attn + 8*3*(h+i)); res.TrainableParams != want {
		t.Errorf("mixtral all-linear trainable = %d, want %d", res.TrainableParams, want)
	}
}

func TestQLoRASmallerThanLoRA(t *testing.T) {
	for _, id := range []string{"llama-3.1-8b", "qwen3-30b-a3b", "gemma-3-4b", "deepseek-v3"} {
		r := DefaultRequest()
		r.Model, r.Method = id, MethodLoRA
		lora := mustEstimate(t, r)
		r.Method = MethodQLoRA
		qlora := mustEstimate(t, r)
		r.Method = MethodFull
		full := mustEstimate(t, r)
		if !(qlora.TotalBytes < lora.TotalBytes && lora.TotalBytes < full.TotalBytes) {
			t.Errorf("%s: want qlora < lora < full, got %d, %d, %d", id, qlora.TotalBytes, lora.TotalBytes, full.TotalBytes)
		}
		// NF4 with double quantization is ≈ 4.127 bits per quantized weight.
		var linear int64
		for _, k := range qlora.Model.LayerKinds() {
			for _, l := range k.Linears {
				linear += int64(k.Count) * int64(l.Count) * int64(l.In) * int64(l.Out)
			}
		}
		bits := float64(qlora.Term(BucketWeights, "nf4 base")*8) / float64(linear)
		if bits < 4.0 || bits > 4.2 {
			t.Errorf("%s: NF4 base is %.3f bits per layer param, want ≈ 4.13", id, bits)
		}
	}
}

func TestKVCache(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Request)
		want int64
	}{
		{"llama-3.1-8b bf16 b2 s8192", func(r *Request) { r.Model, r.Batch, r.Seq = "llama-3.1-8b", 2, 8192 }, 2 * 32 * 8 * 128 * 2 * 2 * 8192},
		{"llama-3.1-8b fp8 kv", func(r *Request) { r.Model, r.Seq, r.KVDtype = "llama-3.1-8b", 8192, KVFP8 }, 2 * 32 * 8 * 128 * 1 * 8192},
		// Gemma 2 9B: 21 global layers at full length, 21 sliding capped at 4096.
		{"gemma-2-9b s8192", func(r *Request) { r.Model, r.Seq = "gemma-2-9b", 8192 }, 2*21*8*256*2*8192 + 2*21*8*256*2*4096},
		// gpt-oss-20b: 12 full layers, 12 with a 128-token window.
		{"gpt-oss-20b s32768", func(r *Request) { r.Model, r.Seq = "gpt-oss-20b", 32768 }, 2*12*8*64*2*32768 + 2*12*8*64*2*128},
		// DeepSeek-V3 MLA latent: (512 + 64) × 61 layers × 2 B per token.
		{"deepseek-v3 s4096", func(r *Request) { r.Model, r.Seq = "deepseek-v3", 4096 }, 576 * 61 * 2 * 4096},
		{"fp32 dtype", func(r *Request) { r.Model, r.Seq, r.Dtype = "gpt2", 1024, DtypeFP32 }, 2 * 12 * 12 * 64 * 4 * 1024},
	}
	for _, tt := range tests {
		r := DefaultRequest()
		r.Mode = ModeInfer
		tt.edit(&r)
		res := mustEstimate(t, r)
		if res.Buckets.KVCache != tt.want {
			t.Errorf("%s: kv_cache = %d, want %d", tt.name, res.Buckets.KVCache, tt.want)
		}
		if res.Buckets.Gradients != 0 || res.Buckets.Optimizer != 0 {
			t.Errorf("%s: inference has gradients or optimizer bytes", tt.name)
		}
	}
}

func TestInferenceQuant(t *testing.T) {
	r := DefaultRequest()
	r.Mode = ModeInfer
	w := map[string]int64{}
	for _, q := range []string{QuantNone, QuantFP8, QuantInt8, QuantInt4} {
		r.Quant = q
		w[q] = mustEstimate(t, r).Buckets.Weights
	}
	if !(w[QuantInt4] < w[QuantFP8] && w[QuantFP8] < w[QuantNone] && w[QuantInt4] < w[QuantInt8] && w[QuantInt8] < w[QuantNone]) {
		t.Errorf("want int4 < fp8, int8 < none; got %v", w)
	}
	last := w[QuantInt4]
	// int4 of Llama 3.1 8B: 6,979,321,856 linear weights × 0.5 B plus group
	// scales, with the 1,050,677,248 other params in bf16.
	if last < 6_979_321_856/2+1_050_677_248*2 || last > 6_979_321_856*6/10+1_050_677_248*2 {
		t.Errorf("int4 weights %d out of the expected band", last)
	}
}

// TestEveryBucketHasAFormula: every bucket shown carries its rule.
func TestEveryBucketHasAFormula(t *testing.T) {
	for _, mode := range []string{ModeTrain, ModeInfer} {
		for _, act := range []string{ActivationsTally, ActivationsPaper} {
			r := DefaultRequest()
			r.Mode, r.Activations, r.GPUs, r.Shard = mode, act, 4, ShardZero3
			res := mustEstimate(t, r)
			if len(res.Details) != len(BucketNames) {
				t.Fatalf("%d buckets, want %d", len(res.Details), len(BucketNames))
			}
			var total int64
			for i, b := range res.Details {
				if b.Name != BucketNames[i] || b.Formula == "" {
					t.Errorf("%s/%s: bucket %d = %q with formula %q", mode, act, i, b.Name, b.Formula)
				}
				if b.Bytes != res.Buckets.Get(b.Name) {
					t.Errorf("%s: detail bytes %d != bucket bytes %d", b.Name, b.Bytes, res.Buckets.Get(b.Name))
				}
				var ts int64
				for _, term := range b.Terms {
					ts += term.Bytes
					if term.Formula == "" {
						t.Errorf("%s/%s: term without formula", b.Name, term.Name)
					}
				}
				if ts != b.Bytes {
					t.Errorf("%s: terms sum to %d, bucket says %d", b.Name, ts, b.Bytes)
				}
				total += b.Bytes
			}
			if total != res.TotalBytes {
				t.Errorf("buckets sum to %d, total says %d", total, res.TotalBytes)
			}
		}
	}
}

func TestEstimateErrors(t *testing.T) {
	tests := []struct {
		edit func(*Request)
		want string
	}{
		{func(r *Request) { r.Model = "llama-9" }, `unknown model "llama-9"`},
		{func(r *Request) { r.GPU = "tpu" }, `unknown GPU "tpu"`},
		{func(r *Request) { r.Method, r.LoraTargets = MethodLoRA, "q_proj,wq" }, `no module named "wq"`},
		{func(r *Request) { r.Model, r.Config = ModelCustom, `{"model_type":"llama"}` }, "missing required keys: hidden_size"},
		{func(r *Request) { r.Batch = 0 }, "batch: 0 is out of range"},
	}
	for _, tt := range tests {
		r := DefaultRequest()
		tt.edit(&r)
		_, err := Estimate(r)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %v, want it to contain %q", err, tt.want)
		}
	}
}
