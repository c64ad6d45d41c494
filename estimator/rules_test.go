package estimator

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Rules checked independently of the code (issue 3 review): every expected
// value below is written from the rule in docs/estimator.md (§2–§7) with the
// model's config.json dimensions, not read back from the program.

// Llama 3.1 8B dimensions (docs/estimator.md#1-models-and-gpus).
const (
	l8P   = int64(8_030_261_248)
	l8H   = int64(4096)
	l8L   = int64(32)
	l8A   = int64(32)
	l8KV  = int64(8)
	l8D   = int64(128)
	l8I   = int64(14336)
	l8V   = int64(128256)
	l8Emb = l8V * l8H
	// l8Linear is the decoder layers' linear weights: q and o h×h, k and v
	// h×(kv·d), gate, up and down h×i, in each of 32 layers.
	l8Linear = l8L * (2*l8H*l8H + 2*l8H*l8KV*l8D + 3*l8H*l8I)
)

// estimateQuery runs a request given in the URL vocabulary.
func estimateQuery(t *testing.T, q string) *Result {
	t.Helper()
	return mustEstimate(t, queryRequest(t, q))
}

// TestRuleOptimizerStates: docs/estimator.md#5-gradients-optimizer-states-and-precision (torch.optim states follow the
// parameter dtype; fp32 master copies add 4 B; 8-bit Adam keeps two int8
// states plus an fp32 absmax per 256 values; Adafactor factors matrices).
func TestRuleOptimizerStates(t *testing.T) {
	P := l8P
	blocks := (P + 255) / 256
	tests := []struct {
		query string
		want  int64
	}{
		{"optimizer=adamw&dtype=fp16", P * 2 * 2},
		{"optimizer=adamw&dtype=fp16&autocast=true", P * 2 * 4},
		{"optimizer=adamw-8bit&master=true", P*4 + P*2 + 2*4*blocks},
		{"optimizer=adamw-8bit&dtype=fp32", P*2 + 2*4*blocks},
		{"optimizer=sgd", 0},
		{"optimizer=sgd&master=true", P * 4},
		{"optimizer=sgd-momentum&master=true", P*4 + P*4},
		{"optimizer=lion&autocast=true", P * 4},
		// Adafactor, pure bf16: per layer the norms (2h) and rows + columns of
		// every matrix; the embedding and the untied lm_head factored
		// (V + h each); the final norm (h) in full.
		{"optimizer=adafactor", 2 * (l8L*(2*l8H+
			(l8H+l8H)+(l8H+l8KV*l8D)+(l8H+l8KV*l8D)+(l8H+l8H)+
			(l8H+l8I)+(l8H+l8I)+(l8I+l8H)) +
			2*(l8V+l8H) + l8H)},
		// LoRA r=16 on q_proj: A is r×h, B is h×r, factored r + h each.
		{"optimizer=adafactor&method=lora&lora_targets=q_proj", 2 * l8L * (16 + l8H + l8H + 16)},
	}
	for _, tt := range tests {
		if got := estimateQuery(t, tt.query).Buckets.Optimizer; got != tt.want {
			t.Errorf("%s: optimizer %d, want %d", tt.query, got, tt.want)
		}
	}
}

// TestRuleTiedEmbeddings: a tied lm_head is counted once (docs/estimator.md#1-models-and-gpus), and
// Adafactor factors it once.
func TestRuleTiedEmbeddings(t *testing.T) {
	// Llama 3.2 1B: h 2048, 16 layers, 32 heads, 8 kv heads × 64, i 8192.
	h, L, kvd, i, V := int64(2048), int64(16), int64(8*64), int64(8192), int64(128256)
	layer := 2*h*h + 2*h*kvd + 3*h*i + 2*h
	P := V*h + L*layer + h
	res := estimateQuery(t, "model=llama-3.2-1b&optimizer=adafactor")
	if res.Params != P || res.Buckets.Weights != 2*P {
		t.Errorf("llama-3.2-1b: params %d weights %d, want %d and %d", res.Params, res.Buckets.Weights, P, 2*P)
	}
	factored := L*(2*h+(h+h)+2*(h+kvd)+(h+h)+2*(h+i)+(i+h)) + (V + h) + h
	if res.Buckets.Optimizer != 2*factored {
		t.Errorf("llama-3.2-1b adafactor %d, want %d", res.Buckets.Optimizer, 2*factored)
	}
}

