package estimator

import (
	"fmt"
	"strconv"
	"strings"

	"oomscope/bytesize"
)

// Serving engines (docs/estimator.md#7-kv-cache-and-serving-engines): vLLM and SGLang take a fixed
// share of the card at start-up and fill what their profile run leaves
// with KV cache blocks.

// Serving is what a serving engine prints at start-up, per GPU (token
// counts are engine-wide: each tensor-parallel rank holds its share of
// every token's heads), and the limits in force.
type Serving struct {
	Engine string `json:"engine"`
	// WeightsBytes is the model's weights on one GPU ("Model loading took").
	WeightsBytes int64 `json:"weights_bytes"`
	// NonTorchBytes is the memory outside PyTorch the profile run adds
	// (libraries, NCCL); the CUDA context predates the budget.
	NonTorchBytes int64 `json:"non_torch_bytes"`
	// ActivationPeakBytes is the profile run's peak beyond the weights.
	ActivationPeakBytes int64 `json:"activation_peak_bytes"`
	// KVCacheBytes is the memory left for the KV cache on one GPU.
	KVCacheBytes  int64 `json:"kv_cache_bytes"`
	KVCacheTokens int64 `json:"kv_cache_tokens"`
	KVBlocks      int64 `json:"kv_blocks"`
	// MaxConcurrency is how many max_model_len requests the cache holds.
	MaxConcurrency float64 `json:"max_concurrency"`
	// BudgetBytes is capacity × gpu_memory_utilization (mem_fraction_static).
	BudgetBytes int64 `json:"budget_bytes"`
	// KVBytesPerToken is one token's cache on one GPU, all layers.
	KVBytesPerToken int64 `json:"kv_bytes_per_token"`
	// RequestKVBytes is what one max_model_len request needs of the cache
	// on one GPU (sliding-window layers only their window).
	RequestKVBytes int64 `json:"request_kv_bytes"`
	// The limits in force, engine defaults resolved.
	MaxModelLen      int `json:"max_model_len"`
	MaxNumSeqs       int `json:"max_num_seqs"`
	MaxBatchedTokens int `json:"max_num_batched_tokens"`
	BlockSize        int `json:"block_size"`
	// Formulas explain each number, keyed by its JSON name.
	Formulas map[string]string `json:"formulas"`
	// Log is what the engine's start-up log says, line by line.
	Log []string `json:"log"`
	// Error is the engine's own start-up error when it cannot start.
	Error string `json:"error,omitempty"`
}

// servingDefaults are vLLM's defaults for `vllm serve` (V1 engine): larger
// batches on cards of 70 GiB or more other than the A100.
func (p *plan) servingDefaults() (seqs, batched int) {
	big := p.g.CapacityBytes >= 70<<30 && !strings.Contains(p.g.Name, "A100")
	seqs, batched = 256, 2048
	if big {
		seqs, batched = 1024, 8192
	}
	if p.r.Engine == EngineSGLang {
		batched = 8192 // SGLang's chunked_prefill_size on large cards
		if !big {
			batched = 2048
		}
	}
	if p.r.MaxNumSeqs > 0 {
		seqs = p.r.MaxNumSeqs
	}
	if p.r.MaxBatchedToks > 0 {
		batched = p.r.MaxBatchedToks
	}
	return seqs, batched
}

// SamplerCopies is how many max_num_seqs × vocabulary fp32 tensors the
// profile run's sampler holds at once: the logits, the probabilities, the
// log-probabilities and the top-k/top-p sort buffer.
const SamplerCopies = 4

// CUDAGraphBytes is the CUDA graphs' memory outside the budget: 0.5 GiB,
// the median of the start-up logs (−0.76 … +1.88 GiB).
const CUDAGraphBytes int64 = 512 << 20

