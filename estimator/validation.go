package estimator

import (
	"fmt"
	"math"
	"net/url"
	"sort"
	"sync"
)

// Measured is one setup the estimator was validated on: a published
// measurement, the request that reproduces its setup, and the statistic
// it reports (docs/estimator.md#10-validation-the-error-band-and-the-capacity-bound).
type Measured struct {
	// ID names the source row of the table of docs/estimator.md#10-validation-the-error-band-and-the-capacity-bound ("row 10"),
	// or a start-up log's id
	// in testdata/vllm-startup-logs.jsonl.
	ID string `json:"id"`
	// Source is where the measurement was published.
	Source string `json:"source"`
	// What describes the setup in a few words.
	What string `json:"what"`
	// Query is the request in the vocabulary.
	Query string `json:"query"`
	// Stat is what was measured: allocated, reserved or device (bytes at
	// the peak, per GPU), max_seq (the longest sequence that fit, tokens;
	// 0 when nothing did), kv_tokens (a serving engine's KV cache, tokens)
	// or kv_bytes (its KV cache on one GPU, bytes).
	Stat string `json:"stat"`
	// Value is the measured number in Stat's unit.
	Value float64 `json:"value"`
	// Outlier marks a row shown but left out of bands and bounds, with the
	// reason in Note.
	Outlier bool   `json:"outlier,omitempty"`
	Note    string `json:"note,omitempty"`
	// Estimate is the estimator's number for the same statistic, and
	// Error its relative error (estimate ÷ measured − 1; for a measured 0,
	// 0 when the estimate is 0 too, else +1).
	Estimate float64 `json:"estimate"`
	Error    float64 `json:"error"`
}

const gibF = float64(1 << 30)

// unslothQuery is the Unsloth README's Hugging Face + FA2 baseline: QLoRA
// r32 on all linears, 8-bit AdamW, gradient checkpointing, batch 1,
// prepare_model_for_kbit_training's fp32 non-quantized weights (autocast).
const unslothQuery = "method=qlora&autocast=true&lora_rank=32&optimizer=adamw-8bit&ckpt=full&headroom=0&"

// unslothNote explains the capacity rows' cards.
const unslothNote = "the README names the memory, not the card: the capacity is taken as the nameplate in GiB, more than any such card reports, so a bound that holds here holds for the card used"