// TestRulePaperMode: Korthikanti et al. per layer, 2-byte units, scaled for
// fp32; logits s·b·V·4 in fp32, ·2 otherwise; no overhead.
func TestRulePaperMode(t *testing.T) {
	s, b := int64(2048), int64(2)
	tests := []struct {
		query        string
		acts, logits int64
	}{
		{"attn=eager", l8L * (34*s*b*l8H + 5*l8A*s*s*b), s * b * l8V * 4},
		{"attn=eager&ckpt=selective", l8L * 34 * s * b * l8H, s * b * l8V * 4},
		{"attn=eager&ckpt=full", l8L * 2 * s * b * l8H, s * b * l8V * 4},
		{"attn=eager&dtype=fp32", 2 * l8L * (34*s*b*l8H + 5*l8A*s*s*b), s * b * l8V * 4},
		// autocast computes in bf16: no doubling.
		{"attn=eager&autocast=true", l8L * (34*s*b*l8H + 5*l8A*s*s*b), s * b * l8V * 4},
		{"logits=bf16", l8L * 34 * s * b * l8H, s * b * l8V * 2},
		{"logits=chunked&method=lora", l8L * 34 * s * b * l8H, s * b * l8V * 2},
	}
	for _, tt := range tests {
		q := "activations=paper&batch=2&seq=2048&" + tt.query
		res := estimateQuery(t, q)
		if res.Buckets.Activations != tt.acts || res.Buckets.Logits != tt.logits || overheadBytes(res) != 0 {
			t.Errorf("%s: activations %d logits %d overhead %d, want %d, %d, 0", q, res.Buckets.Activations, res.Buckets.Logits, overheadBytes(res), tt.acts, tt.logits)
		}
		if !strings.Contains(res.Formulas[BucketActivations], "s 2,048, b 2, h 4,096") {
			t.Errorf("%s: the formula does not show s, b and h: %q", q, res.Formulas[BucketActivations])
		}
	}
	// Inference in paper mode is one layer of the same formula.
	for _, tt := range []struct {
		query string
		want  int64
	}{
		{"mode=infer&activations=paper&seq=4096", 34 * 4096 * l8H},
		{"mode=infer&activations=paper&seq=4096&attn=eager", 34*4096*l8H + 5*l8A*4096*4096},
	} {
		if got := estimateQuery(t, tt.query).Buckets.Activations; got != tt.want {
			t.Errorf("%s: activations %d, want %d", tt.query, got, tt.want)
		}
	}
}

// TestRuleTallyLogits: the loss keeps the logits in the activation dtype
// plus fp32 log-softmax and two fp32 gradients (docs/estimator.md#4-activations-and-logits); bf16 loss keeps
// four tensors in the activation dtype; chunked CE keeps the logits and one
// of 8 chunks of fp32 work.
func TestRuleTallyLogits(t *testing.T) {
	bsV := int64(2) * 2048 * l8V
	tests := []struct {
		query string
		want  int64
	}{
		{"logits=fp32", bsV * (2 + 4 + 4 + 4)},
		{"logits=fp32&autocast=true", bsV * (2 + 4 + 4 + 4)},
		{"logits=fp32&dtype=fp32", bsV * (4 + 4 + 4 + 4)},
		{"logits=bf16", bsV * 4 * 2},
		{"logits=bf16&dtype=fp32", bsV * 4 * 4},
		{"logits=chunked", bsV*2 + bsV*12/8},
		{"logits=chunked&dtype=fp32", bsV*4 + bsV*12/8},
	}
	for _, tt := range tests {
		q := "batch=2&seq=2048&" + tt.query
		if got := estimateQuery(t, q).Buckets.Logits; got != tt.want {
			t.Errorf("%s: logits %d, want %d", q, got, tt.want)
		}
	}
}