// servingActivation is the profile run's peak beyond the weights, per GPU:
// the larger of one layer's working set over max_num_batched_tokens
// tokens and the sampler over max_num_seqs rows.
func (p *plan) servingActivation(seqs, batched int) (int64, string) {
	m := &p.m
	e := dtypeBytes(p.r.Dtype)
	h := int64(m.Hidden)
	tp := p.tp()
	T := int64(batched)
	var inner int64
	var what string
	if m.MoE() {
		topk := int64(m.ExpertsPerToken)
		inner = topk * (ceilDiv(3*int64(m.ExpertIntermediate), tp) + h)
		inner += ceilDiv(3*int64(m.ExpertIntermediate*m.SharedExperts), tp)
		inner = max(inner, ceilDiv(3*int64(m.Intermediate), tp))
		what = p.say("fused MoE caches top-%d × (3 × expert width ÷ tp + h)", topk)
	} else {
		w := int64(2)
		if m.GatedMLP {
			w = 3
		}
		inner = ceilDiv(w*int64(m.Intermediate), tp)
		what = p.say("MLP %d × intermediate %s ÷ tp %d", w, num(int64(m.Intermediate)), tp)
	}
	attn := ceilDiv(int64(m.Heads*m.qkHeadDim()+2*m.attnKVHeads()*m.qkHeadDim()+m.Heads*m.vHeadDim()), tp)
	perToken := mul(e, sum(3*h, max(inner, attn)))
	forward := mul(T, perToken)
	sampler := mul(int64(min(seqs, batched)), int64(m.Vocab), 4, SamplerCopies)
	words := p.say("max(forward over %s batched tokens × %s B (3 × h residual, hidden, normed + %s, × %d B), sampler %s sequences × V %s × 4 B × %d (logits, probabilities, log-probabilities, sort buffer))",
		num(T), num(perToken), what, e, num(int64(min(seqs, batched))), num(int64(m.Vocab)), SamplerCopies)
	return max(forward, sampler), words
}

// ropeCache is vLLM's cos/sin cache: max_position_embeddings × the rotary
// dimension in the model dtype, on every rank.
func (p *plan) ropeCache() int64 {
	d := int64(p.m.HeadDim)
	if p.m.MLA() {
		d = int64(p.m.QKRopeDim)
	}
	return mul(int64(p.m.MaxPositions), d, dtypeBytes(p.r.Dtype))
}