// measuredSetups are the measurements the estimator is checked against.
var measuredSetups = []Measured{
	{ID: "row 10", Source: "torchtune README @1814feb", What: "Llama 3.2 3B full FT, pure bf16 AdamW, packed 2×4096, no AC, plain CE", Query: "model=llama-3.2-3b&gpu=a100-80gb&batch=2&seq=4096", Stat: "allocated", Value: 60.0 * gibF},
	{ID: "row 7", Source: "torchtune README, 70B_lora.yaml", What: "Llama 3.1 70B LoRA r16 q,k,v, FSDP on 8 A100, packed 2×2048, AC, chunked CE", Query: "model=llama-3.1-70b&gpu=a100-80gb&method=lora&lora_targets=q_proj,k_proj,v_proj&batch=2&seq=2048&ckpt=full&logits=chunked&gpus=8&shard=zero3", Stat: "allocated", Value: 27.6 * gibF},
	{ID: "row 8", Source: "torchtune README, 405B_qlora.yaml", What: "Llama 3.1 405B QLoRA r16, FSDP on 8 A100, 1×2048, AC, chunked CE", Query: "model=llama-3.1-405b&gpu=a100-80gb&method=qlora&lora_targets=q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj&batch=1&seq=2048&ckpt=full&logits=chunked&gpus=8&shard=zero3", Stat: "allocated", Value: 44.8e9},
	{ID: "row 19", Source: "torchtune README @0217d44", What: "Llama 2 7B QLoRA r8, 4×2048, AC", Query: "model=llama-2-7b&gpu=rtx-4090-24gb&method=qlora&lora_rank=8&batch=4&seq=2048&ckpt=full", Stat: "allocated", Value: 12.3e9},
	{ID: "row 20", Source: "torchtune README @0217d44", What: "Llama 2 7B LoRA r8 q,v, 4×2048, AC", Query: "model=llama-2-7b&gpu=rtx-4090-24gb&method=lora&lora_rank=8&lora_targets=q_proj,v_proj&batch=4&seq=2048&ckpt=full", Stat: "allocated", Value: 21.3e9},
	{ID: "row 23", Source: "torchtune README @0217d44", What: "Llama 2 7B full FT, FSDP on 4 RTX 4090, 4×2048, AC", Query: "model=llama-2-7b&gpu=rtx-4090-24gb&batch=4&seq=2048&ckpt=full&gpus=4&shard=zero3", Stat: "allocated", Value: 24.1e9},
	{ID: "row 35", Source: "huggingface/peft docs/source/accelerate/deepspeed.md @09802c1", What: "Llama 2 70B LoRA r8 all-linear, ZeRO-3 on 8 H100, 8×2048, GC, FA2 (nvidia-smi)", Query: "model=llama-2-70b&gpu=h100-sxm-80gb&method=lora&lora_rank=8&batch=8&seq=2048&ckpt=full&gpus=8&shard=zero3", Stat: "device", Value: 64e9},
	{ID: "row 24", Source: "torchtune README @0217d44", What: "Llama 2 70B LoRA q,k,v, 8 A100, 4×4096 cap", Query: "model=llama-2-70b&gpu=a100-80gb&method=lora&lora_targets=q_proj,k_proj,v_proj&batch=4&seq=4096&ckpt=full&gpus=8&shard=zero3", Stat: "allocated", Value: 26.4e9,
		Outlier: true, Note: "4096 is the max_seq_len cap of unpacked Alpaca, not the real length: the checkpointed inputs of 4×4096 tokens alone would take 21.5 GB"},
	{ID: "row 36", Source: "huggingface/peft docs/source/accelerate/deepspeed.md @09802c1", What: "Llama 2 70B QLoRA r8, ZeRO-3 on 2 GPUs, bf16 quant storage", Query: "model=llama-2-70b&gpu=a100-80gb&method=qlora&lora_rank=8&batch=2&seq=2048&ckpt=full&gpus=2&shard=zero3", Stat: "device", Value: 36.6e9,
		Outlier: true, Note: "QLoRA under DeepSpeed ZeRO-3 with bf16 quant storage: the wrapper's extra copies are not modelled"},

	{ID: "row 44 (8 GB)", Source: "unslothai/unsloth README @0acd1c7", What: "Llama 3.1 8B QLoRA, HF + FA2: OOM on an 8 GB card", Query: unslothQuery + "model=llama-3.1-8b&gpu=8GiB", Stat: "max_seq", Value: 0, Note: unslothNote},
	{ID: "row 44 (12 GB)", Source: "unslothai/unsloth README @0acd1c7", What: "Llama 3.1 8B QLoRA, HF + FA2, longest context on a 12 GB card", Query: unslothQuery + "model=llama-3.1-8b&gpu=12GiB", Stat: "max_seq", Value: 932, Note: unslothNote},
	{ID: "row 44 (16 GB)", Source: "unslothai/unsloth README @0acd1c7", What: "Llama 3.1 8B QLoRA, HF + FA2, longest context on a 16 GB card", Query: unslothQuery + "model=llama-3.1-8b&gpu=16GiB", Stat: "max_seq", Value: 2551, Note: unslothNote},
	{ID: "row 44 (24 GB)", Source: "unslothai/unsloth README @0acd1c7", What: "Llama 3.1 8B QLoRA, HF + FA2, longest context on an RTX 4090", Query: unslothQuery + "model=llama-3.1-8b&gpu=rtx-4090-24gb", Stat: "max_seq", Value: 5789},
	{ID: "row 44 (40 GB)", Source: "unslothai/unsloth README @0acd1c7", What: "Llama 3.1 8B QLoRA, HF + FA2, longest context on an A100 40GB", Query: unslothQuery + "model=llama-3.1-8b&gpu=a100-sxm-40gb", Stat: "max_seq", Value: 12264},
	{ID: "row 44 (48 GB)", Source: "unslothai/unsloth README @0acd1c7", What: "Llama 3.1 8B QLoRA, HF + FA2, longest context on an RTX A6000", Query: unslothQuery + "model=llama-3.1-8b&gpu=rtx-a6000-48gb", Stat: "max_seq", Value: 15502},
	{ID: "row 44 (80 GB)", Source: "unslothai/unsloth README @0acd1c7", What: "Llama 3.1 8B QLoRA, HF + FA2, longest context on an A100 80GB", Query: unslothQuery + "model=llama-3.1-8b&gpu=a100-80gb", Stat: "max_seq", Value: 28454},
	{ID: "row 45 (48 GB)", Source: "unslothai/unsloth README @0acd1c7", What: "Llama 3.3 70B QLoRA, HF + FA2: OOM on a 48 GB card", Query: unslothQuery + "model=llama-3.3-70b&gpu=rtx-a6000-48gb", Stat: "max_seq", Value: 0},
	{ID: "row 45 (80 GB)", Source: "unslothai/unsloth README @0acd1c7", What: "Llama 3.3 70B QLoRA, HF + FA2, longest context on an A100 80GB", Query: unslothQuery + "model=llama-3.3-70b&gpu=a100-80gb", Stat: "max_seq", Value: 6916},
}