// TestRuleTallyAttention: SDPA keeps q, k, v at their head counts and an
// fp32 log-sum-exp; eager attention repeats K/V to every head and keeps the
// b·a·s² softmax in fp32 plus its 16-bit copy; selective recomputation drops
// the s² tensors; full checkpointing keeps each layer's input and recomputes
// one layer (docs/estimator.md#4-activations-and-logits).
func TestRuleTallyAttention(t *testing.T) {
	b, s := int64(2), int64(1024)
	T, e := b*s, int64(2)
	// One Llama 3.1 8B layer per token under SDPA, full fine-tuning: two
	// RMSNorms (fp32 input + 16-bit output), q/k/v/out, lse, o_proj input,
	// SwiGLU gate, act, up and product.
	layer := 2*l8H*(4+e) + e*(l8A*l8D+2*l8KV*l8D+l8A*l8D) + 4*l8A + e*l8A*l8D + 4*e*l8I
	final := l8H * (4 + e)
	scores := b * l8A * s * s * (4 + e)
	repeatKV := e * 2 * (l8A - l8KV) * l8D
	tests := []struct {
		query string
		want  int64
	}{
		{"", l8L*layer*T + final*T},
		{"ckpt=selective", l8L*layer*T + final*T},
		{"attn=eager", l8L*((layer+repeatKV-4*l8A)*T+scores) + final*T},
		{"attn=eager&ckpt=selective", l8L*(layer+repeatKV-4*l8A)*T + final*T},
		{"ckpt=full", l8L*T*l8H*e + layer*T + final*T},
		{"attn=eager&ckpt=full", l8L*T*l8H*e + (layer+repeatKV-4*l8A)*T + scores + final*T},
	}
	for _, tt := range tests {
		q := "batch=2&seq=1024&" + tt.query
		if got := estimateQuery(t, q).Buckets.Activations; got != tt.want {
			t.Errorf("%q: activations %d, want %d (Δ %d)", tt.query, got, tt.want, got-tt.want)
		}
	}
}

// TestRuleMoEActivations: a MoE layer keeps the router's fp32 probabilities
// and, per routed expert (top-k), the SwiGLU tensors and the expert output
// that is scaled by its routing weight, also under LoRA on attention only.
func TestRuleMoEActivations(t *testing.T) {
	// Qwen3-30B-A3B: h 2048, 48 layers, 32 heads, 4 kv heads × 128, 128
	// experts of width 768, top-8; LoRA r=16 on q, k, v, o.
	h, L, qD, kD, E, k, ei, e := int64(2048), int64(48), int64(32*128), int64(4*128), int64(128), int64(8), int64(768), int64(2)
	layer := h*(4+e) + // attention norm: fp32 input, output read by adapted q/k/v
		(qD+kD)*4 + // q/k norms: fp32 inputs (their weights are frozen)
		e*(qD+2*kD+qD) + 4*32 + // q, k, v, attention output, lse
		e*qD + // o_proj input (o_proj carries an adapter)
		h*4 + // MLP norm: fp32 input only (no trained linear reads it)
		4*E + 4*k + // router probabilities
		k*3*e*ei + // per routed expert: gate, activation, up (down is frozen)
		k*h*e + // expert outputs × routing weights
		4*e*16 // LoRA r-wide intermediates of q, k, v, o
	T := int64(2048)
	want := L*layer*T + h*4*T
	res := estimateQuery(t, "model=qwen3-30b-a3b&method=lora&lora_targets=attention")
	if res.Buckets.Activations != want {
		t.Errorf("qwen3-30b-a3b LoRA attention: activations %d, want %d (Δ %d)", res.Buckets.Activations, want, res.Buckets.Activations-want)
	}
	// All experts are resident: weights count every expert.
	if got, want := res.Params, int64(30_532_122_624); got != want {
		t.Errorf("qwen3-30b-a3b params %d, want %d", got, want)
	}
}

// TestRuleQLoRAWeights: NF4 with double quantization (4 bits + an 8-bit
// absmax per 64 + an fp32 scale per 64·256) on the layers' linears; the
// embedding, lm_head, norms in 16 bits; a 16-bit copy of the largest matrix
// for dequantization; the adapters in the dtype (docs/estimator.md#2-weights).
func TestRuleQLoRAWeights(t *testing.T) {
	nf4 := l8Linear/2 + l8Linear/64 + 4*((l8Linear+64*256-1)/(64*256))
	rest := l8P - l8Linear
	adapters := l8L * 16 * ((l8H + l8H) + 2*(l8H+l8KV*l8D) + (l8H + l8H) + 3*(l8H+l8I))
	want := nf4 + rest*2 + l8H*l8I*2 + adapters*2
	if got := estimateQuery(t, "method=qlora").Buckets.Weights; got != want {
		t.Errorf("qlora weights %d, want %d", got, want)
	}
	// With autocast the unquantized rest and the adapters are fp32.
	want = nf4 + rest*4 + l8H*l8I*2 + adapters*4
	if got := estimateQuery(t, "method=qlora&autocast=true").Buckets.Weights; got != want {
		t.Errorf("qlora autocast weights %d, want %d", got, want)
	}
}