// computeServe fills the buckets of a serving engine's start-up.
func (p *plan) computeServe(res *Result) {
	s := &Serving{Engine: p.r.Engine, BlockSize: p.r.BlockSize, Formulas: map[string]string{}}
	res.Serving = s
	s.MaxNumSeqs, s.MaxBatchedTokens = p.servingDefaults()
	s.MaxModelLen = p.r.MaxModelLen
	if s.MaxModelLen == 0 {
		s.MaxModelLen = p.m.MaxPositions
	}
	if s.MaxModelLen == 0 {
		s.MaxModelLen = 2048 // no max_position_embeddings: vLLM's fallback
	}
	if p.r.Engine == EngineSGLang {
		s.BlockSize = 1 // SGLang's page size
	}
	weights, _ := p.weights()
	rope := Term{"rope cache", p.ropeCache(), p.say("cos/sin cache: %s positions × %d rotary dims × %d B", num(int64(p.m.MaxPositions)), p.ropeCache()/max(1, int64(p.m.MaxPositions))/dtypeBytes(p.r.Dtype), dtypeBytes(p.r.Dtype))}
	if p.r.Engine == EngineVLLM {
		weights.Terms = append(weights.Terms, rope)
		weights.Bytes = sum(weights.Bytes, rope.Bytes)
		weights.Formula = joinFormulas(weights.Terms...)
	}
	s.WeightsBytes = weights.Bytes

	act, actWords := p.servingActivation(s.MaxNumSeqs, s.MaxBatchedTokens)
	s.ActivationPeakBytes = act
	nt := []Term{{"libraries", LibraryBytes, "kernels and library handles loaded by the profile run (0.13–0.35 GiB in the start-up logs)"}}
	if tp := p.tp(); tp > 1 {
		b, words := ncclBytes(tp)
		nt = append(nt, Term{"nccl tensor parallel", b, p.say("the tensor-parallel group's NCCL communicator (%s)", words)})
	}
	for _, t := range nt {
		s.NonTorchBytes = sum(s.NonTorchBytes, t.Bytes)
	}
	s.BudgetBytes = fraction(p.g.CapacityBytes, p.r.GPUMemoryUtil, 1)
	util := strconv.FormatFloat(p.r.GPUMemoryUtil, 'f', -1, 64)
	budgetWords := p.say("capacity %s B × gpu_memory_utilization %s", num(p.g.CapacityBytes), util)
	var kv int64
	var kvWords string
	if p.r.Engine == EngineSGLang {
		// SGLang budgets weights and KV cache; activations and CUDA
		// graphs live in the rest, and the context and libraries it
		// measures as used before the pool.
		budgetWords = p.say("capacity %s B × mem_fraction_static %s", num(p.g.CapacityBytes), util)
		kv = s.BudgetBytes - s.WeightsBytes - CUDAContextBytes - s.NonTorchBytes
		kvWords = "budget − weights − CUDA context − non-torch memory (SGLang keeps activations outside mem_fraction_static)"
	} else {
		kv = s.BudgetBytes - s.WeightsBytes - act - s.NonTorchBytes
		kvWords = "budget − weights − activation peak − non-torch memory (the CUDA context lies outside the budget)"
	}
	per, perWords := p.kvLayerBytes()
	full, sliding := p.kvLayers()
	if p.r.Engine == EngineSGLang {
		full, sliding = full+sliding, 0 // one pool, every layer full length
	}
	s.KVBytesPerToken = mul(full+sliding, per)
	s.Formulas["kv_bytes_per_token"] = p.say("%d cached layers × %s", full+sliding, perWords)
	s.Formulas["budget_bytes"] = budgetWords
	s.Formulas["weights_bytes"] = weights.Formula
	s.Formulas["activation_peak_bytes"] = actWords
	s.Formulas["non_torch_bytes"] = joinFormulas(nt...)
	s.Formulas["kv_cache_bytes"] = kvWords
	s.KVCacheBytes = kv
	p.kvPool(s, full, sliding, per)

	gib := func(n int64) string { return strconv.FormatFloat(float64(n)/float64(bytesize.GiB), 'f', 2, 64) }
	if p.r.Engine == EngineSGLang {
		s.Log = []string{
			fmt.Sprintf("Load weight end. mem usage=%s GB", gib(s.WeightsBytes)),
			fmt.Sprintf("KV Cache is allocated. #tokens: %d, K size: %s GB, V size: %s GB", s.KVCacheTokens, gib(max(kv, 0)/2), gib(max(kv, 0)/2)),
			fmt.Sprintf("max_total_num_tokens=%d, max_running_requests=%d, context_len=%d", s.KVCacheTokens, s.MaxNumSeqs, s.MaxModelLen),
		}
	} else {
		s.Log = []string{
			fmt.Sprintf("Model loading took %s GiB", gib(s.WeightsBytes)),
			fmt.Sprintf("torch peak memory increase: %s GiB; non-torch memory: %s GiB", gib(act), gib(s.NonTorchBytes)),
			fmt.Sprintf("Available KV cache memory: %s GiB", gib(kv)),
			fmt.Sprintf("GPU KV cache size: %s tokens", num(s.KVCacheTokens)),
			fmt.Sprintf("Maximum concurrency for %s tokens per request: %.2fx", num(int64(s.MaxModelLen)), s.MaxConcurrency),
		}
	}

	// Buckets: what the budget holds, then what lies outside it.
	actB := Bucket{Name: BucketActivations, Bytes: act, Formula: "profile run: " + actWords, Terms: []Term{{"profile peak", act, actWords}}}
	if p.r.Engine == EngineSGLang {
		actB.Formula += " (outside mem_fraction_static)"
	}
	kvB := Bucket{Name: BucketKVCache, Bytes: max(kv, 0), Formula: kvWords, Terms: []Term{{"kv pool", max(kv, 0), kvWords}}}
	outside := append(nt,
		Term{"cuda context", CUDAContextBytes, "CUDA context (lazy loading), created before the engine measures its budget"},
		Term{"cuda graphs", CUDAGraphBytes, "CUDA graphs captured after the KV cache (0.5 GiB, the median of the start-up logs)"})
	res.Details = []Bucket{
		weights,
		{Name: BucketGradients, Formula: "none: serving keeps no gradients"},
		{Name: BucketOptimizer, Formula: "none: serving has no optimizer"},
		actB,
		{Name: BucketLogits, Formula: "none apart: the sampler's logits are in the activation peak"},
		kvB,
		{Name: BucketWorkspace, Formula: "none apart: the cuBLAS workspaces are in the activation peak"},
		{Name: BucketAllocator, Formula: "none apart: the engine allocates the KV cache as one block per layer"},
		bucket(BucketNonTorch, joinFormulas(outside...), outside...),
	}
	allocated := sum(weights.Bytes, act, max(kv, 0))
	res.Readouts = Readouts{Allocated: allocated, Reserved: allocated, Device: sum(allocated, res.Details[8].Bytes),
		Formulas: map[string]string{
			"allocated": "weights + KV cache + the activation peak",
			"reserved":  "the same: the engine allocates its KV cache whole and reuses the activation memory",
			"device":    "reserved + non-torch memory + CUDA context + CUDA graphs",
		}, Compare: map[string]string{
			"allocated": "the engine's \"Model loading took\" plus \"Available KV cache memory\" and the torch peak increase",
			"reserved":  "torch.cuda.memory_reserved() in the engine process",
			"device":    "nvidia-smi's memory used once the engine is up",
		}}
	res.TotalBytes = res.Readouts.Device
	res.UsableBytes = p.g.CapacityBytes
	res.UsableFormula = p.say("%s capacity as PyTorch reports it (%s B); the engine budgets %s of it", p.g.Name, num(p.g.CapacityBytes), util)
	res.Fits = s.Error == "" && res.TotalBytes <= res.UsableBytes
	switch {
	case s.Error != "":
		res.Verdict = s.Error
	case !res.Fits:
		res.Verdict = "the budget plus the CUDA context and graphs exceed the card: lower gpu_memory_utilization"
	default:
		res.Verdict = fmt.Sprintf("starts: %s tokens of KV cache, %.2f requests of %s tokens at once", num(s.KVCacheTokens), s.MaxConcurrency, num(int64(s.MaxModelLen)))
	}
}