// MeasuredSetups returns every measured setup with the estimator's number
// and error for it, computed once. The slice is a copy.
func MeasuredSetups() []Measured {
	validateOnce.Do(validate)
	out := make([]Measured, len(validated))
	copy(out, validated)
	return out
}

var (
	validateOnce sync.Once
	validated    []Measured
	// validatedReq holds each setup's parsed request, for nearness.
	validatedReq []Request
)

// validate estimates every measured setup.
func validate() {
	all := append(append([]Measured(nil), measuredSetups...), servingSetups...)
	for _, m := range all {
		q, err := url.ParseQuery(m.Query)
		if err != nil {
			panic("estimator: measured setup " + m.ID + ": " + err.Error())
		}
		r, err := ParseQuery(q)
		if err != nil {
			panic("estimator: measured setup " + m.ID + ": " + err.Error())
		}
		p, err := newPlan(r)
		if err != nil {
			panic("estimator: measured setup " + m.ID + ": " + err.Error())
		}
		res := p.compute()
		switch m.Stat {
		case "allocated", "reserved", "device":
			m.Estimate = float64(res.Readouts.Get(m.Stat))
		case "max_seq":
			m.Estimate = float64(p.maxSeq())
		case "kv_tokens":
			m.Estimate = float64(res.Serving.KVCacheTokens)
		case "kv_bytes":
			m.Estimate = float64(res.Serving.KVCacheBytes)
		}
		switch {
		case m.Value != 0:
			m.Error = m.Estimate/m.Value - 1
		case m.Estimate != 0:
			m.Error = 1
		}
		validated = append(validated, m)
		validatedReq = append(validatedReq, r)
	}
}

// ErrorBand is the spread of error on the measured setups nearest to a
// request: "measured setups like this one were within Low … High".
type ErrorBand struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// Setups are the nearest measured setups, nearest first.
	Setups []Measured `json:"setups"`
	// Stat is what the band's setups measured.
	Words string `json:"words"`
}

// nearness scores how unlike a measured setup's request is to r: 0 for the
// same kind of job, more for each difference (method, sharding, scale).
func nearness(r, m Request) float64 {
	d := 0.0
	if r.Method != m.Method {
		d += 2
	}
	if (r.GPUs > 1) != (m.GPUs > 1) || (r.Shard == ShardZero3) != (m.Shard == ShardZero3) {
		d++
	}
	if r.Ckpt != m.Ckpt {
		d += 0.5
	}
	if r.TP != m.TP {
		d += 0.5
	}
	if r.Model != m.Model {
		d += 0.25
	}
	return d
}

// errorBand picks the measured setups of the request's mode nearest to it
// (peaks for training, KV caches for serving; plain inference has none)
// and returns their spread of error.
func (p *plan) errorBand() *ErrorBand {
	validateOnce.Do(validate)
	type cand struct {
		i int
		d float64
	}
	var cs []cand
	for i, m := range validated {
		if m.Outlier || m.Stat == "max_seq" {
			continue
		}
		serving := m.Stat == "kv_tokens" || m.Stat == "kv_bytes"
		if serving != p.serve() || (!serving && !p.train()) {
			continue
		}
		cs = append(cs, cand{i, nearness(p.r, validatedReq[i])})
	}
	if len(cs) == 0 {
		return nil
	}
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].d < cs[b].d })
	b := &ErrorBand{Low: math.Inf(1), High: math.Inf(-1)}
	for _, c := range cs[:min(5, len(cs))] {
		m := validated[c.i]
		b.Setups = append(b.Setups, m)
		b.Low, b.High = math.Min(b.Low, m.Error), math.Max(b.High, m.Error)
	}
	what := "peak memory"
	if p.serve() {
		what = "KV cache"
	}
	b.Words = fmt.Sprintf("the %d measured setups most like this one: %s estimated within %+.1f %% … %+.1f %% of what was measured", len(b.Setups), what, 100*b.Low, 100*b.High)
	return b
}

// CapacityMargin is how the shown longest sequence compares with the
// measured longest-context rows: every shown maximum is at most
// 5 % above the measured one (TestCapacityBound), here the actual spread.
type CapacityMargin struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	Rows int     `json:"rows"`
}

// capacityMargin summarises the max_seq rows.
func capacityMargin() CapacityMargin {
	validateOnce.Do(validate)
	c := CapacityMargin{Low: math.Inf(1), High: math.Inf(-1)}
	for _, m := range validated {
		if m.Stat != "max_seq" || m.Value == 0 {
			continue
		}
		c.Rows++
		c.Low, c.High = math.Min(c.Low, m.Error), math.Max(c.High, m.Error)
	}
	return c
}