// TestRuleSharding: what each stage shards (docs/estimator.md#6-sharding-tensor-parallelism-and-offload), the gather buffers
// of ZeRO-3 (2 × the largest unit in its stored bytes), DDP's bucket copy
// of the gradients, NCCL on more than one GPU, activations never sharded.
func TestRuleSharding(t *testing.T) {
	P := l8P
	tests := []struct {
		query                string
		weights, grads, opts int64
		nccl                 int64
	}{
		{"gpus=4&shard=ddp&master=true", P * 2, P * 2 * 2, P * 12, 688e6},
		{"gpus=2&shard=none", P * 2, P * 2 * 2, P * 4, 544e6},
		{"gpus=4&shard=zero1&master=true", P * 2, P * 2, P * 12 / 4, 688e6},
		{"gpus=4&shard=zero2&master=true", P * 2, P * 2 / 4, P * 12 / 4, 688e6},
		// The embedding (V·h = 525M) is a bigger unit than a layer (218M).
		{"gpus=4&shard=zero3&master=true", P*2/4 + 2*l8Emb*2, P * 2 / 4, P * 12 / 4, 688e6},
		{"gpus=4&shard=zero3&autocast=true", P*4/4 + 2*l8Emb*4, P * 4 / 4, P * 8 / 4, 688e6},
		{"gpus=1&shard=zero3", P * 2, P * 2, P * 4, 0},
	}
	unsharded := regexp.MustCompile(`gpus=\d+&shard=\w+&?`)
	for _, tt := range tests {
		res := estimateQuery(t, tt.query)
		base := estimateQuery(t, unsharded.ReplaceAllString(tt.query, ""))
		b := res.Buckets
		if b.Weights != tt.weights || b.Gradients != tt.grads || b.Optimizer != tt.opts {
			t.Errorf("%s: %d/%d/%d, want %d/%d/%d", tt.query, b.Weights, b.Gradients, b.Optimizer, tt.weights, tt.grads, tt.opts)
		}
		if got := res.Term(BucketNonTorch, "nccl data parallel"); got != tt.nccl {
			t.Errorf("%s: nccl %d, want %d", tt.query, got, tt.nccl)
		}
		if b.Activations != base.Buckets.Activations || b.Logits != base.Buckets.Logits {
			t.Errorf("%s: activations or logits change with sharding", tt.query)
		}
	}
	// QLoRA under ZeRO-3: the embedding stays 16-bit, so it is the largest
	// unit (525M × 2 B against a layer's 218M in NF4).
	// The NF4 base, 16-bit rest and adapters are sharded; the 16-bit
	// dequantization copy of the largest matrix is a per-GPU buffer.
	res := estimateQuery(t, "method=qlora&gpus=4&shard=zero3")
	nf4 := l8Linear/2 + l8Linear/64 + 4*((l8Linear+64*256-1)/(64*256))
	adapters := l8L * 16 * ((l8H + l8H) + 2*(l8H+l8KV*l8D) + (l8H + l8H) + 3*(l8H+l8I))
	stored := nf4 + (P-l8Linear)*2 + adapters*2
	if want := (stored+3)/4 + 2*l8Emb*2 + l8H*l8I*2; res.Buckets.Weights != want {
		t.Errorf("qlora zero3 weights %d, want %d", res.Buckets.Weights, want)
	}
	if got := res.Term(BucketWeights, "gather buffers"); got != 2*l8Emb*2 {
		t.Errorf("qlora zero3 gather buffers %d, want %d", got, 2*l8Emb*2)
	}
	// Mixtral: one MoE layer (8 experts) is far bigger than the embedding.
	h, kvd, i := int64(4096), int64(8*128), int64(14336)
	mixLayer := 2*h*h + 2*h*kvd + h*8 + 8*3*h*i + 2*h
	res = estimateQuery(t, "model=mixtral-8x7b&gpus=8&shard=zero3")
	if got := res.Term(BucketWeights, "gather buffers"); got != 2*mixLayer*2 {
		t.Errorf("mixtral zero3 gather buffers %d, want %d", got, 2*mixLayer*2)
	}
	if !strings.Contains(res.Formulas[BucketWeights], "× 2 B") {
		t.Errorf("gather formula does not give bytes per param: %q", res.Formulas[BucketWeights])
	}
	// Paper mode counts DDP's gradients once and no NCCL.
	res = estimateQuery(t, "gpus=4&shard=ddp&activations=paper")
	if res.Buckets.Gradients != P*2 || overheadBytes(res) != 0 {
		t.Errorf("paper ddp: gradients %d overhead %d, want %d and 0", res.Buckets.Gradients, overheadBytes(res), P*2)
	}
}

