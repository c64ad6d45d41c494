package estimator

import "fmt"

// Rung is one rung of the fix ladder: a change to the request, the bytes it
// saves against the rung before, and the total after it. Fixes apply
// cumulatively, cheapest first; each saves bytes, and the last one listed is
// the first that fits (or none fits, when even the whole ladder falls short).
// In serve mode the total is what one max_model_len request needs of the
// engine's budget (weights, activation peak, non-torch memory and its KV
// cache), and raising the budget saves what it adds.
type Rung struct {
	// Name is a short label, e.g. "activation checkpointing".
	Name string `json:"name"`
	// Change says what the fix changes, e.g. "ckpt none → full".
	Change string `json:"change"`
	// FixID is the id of the fix in the shared catalog (package fixes),
	// whose code and guide section the pages show.
	FixID string `json:"fix_id"`
	// SavesBytes is how much closer to fitting the fix brings the request:
	// the previous shortfall minus this one.
	SavesBytes int64 `json:"saves_bytes"`
	// TotalBytes is the estimate with this and every earlier fix applied.
	TotalBytes int64 `json:"total_bytes"`
	// Fits reports whether TotalBytes fits the chosen GPU.
	Fits bool `json:"fits"`
	// Query is the request after the fix, as a URL query.
	Query string `json:"query"`
	// Request is the request after the fix.
	Request Request `json:"-"`
}

// candidate is a rung the ladder may apply: apply edits the request and says what changed,
// or returns "" when it does not apply.
type candidate struct {
	name  string
	apply func(p *plan) string
}

// swap is a rung that sets the field named by key to the value to: from
// any other value, or, when from is not "", only from that value. Its change
// reads "key old → to".
func swap(name, key, from, to string) candidate {
	return candidate{name, func(p *plan) string {
		old := p.r.Get(key)
		if old == to || from != "" && old != from || p.r.Set(key, to) != nil {
			return ""
		}
		return key + " " + old + " → " + to
	}}
}

// noting adds a detail of the changed request, in parentheses, to what the
// rung says it changed.
func (rg candidate) noting(detail func(r *Request) string) candidate {
	apply := rg.apply
	rg.apply = func(p *plan) string {
		change := apply(p)
		if change != "" {
			change += " (" + detail(&p.r) + ")"
		}
		return change
	}
	return rg
}

// trainLadder is the training fix ladder, ordered by cost to the user: a
// flag first, numerics next, then a different method, then more hardware.
var trainLadder = []candidate{
	{"micro-batch + accumulation", func(p *plan) string {
		if p.r.Batch == 1 {
			return ""
		}
		old, oldAcc := p.r.Batch, p.r.Accum
		p.r.Batch, p.r.Accum = 1, min(MaxAccum, p.r.Accum*old)
		return fmt.Sprintf("batch %d → 1, accum %d → %d (same global batch)", old, oldAcc, p.r.Accum)
	}},
	{"mixed precision", func(p *plan) string {
		if p.r.Dtype != DtypeFP32 || p.r.Autocast {
			return ""
		}
		p.r.Dtype, p.r.Autocast = DtypeBF16, true
		if !p.g.BF16 {
			p.r.Dtype = DtypeFP16
		}
		return fmt.Sprintf("fp32 → %s autocast (fp32 weights, 16-bit activations)", p.r.Dtype)
	}},
	swap("activation checkpointing", "ckpt", "", CkptFull),
	swap("chunked cross-entropy", "logits", "", LogitsChunked),
	swap("16-bit optimizer states", "optim_dtype", DtypeFP32, DtypeBF16),
	swap("8-bit optimizer", "optimizer", OptAdamW, OptAdamW8bit),
	swap("LoRA", "method", MethodFull, MethodLoRA).noting(func(r *Request) string {
		return fmt.Sprintf("rank %d, %s", r.LoraRank, r.LoraTargets)
	}),
	swap("QLoRA", "method", MethodLoRA, MethodQLoRA).noting(func(*Request) string { return "NF4 base" }),
	swap("CPU offload", "offload", OffloadNone, OffloadOptimizer).noting(func(*Request) string { return "optimizer states and gradients in host RAM" }),
	{"ZeRO-3 sharding", func(p *plan) string {
		// Shard over the GPUs given, or over as many as ZeRO-3 needs
		// when that is more.
		n := max(p.r.GPUs, p.gpusNeeded())
		if n <= 1 || p.r.Shard == ShardZero3 && n == p.r.GPUs {
			return ""
		}
		oldN, old := p.r.GPUs, p.r.Shard
		p.r.GPUs, p.r.Shard = n, ShardZero3
		return fmt.Sprintf("shard %s → zero3, gpus %d → %d", old, oldN, n)
	}},
	tensorParallel,
}

