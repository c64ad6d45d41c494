package main

// Independent witnesses of the estimate goldens (testdata/estimate): a few
// numbers of each, computed by hand here from the models' published
// architectures and the rules of docs/estimator.md, never by the
// estimator, so that a regenerated golden cannot bless a regression.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// arch is a decoder's shape as its config.json states it.
type arch struct {
	vocab, hidden, layers, inter, heads, kv, headDim int64
	tied                                             bool  // lm_head shares the embedding
	qkNorm                                           bool  // per-head q_norm and k_norm (Qwen3)
	norms                                            int64 // hidden-sized norms per layer (2; Gemma 2 has 4)
	experts                                          int64 // routed experts (0: dense MLP)
}

// params counts the parameters: embeddings, per layer q/k/v/o, a gated
// MLP (or one per expert plus a router), the norms, and the final norm.
func (a arch) params() int64 {
	attn := a.hidden*a.heads*a.headDim*2 + a.hidden*a.kv*a.headDim*2
	mlp := 3 * a.hidden * a.inter
	if a.experts > 0 {
		mlp = a.experts*mlp + a.hidden*a.experts
	}
	norms := a.norms * a.hidden
	if a.qkNorm {
		norms += 2 * a.headDim
	}
	emb := a.vocab * a.hidden
	if !a.tied {
		emb *= 2
	}
	return emb + a.layers*(attn+mlp+norms) + a.hidden
}

// normParams are the parameters tensor parallelism replicates.
func (a arch) normParams() int64 {
	n := a.norms * a.hidden
	if a.qkNorm {
		n += 2 * a.headDim
	}
	return a.layers*n + a.hidden
}

// kvPerToken is the bytes of K and V one token keeps in every layer.
func (a arch) kvPerToken(elem int64) int64 { return a.layers * 2 * a.kv * a.headDim * elem }

// The published architectures (Hugging Face config.json of each model).
var (
	llama31_8b  = arch{vocab: 128256, hidden: 4096, layers: 32, inter: 14336, heads: 32, kv: 8, headDim: 128, norms: 2}
	llama31_70b = arch{vocab: 128256, hidden: 8192, layers: 80, inter: 28672, heads: 64, kv: 8, headDim: 128, norms: 2}
	qwen3_8b    = arch{vocab: 151936, hidden: 4096, layers: 36, inter: 12288, heads: 32, kv: 8, headDim: 128, norms: 2, qkNorm: true}
	qwen3_14b   = arch{vocab: 151936, hidden: 5120, layers: 40, inter: 17408, heads: 40, kv: 8, headDim: 128, norms: 2, qkNorm: true}
	qwen3_32b   = arch{vocab: 151936, hidden: 5120, layers: 64, inter: 25600, heads: 64, kv: 8, headDim: 128, norms: 2, qkNorm: true}
	qwen3_30b   = arch{vocab: 151936, hidden: 2048, layers: 48, inter: 768, heads: 32, kv: 4, headDim: 128, norms: 2, qkNorm: true, experts: 128}
	mixtral8x7b = arch{vocab: 32000, hidden: 4096, layers: 32, inter: 14336, heads: 32, kv: 8, headDim: 128, norms: 2, experts: 8}
	gemma2_2b   = arch{vocab: 256000, hidden: 2304, layers: 26, inter: 9216, heads: 8, kv: 4, headDim: 256, norms: 4, tied: true}
)

// TestHandParams pins the hand counts to the models' published totals, so
// that the witnesses below rest on the architectures, not on themselves.
func TestHandParams(t *testing.T) {
	for name, tt := range map[string]struct {
		a    arch
		want float64 // billions, as the model card states (rounded)
	}{
		"Llama 3.1 8B": {llama31_8b, 8.03}, "Llama 3.1 70B": {llama31_70b, 70.55}, "Qwen3 8B": {qwen3_8b, 8.19},
		"Qwen3 14B": {qwen3_14b, 14.77}, "Qwen3 32B": {qwen3_32b, 32.76}, "Qwen3 30B-A3B": {qwen3_30b, 30.53},
		"Mixtral 8x7B": {mixtral8x7b, 46.70}, "Gemma 2 2B": {gemma2_2b, 2.61},
	} {
		if got := float64(tt.a.params()) / 1e9; got < tt.want-0.005 || got > tt.want+0.005 {
			t.Errorf("%s: hand count %.3fB, the model card says %.2fB", name, got, tt.want)
		}
	}
}