// TestRuleInference: quantized linears with their scales, the rest in the
// dtype; KV cache 2·kv_heads·head_dim per token and layer, sliding layers
// capped at the window, in kv_dtype (docs/estimator.md#7-kv-cache-and-serving-engines).
func TestRuleInference(t *testing.T) {
	rest := l8P - l8Linear
	outs := l8L * (l8H + 2*l8KV*l8D + l8H + 2*l8I + l8H) // Σ output channels
	// int4 groups: ceil(d_in/128) × d_out per matrix.
	groups := l8L * (l8H/128*l8H + 2*(l8H/128*l8KV*l8D) + l8H/128*l8H + 2*(l8H/128*l8I) + l8I/128*l8H)
	tests := []struct {
		query string
		want  int64
	}{
		{"quant=none", l8P * 2},
		{"quant=none&dtype=fp32", l8P * 4},
		{"quant=int8", l8Linear + outs*2 + rest*2},
		{"quant=fp8", l8Linear + outs*4 + rest*2},
		{"quant=int4", l8Linear/2 + groups*5/2 + rest*2},
	}
	for _, tt := range tests {
		q := "mode=infer&" + tt.query
		if got := estimateQuery(t, q).Buckets.Weights; got != tt.want {
			t.Errorf("%s: weights %d, want %d", q, got, tt.want)
		}
	}
	kv := []struct {
		query string
		want  int64
	}{
		// Gemma 3 27B: head_dim 128 (not 5376/32), 16 kv heads, 10 global
		// layers at full length, 52 local layers capped at 1024.
		{"model=gemma-3-27b&batch=3&seq=20000", 2 * 16 * 128 * 2 * 3 * (10*20000 + 52*1024)},
		// fp32 weights, bf16 cache.
		{"model=gemma-3-27b&batch=3&seq=20000&dtype=fp32&kv_dtype=bf16", 2 * 16 * 128 * 2 * 3 * (10*20000 + 52*1024)},
		// Below the window every layer holds all tokens.
		{"model=gemma-3-27b&seq=700&kv_dtype=fp8", 2 * 16 * 128 * 1 * 62 * 700},
		// Mistral 7B v0.3 has no sliding window.
		{"model=mistral-7b&batch=4&seq=32768", 2 * 32 * 8 * 128 * 2 * 4 * 32768},
		// DeepSeek-V3 MLA: (kv_lora_rank 512 + rope 64) per token and layer.
		{"model=deepseek-v3&batch=2&seq=10000&kv_dtype=fp16", 61 * (512 + 64) * 2 * 2 * 10000},
		// Qwen2.5 7B: 4 kv heads.
		{"model=qwen2.5-7b&batch=8&seq=4096&dtype=fp32", 2 * 28 * 4 * 128 * 4 * 8 * 4096},
	}
	for _, tt := range kv {
		q := "mode=infer&" + tt.query
		if got := estimateQuery(t, q).Buckets.KVCache; got != tt.want {
			t.Errorf("%s: kv_cache %d, want %d", q, got, tt.want)
		}
	}
}