// tensorParallel is the rung that splits each layer over more GPUs: the
// smallest tensor-parallel size (2, 4 or 8, dividing the heads) that fits,
// or the largest tried. Training keeps its data-parallel replicas.
var tensorParallel = candidate{"tensor parallelism", func(p *plan) string {
	old, oldGPUs := p.r.TP, p.r.GPUs
	dp := max(1, p.r.GPUs/max(1, p.r.TP))
	best := 0
	for tp := 2; tp <= 8; tp *= 2 {
		if tp <= old || p.m.Heads%tp != 0 || (!p.m.MLA() && p.m.KVHeads > tp && p.m.KVHeads%tp != 0) {
			continue
		}
		best = tp
		q := *p
		q.r.TP = tp
		if q.train() {
			q.r.GPUs = dp * tp
		}
		if q.fits() {
			break
		}
	}
	if best == 0 {
		return ""
	}
	p.r.TP = best
	if !p.train() {
		return fmt.Sprintf("tp %d → %d", old, best)
	}
	p.r.GPUs = dp * best
	return fmt.Sprintf("tp %d → %d, gpus %d → %d", old, best, oldGPUs, p.r.GPUs)
}}

// quantize is a rung that stores weights kept in the dtype in a quantized
// format (a checkpoint already quantized is left alone).
func quantize(name, to string) candidate {
	return candidate{name, func(p *plan) string {
		if f, _, _ := p.weightFormat(); f != fmtDtype {
			return ""
		}
		old := p.r.Quant
		p.r.Quant = to
		return "quant " + old + " → " + to
	}}
}

// inferLadder is the inference fix ladder.
var inferLadder = []candidate{
	swap("smaller batch", "batch", "", "1"),
	swap("fp8 KV cache", "kv_dtype", "", KVFP8),
	quantize("8-bit weights", QuantInt8),
	swap("4-bit weights", "quant", "", QuantInt4),
	tensorParallel,
}

// serveLadder is the serving fix ladder: the engine's own knobs first,
// then smaller weights, more GPUs, and last a shorter max_model_len.
var serveLadder = []candidate{
	{"more of the card for the engine", func(p *plan) string {
		if p.r.GPUMemoryUtil >= 0.95 {
			return ""
		}
		old := p.r.Get("gpu_memory_utilization")
		p.r.GPUMemoryUtil = 0.95
		return "gpu_memory_utilization " + old + " → 0.95"
	}},
	swap("fp8 KV cache", "kv_dtype", "", KVFP8),
	{"smaller profile batch", func(p *plan) string {
		seqs, batched := p.servingDefaults()
		if seqs <= 256 && batched <= 2048 {
			return ""
		}
		p.r.MaxNumSeqs, p.r.MaxBatchedToks = min(seqs, 256), min(batched, 2048)
		return fmt.Sprintf("max_num_seqs %d → %d, max_num_batched_tokens %d → %d (a smaller start-up profile)", seqs, p.r.MaxNumSeqs, batched, p.r.MaxBatchedToks)
	}},
	quantize("FP8 weights", QuantFP8),
	{"4-bit weights (AWQ)", func(p *plan) string {
		if f, _, _ := p.weightFormat(); f == fmtInt4 || f == fmtNF4 || f == fmtMXFP4 {
			return ""
		}
		old := p.r.Quant
		p.r.Quant = QuantAWQ
		return "quant " + old + " → awq (a 4-bit AWQ checkpoint)"
	}},
	tensorParallel,
	{"shorter max_model_len", func(p *plan) string {
		s := p.probe().Serving
		if s.KVCacheTokens <= 0 || s.KVCacheTokens >= int64(s.MaxModelLen) {
			return ""
		}
		p.r.MaxModelLen = int(s.KVCacheTokens)
		return fmt.Sprintf("max_model_len %d → %d (the longest the KV cache holds)", s.MaxModelLen, p.r.MaxModelLen)
	}},
}

// fixes applies the ladder cumulatively to a request whose estimate is
// start. A rung is listed only when it lowers the total, so the totals fall
// rung by rung, and the ladder stops at the first rung that fits: it is empty
// when the request already fits.
func (p *plan) fixes(start *Result) []Rung {
	ladder := trainLadder
	switch {
	case p.serve():
		ladder = serveLadder
	case !p.train():
		ladder = inferLadder
	}
	cur := *p
	prev, fits := shortfall(start), start.Fits
	out := []Rung{} // JSON [] rather than null when nothing is needed
	for _, rg := range ladder {
		if fits {
			break
		}
		next := cur
		change := rg.apply(&next)
		if change == "" {
			continue
		}
		res := next.probe()
		short := shortfall(res)
		if short >= prev {
			continue // e.g. full checkpointing after selective with eager s² scores
		}
		out = append(out, Rung{
			Name: rg.name, Change: change, FixID: rungFix[rg.name],
			SavesBytes: prev - short, TotalBytes: needBytes(res), Fits: res.Fits,
			Query: next.r.QueryString(), Request: next.r,
		})
		prev, fits = short, res.Fits
		cur = next
	}
	return out
}

// needBytes is what must fit: the device readout, or in serve mode one
// max_model_len request's share of the engine's budget.
func needBytes(res *Result) int64 {
	if s := res.Serving; s != nil {
		return sum(s.WeightsBytes, s.ActivationPeakBytes, s.NonTorchBytes, s.RequestKVBytes)
	}
	return res.TotalBytes
}

// shortfall is how far a result is from fitting (negative when it fits).
func shortfall(res *Result) int64 {
	if s := res.Serving; s != nil {
		return needBytes(res) - s.BudgetBytes
	}
	return res.TotalBytes - res.UsableBytes
}