// loraParams counts the LoRA adapter parameters of rank r on the named
// projections: r × (in + out) each, in every layer.
func (a arch) loraParams(r int64, targets ...string) int64 {
	q, kv := a.heads*a.headDim, a.kv*a.headDim
	dims := map[string][2]int64{"q_proj": {a.hidden, q}, "k_proj": {a.hidden, kv}, "v_proj": {a.hidden, kv}, "o_proj": {q, a.hidden},
		"gate_proj": {a.hidden, a.inter}, "up_proj": {a.hidden, a.inter}, "down_proj": {a.inter, a.hidden}}
	var n int64
	for _, t := range targets {
		d := dims[t]
		n += r * (d[0] + d[1])
	}
	return a.layers * n
}

var allLinear = []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}

// TestEstimateGoldenWitness checks numbers of each JSON golden against hand
// counts: parameters, the model-state buckets (docs/estimator.md#2-weights,
// docs/estimator.md#5-gradients-optimizer-states-and-precision), their
// ZeRO-3 shares (docs/estimator.md#6-sharding-tensor-parallelism-and-offload)
// and the KV cache (docs/estimator.md#7-kv-cache-and-serving-engines).
func TestEstimateGoldenWitness(t *testing.T) {
	type want struct {
		params, trainable int64
		buckets           map[string]int64
	}
	p8, p70 := llama31_8b.params(), llama31_70b.params()
	loraQV := qwen3_8b.loraParams(16, "q_proj", "v_proj")
	loraGemma := gemma2_2b.loraParams(16, allLinear...)
	for golden, w := range map[string]want{
		// bf16 full fine-tuning with AdamW, states in the parameter dtype:
		// 2 B weights, 2 B gradients, 2 × 2 B states per parameter; the
		// loss keeps bf16 logits, fp32 log-softmax and two fp32 gradients
		// (14 B per logit) for b·s·V.
		"default.json": {p8, p8, map[string]int64{"weights": 2 * p8, "gradients": 2 * p8, "optimizer": 4 * p8, "logits": 1 * 2048 * 128256 * 14}},
		// fp32 master weights and two fp32 states: 12 B per parameter.
		"paper-reference.json": {p8, p8, map[string]int64{"weights": 2 * p8, "gradients": 2 * p8, "optimizer": 12 * p8}},
		// LoRA r=16 on q_proj and v_proj: only the adapters train.
		"lora-custom-gpu.json": {qwen3_8b.params(), loraQV, map[string]int64{"gradients": 2 * loraQV, "optimizer": 4 * loraQV}},
		// ZeRO-3 over 16 GPUs shards gradients and states.
		"zero3-70b.json":    {p70, p70, map[string]int64{"gradients": 2 * p70 / 16, "optimizer": 4 * p70 / 16}},
		"zero3-master.json": {p70, p70, map[string]int64{"gradients": 2 * p70 / 8, "optimizer": 12 * p70 / 8}},
		// fp8 KV cache of batch 8 × 32,768 tokens.
		"infer-moe.json": {qwen3_30b.params(), 0, map[string]int64{"kv_cache": 8 * 32768 * qwen3_30b.kvPerToken(1)}},
		// QLoRA on a Gemma 2 2B config.json: fp16 adapters on every linear.
		"config-file.json": {gemma2_2b.params(), loraGemma, map[string]int64{"gradients": 2 * loraGemma}},
		"serve.json":       {qwen3_14b.params(), 0, nil},
	} {
		t.Run(golden, func(t *testing.T) {
			var g struct {
				Params    int64            `json:"params"`
				Trainable int64            `json:"trainable_params"`
				Buckets   map[string]int64 `json:"buckets"`
			}
			if err := json.Unmarshal([]byte(testdataText(t, "estimate", golden)), &g); err != nil {
				t.Fatal(err)
			}
			if g.Params != w.params || g.Trainable != w.trainable {
				t.Errorf("params %d, trainable %d; by hand %d, %d", g.Params, g.Trainable, w.params, w.trainable)
			}
			for k, v := range w.buckets {
				if g.Buckets[k] != v {
					t.Errorf("buckets.%s = %d, by hand %d", k, g.Buckets[k], v)
				}
			}
		})
	}

	// vLLM's KV cache: 40 layers × 2 × 8 kv heads × 128 × 2 B a token, in
	// blocks of 16 tokens; concurrency is tokens ÷ max_model_len.
	var s struct {
		Serving struct {
			KVBytes     int64   `json:"kv_cache_bytes"`
			PerToken    int64   `json:"kv_bytes_per_token"`
			Tokens      int64   `json:"kv_cache_tokens"`
			Blocks      int64   `json:"kv_blocks"`
			Concurrency float64 `json:"max_concurrency"`
		} `json:"serving"`
	}
	if err := json.Unmarshal([]byte(testdataText(t, "estimate", "serve.json")), &s); err != nil {
		t.Fatal(err)
	}
	sv := s.Serving
	per := qwen3_14b.kvPerToken(2)
	if sv.PerToken != per || sv.Blocks != sv.KVBytes/(16*per) || sv.Tokens != 16*sv.Blocks || sv.Concurrency != float64(sv.Tokens)/8192 {
		t.Errorf("serve.json: %+v; by hand %d B a token, %d blocks, %d tokens, %v concurrent", sv, per, sv.KVBytes/(16*per), 16*(sv.KVBytes/(16*per)), float64(16*(sv.KVBytes/(16*per)))/8192)
	}
}