// TestRuleFixLadder: each rung lowers the total, and the ladder stops at the
// first rung that fits; a request that fits needs no fixes.
func TestRuleFixLadder(t *testing.T) {
	queries := []string{
		"",
		"model=llama-3.1-70b&dtype=fp32&batch=8",
		"model=llama-3.1-70b&method=qlora&gpus=2&shard=zero3&gpu=t4-16gb",
		// Full checkpointing would raise this total (one recomputed layer's
		// s² scores exceed what selective already saved), so it is skipped.
		"model=qwen2.5-0.5b&attn=eager&ckpt=selective&seq=16384&gpu=rtx-4090-24gb",
		"model=llama-3.1-8b&mode=infer&batch=64&seq=32768&gpu=l4-24gb",
		"model=gpt2",
	}
	for _, q := range queries {
		rep, err := Advise(queryRequest(t, q))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Fits && len(rep.Fixes) != 0 {
			t.Errorf("%q fits but lists %d fixes", q, len(rep.Fixes))
		}
		prev := rep.TotalBytes
		for i, f := range rep.Fixes {
			if f.TotalBytes >= prev || f.SavesBytes != prev-f.TotalBytes {
				t.Errorf("%q: fix %s total %d after %d (saves %d)", q, f.Name, f.TotalBytes, prev, f.SavesBytes)
			}
			if f.Fits && i != len(rep.Fixes)-1 {
				t.Errorf("%q: the ladder goes on after %s fits", q, f.Name)
			}
			if strings.Contains(f.Change, "ckpt selective → full") && strings.Contains(q, "eager") {
				t.Errorf("%q: full checkpointing listed though it adds bytes", q)
			}
			prev = f.TotalBytes
		}
	}
}

// formulaRule recomputes a term's bytes from the numbers its formula shows.
type formulaRule struct {
	re   *regexp.Regexp
	calc func(n []float64, r Request, m Model) float64
}