// kvPool counts the KV cache's blocks and tokens and the requests it holds
// at max_model_len, as vLLM's KV cache manager does. With sliding-window
// layers (vLLM's hybrid allocator) the layers form groups of equal size
// sharing one pool of blocks, each block a page of every layer in a group:
// a full-attention group needs a request's whole length, a sliding group
// its window plus a step's tokens.
func (p *plan) kvPool(s *Serving, full, sliding, per int64) {
	bs := int64(s.BlockSize)
	L := int64(s.MaxModelLen)
	kv := s.KVCacheBytes
	need := func() string {
		return fmt.Sprintf("%s GiB KV cache is needed for one request of max_model_len %s tokens", strconv.FormatFloat(float64(s.RequestKVBytes)/float64(bytesize.GiB), 'f', 2, 64), num(L))
	}
	groupSize, groups := full+sliding, int64(1)
	perRequest := ceilDiv(L, bs)
	var fg, sg, window int64
	if sliding > 0 && full > 0 && p.r.Engine == EngineVLLM {
		groupSize = min(full, sliding)
		fg, sg = ceilDiv(full, groupSize), ceilDiv(sliding, groupSize)
		groups = fg + sg
		window = min(perRequest, ceilDiv(int64(p.m.SlidingWindow)-1+int64(s.MaxBatchedTokens), bs)+1)
		perRequest = fg*ceilDiv(L, bs) + sg*window
	}
	s.RequestKVBytes = mul(perRequest, bs, per, groupSize)
	if kv <= 0 || s.KVBytesPerToken == 0 {
		s.Error = "No available memory for the cache blocks: weights, the activation peak and non-torch memory exceed the budget. Raise gpu_memory_utilization, quantize, or add tensor parallelism."
		s.Formulas["kv_cache_tokens"] = "none: nothing is left for the cache"
		return
	}
	if groups > 1 {
		s.Formulas["kv_blocks"] = p.say("KV cache ÷ (block %d tokens × %s B × %d layers per group): %d full-attention and %d sliding-window groups share one pool", bs, num(per), groupSize, fg, sg)
		s.Formulas["max_concurrency"] = p.say("blocks ÷ (%d full groups × ⌈%s / %d⌉ + %d sliding groups × (⌈(window %d − 1 + %s batched tokens) / %d⌉ + 1)) blocks per request", fg, num(L), bs, sg, p.m.SlidingWindow, num(int64(s.MaxBatchedTokens)), bs)
	} else {
		s.Formulas["kv_blocks"] = p.say("KV cache ÷ (block %d tokens × %s B per token)", bs, num(s.KVBytesPerToken))
		s.Formulas["max_concurrency"] = p.say("tokens ÷ max_model_len %s", num(L))
	}
	s.KVBlocks = kv / mul(bs, per, groupSize)
	s.KVCacheTokens = s.KVBlocks / groups * bs
	s.Formulas["kv_cache_tokens"] = p.say("blocks ÷ %d group(s) × block size %d", groups, bs)
	s.MaxConcurrency = float64(s.KVBlocks) / float64(perRequest)
	if s.KVBlocks < perRequest {
		maxLen := s.KVCacheTokens
		s.Error = fmt.Sprintf("The KV cache cannot hold one request of max_model_len: %s, larger than the available %s GiB. The longest that fits is about %s tokens: lower max_model_len or raise gpu_memory_utilization.",
			need(), strconv.FormatFloat(float64(kv)/float64(bytesize.GiB), 'f', 2, 64), num(maxLen))
	}
}