// row matches a bucket row of the text output: name, GiB, GB.
func row(bucket string, bytes int64) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`\n\s+%s\s+%.2f\s+%.2f\n`, bucket, float64(bytes)/(1<<30), float64(bytes)/1e9))
}

func withCommas(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestEstimateTextGoldenWitness checks the text goldens' parameter counts
// and bucket rows against hand counts, and the catalog listings against the
// catalog files and capacities PyTorch prints in real OOM messages.
func TestEstimateTextGoldenWitness(t *testing.T) {
	// Serving weights add vLLM's cos/sin cache: max positions × rotary
	// dims × 2 B.
	cosSin := int64(131072 * 128 * 2)
	// Tensor parallelism over 2 splits everything but the norms.
	tp2 := (qwen3_32b.params()-qwen3_32b.normParams())/2 + qwen3_32b.normParams()
	for golden, wants := range map[string][]any{
		"default.txt":         {llama31_8b.params(), row("weights", 2*llama31_8b.params()), row("optimizer", 4*llama31_8b.params())},
		"infer.txt":           {mixtral8x7b.params(), row("weights", 2*mixtral8x7b.params()), row("kv_cache", 8192*mixtral8x7b.kvPerToken(2))},
		"serve-fails.txt":     {llama31_8b.params(), row("weights", 2*llama31_8b.params()+cosSin)},
		"serve-tp-sglang.txt": {qwen3_32b.params(), row("weights", 2*tp2)},
		"tp-offload.txt":      {llama31_70b.params(), row("optimizer", 0)},
	} {
		text := testdataText(t, "estimate", golden)
		for _, w := range wants {
			switch w := w.(type) {
			case int64:
				if !strings.Contains(text, withCommas(w)+" params") {
					t.Errorf("%s lacks the hand count %s params", golden, withCommas(w))
				}
			case *regexp.Regexp:
				if !w.MatchString(text) {
					t.Errorf("%s lacks a row matching %s", golden, w)
				}
			}
		}
	}

	// The model list has one row per catalog file, under a header.
	files, err := filepath.Glob("../../estimator/models/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalog files: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(testdataText(t, "estimate", "list-models.txt")), "\n")
	if len(lines) != len(files)+1 {
		t.Errorf("list-models.txt has %d rows, the catalog %d files", len(lines)-1, len(files))
	}
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".json")
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + ` `).MatchString(strings.Join(lines, "\n")) {
			t.Errorf("list-models.txt lacks %s", id)
		}
	}
	// Capacities as PyTorch prints them in OOM messages ("GPU 0 has a total
	// capacity of 14.75 GiB" on a Colab T4, and so on).
	gpus := testdataText(t, "estimate", "list-gpus.txt")
	for id, capacity := range map[string]string{"t4-16gb": "14.75 GiB", "rtx-3090-24gb": "23.70 GiB", "a100-80gb": "79.15 GiB", "rtx-4090-24gb": "23.99 GiB"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + ` .*` + regexp.QuoteMeta(capacity)).MatchString(gpus) {
			t.Errorf("list-gpus.txt: %s is not listed at %s", id, capacity)
		}
	}
}