// numbers parses the submatches ("8,030,261,248", "3.5") as numbers; an
// empty optional group reads as 0.
func numbers(t *testing.T, ss []string) []float64 {
	t.Helper()
	var out []float64
	for _, s := range ss {
		if s == "" {
			out = append(out, 0)
			continue
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
		if err != nil {
			t.Fatalf("formula number %q: %v", s, err)
		}
		out = append(out, f)
	}
	return out
}

var formulaRules = []formulaRule{
	{regexp.MustCompile(`^([\d,]+) (?:trainable |adapter )?params × (\d+) B(?: \(.*\))?$`), func(n []float64, _ Request, _ Model) float64 { return n[0] * n[1] }},
	{regexp.MustCompile(`^([\d,]+) × 2 states \(momentum, variance\) × (\d+) B: `), func(n []float64, _ Request, _ Model) float64 { return n[0] * 2 * n[1] }},
	{regexp.MustCompile(`^([\d,]+) × 1 factored second moment \(.*\) × (\d+) B: `), func(n []float64, _ Request, _ Model) float64 { return n[0] * n[1] }},
	{regexp.MustCompile(`^([\d,]+) × 1 momentum state × (\d+) B: `), func(n []float64, _ Request, _ Model) float64 { return n[0] * n[1] }},
	{regexp.MustCompile(`^s·b·V × ([\d.]+) B.*, with s·b = ([\d,]+) tokens and V = ([\d,]+)$`), func(n []float64, _ Request, _ Model) float64 {
		return math.Ceil(n[0] * n[1] * n[2])
	}},
	{regexp.MustCompile(`^b·V × 4 B`), func(_ []float64, r Request, m Model) float64 { return float64(r.Batch) * float64(m.Vocab) * 4 }},
	{regexp.MustCompile(`^(\d+) layers × \(([\d,]+) B per token \(.*\) × ([\d,]+) tokens(?: \+ eager scores b·a·s²·(\d+) B)?\)$`), func(n []float64, r Request, m Model) float64 {
		return n[0] * (n[1]*n[2] + float64(r.Batch)*float64(m.Heads)*float64(r.Seq)*float64(r.Seq)*n[3])
	}},
	{regexp.MustCompile(`^(\d+) layers × ([\d,]+) tokens × h ([\d,]+) × (\d+) B`), func(n []float64, _ Request, _ Model) float64 { return n[0] * n[1] * n[2] * n[3] }},
	{regexp.MustCompile(`^final norm ([\d,]+) B per token × ([\d,]+) tokens$`), func(n []float64, _ Request, _ Model) float64 { return n[0] * n[1] }},
	{regexp.MustCompile(`^(\d+) layers × 2 \(K,V\) × (\d+) kv heads × (\d+) head_dim × (\d+) B × b·s$`), func(n []float64, r Request, _ Model) float64 {
		return n[0] * n[1] * n[2] * n[3] * 2 * float64(r.Batch) * float64(r.Seq)
	}},
	{regexp.MustCompile(`^(\d+) layers × 2 \(K,V\) × (\d+) kv heads × (\d+) head_dim × (\d+) B × b × min\(s, window (\d+)\)$`), func(n []float64, r Request, _ Model) float64 {
		return n[0] * n[1] * n[2] * n[3] * 2 * float64(r.Batch) * math.Min(float64(r.Seq), n[4])
	}},
	{regexp.MustCompile(`^(\d+) layers × \(kv_lora_rank (\d+) \+ rope (\d+)\) × (\d+) B .*× b·s$`), func(n []float64, r Request, _ Model) float64 {
		return n[0] * (n[1] + n[2]) * n[3] * float64(r.Batch) * float64(r.Seq)
	}},
	{regexp.MustCompile(`^cuBLAS workspace ([\d,]+) B \+ cuBLASLt workspace ([\d,]+) B`), func(n []float64, _ Request, _ Model) float64 { return n[0] + n[1] }},
	{regexp.MustCompile(`^([\d,]+) weights × (\d+) B: autocast`), func(n []float64, _ Request, _ Model) float64 { return n[0] * n[1] }},
	{regexp.MustCompile(`^2 × the largest unit \(.* = ([\d,]+) B\)`), func(n []float64, _ Request, _ Model) float64 { return 2 * n[0] }},
	{regexp.MustCompile(`^(\d+)·s·b·h B per layer \(.*s ([\d,]+), b (\d+), h ([\d,]+)\) × (\d+) layers`), func(n []float64, r Request, _ Model) float64 {
		f := n[0] * n[1] * n[2] * n[3] * n[4]
		if r.Dtype == DtypeFP32 && !r.Autocast {
			f *= 2
		}
		return f
	}},
}

// TestFormulaNumbers: where a term's formula states its factors, they
// multiply out to the bytes shown beside it (the page shows both).
func TestFormulaNumbers(t *testing.T) {
	queries := []string{
		"", "master=true", "dtype=fp32&attn=eager&batch=2&seq=512", "autocast=true&optimizer=sgd-momentum", "autocast=true&ckpt=full",
		"optimizer=lion&method=lora&lora_targets=q_proj,v_proj", "method=qlora&ckpt=full&logits=chunked",
		"gpus=8&shard=zero3&model=llama-3.1-70b&ckpt=full", "gpus=4&shard=zero3&method=qlora", "model=mixtral-8x7b&gpus=8&shard=zero3",
		"activations=paper&seq=4096&master=true", "activations=paper&dtype=fp32&ckpt=full", "activations=paper&ckpt=selective&attn=eager",
		"mode=infer&model=gemma-2-9b&batch=3&seq=9000", "mode=infer&model=deepseek-v3&kv_dtype=fp8", "mode=infer&model=gpt-oss-20b&seq=100",
		"model=qwen3-30b-a3b&logits=bf16&dtype=fp32", "model=gemma-3-4b&method=lora&gpus=2",
		"optimizer=adafactor", "optimizer=adafactor&method=lora",
	}
	matched := map[int]bool{}
	for _, q := range queries {
		res := estimateQuery(t, q)
		for _, b := range res.Details {
			for _, term := range b.Terms {
				for i, fr := range formulaRules {
					sm := fr.re.FindStringSubmatch(term.Formula)
					if sm == nil {
						continue
					}
					matched[i] = true
					want := fr.calc(numbers(t, sm[1:]), res.Request, res.Model)
					if float64(term.Bytes) != want {
						t.Errorf("%q %s/%s: %d B, but the formula %q gives %.0f", q, b.Name, term.Name, term.Bytes, term.Formula, want)
					}
					break
				}
			}
		}
		// The fragmentation allowance is FragmentationPercent of what is
		// allocated and freed every step.
		if frag := res.Term(BucketAllocator, "fragmentation"); frag != 0 {
			transient := res.Buckets.Activations + res.Buckets.Logits + res.Term(BucketWeights, "gather buffers") +
				res.Term(BucketWeights, "dequant buffer") + res.Term(BucketGradients, "gradient staging")
			if want := (transient*FragmentationPercent + 99) / 100; frag != want {
				t.Errorf("%q: fragmentation %d, want %d %% of %d = %d", q, frag, FragmentationPercent, transient, want)
			}
		}
	}
	for i, fr := range formulaRules {
		if !matched[i] {
			t.Errorf("no term matched %s: the formula wording changed", fr.re)
		}
	}
}
