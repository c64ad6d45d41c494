package estimator

import ()

// Model states: weights, gradients and optimizer states, per GPU and, with
// offload, in host RAM (docs/estimator.md#2-weights, docs/estimator.md#5-gradients-optimizer-states-and-precision, docs/estimator.md#6-sharding-tensor-parallelism-and-offload).

// NF4 storage (QLoRA with double quantization): 4 bits per weight, an 8-bit
// absmax per 64-weight block and an fp32 scale per 256 blocks.
func nf4Bytes(n int64) int64 {
	return sum(ceilDiv(n, 2), ceilDiv(n, 64), mul(4, ceilDiv(n, 64*256)))
}

// Weight formats a linear can be stored in (docs/estimator.md#2-weights).
const (
	fmtDtype = "dtype"
	fmtFP8   = "fp8"
	fmtInt8  = "int8"
	fmtInt4  = "int4" // AWQ and GPTQ store the same way
	fmtNF4   = "nf4"
	fmtMXFP4 = "mxfp4"
)

// linearBytes is the stored size of count in×out matrices in a format.
func linearBytes(format string, in, out, count, dtype int64) int64 {
	n := mul(in, out, count)
	switch format {
	case fmtFP8: // 1 B + an fp32 scale per output channel
		return sum(n, mul(out, count, 4))
	case fmtInt8: // 1 B + a 16-bit scale per output channel
		return sum(n, mul(out, count, 2))
	case fmtInt4: // 0.5 B + a 16-bit scale and a 4-bit zero per 128 inputs
		return sum(ceilDiv(n, 2), fraction(mul(ceilDiv(in, 128), out, count), 5, 2))
	case fmtNF4:
		return nf4Bytes(n)
	case fmtMXFP4: // 0.5 B + an 8-bit shared exponent per 32 inputs
		return sum(ceilDiv(n, 2), mul(ceilDiv(in, 32), out, count))
	}
	return mul(n, dtype)
}

// formatWords describes a weight format for formulas.
var formatWords = map[string]string{
	fmtFP8:   "FP8: 1 B + an fp32 scale per output channel",
	fmtInt8:  "int8: 1 B + a 16-bit scale per output channel",
	fmtInt4:  "4-bit: 0.5 B + a 16-bit scale and a 4-bit zero per 128 inputs",
	fmtNF4:   "NF4 with double quantization: 4 bits + an 8-bit absmax per 64 + an fp32 scale per 16,384 ≈ 4.13 bits",
	fmtMXFP4: "MXFP4: 4 bits + an 8-bit shared exponent per 32 ≈ 4.25 bits",
}

// weightFormat resolves how the decoder linears are stored for inference
// and serving: the quant field, or with auto the checkpoint's own format,
// and whether it applies to the routed experts only (gpt-oss's MXFP4).
func (p *plan) weightFormat() (format string, expertsOnly bool, words string) {
	q := p.r.Quant
	if q == QuantAuto {
		switch p.m.CheckpointQuant {
		case "fp8", "fbgemm_fp8", "compressed-tensors":
			return fmtFP8, false, "the checkpoint's FP8 (its quantization_config)"
		case "mxfp4":
			return fmtMXFP4, true, "the checkpoint's MXFP4 experts (its quantization_config)"
		case "awq", "gptq", "awq_marlin", "gptq_marlin":
			return fmtInt4, false, "the checkpoint's " + p.m.CheckpointQuant + " 4-bit (its quantization_config)"
		case "bitsandbytes":
			return fmtNF4, false, "the checkpoint's bitsandbytes 4-bit (its quantization_config)"
		}
		return fmtDtype, false, ""
	}
	switch q {
	case QuantFP8:
		return fmtFP8, false, "fp8"
	case QuantInt8:
		return fmtInt8, false, "int8"
	case QuantInt4, QuantAWQ, QuantGPTQ:
		return fmtInt4, false, q
	case QuantBnB:
		return fmtNF4, false, "bitsandbytes"
	}
	return fmtDtype, false, ""
}

// linearWeights counts the weights (no biases) of the decoder layers'
// linears, the part quantization applies to.
func (p *plan) linearWeights() int64 {
	var n int64
	for _, k := range p.kinds {
		for _, l := range k.Linears {
			n = sum(n, mul(int64(k.Count), int64(l.Count), int64(l.In), int64(l.Out)))
		}
	}
	return n
}

// shardDiv says how a model state is split over the data-parallel ranks.
func (p *plan) shardDiv(sharded bool) (int64, string) {
	n := p.gpus()
	if !sharded || n == 1 {
		return 1, ""
	}
	return n, p.say(" ÷ %d data-parallel ranks (%s)", n, p.r.Shard)
}

func (p *plan) shardsWeights() bool { return p.train() && p.r.Shard == ShardZero3 }
func (p *plan) shardsGradients() bool {
	return p.shardsWeights() || p.train() && p.r.Shard == ShardZero2
}
func (p *plan) shardsOptimizer() bool {
	return p.shardsGradients() || p.train() && p.r.Shard == ShardZero1
}

// offloads reports whether model states move to host RAM: the optimizer
// (states, master weights, gradients) or also the parameters.
func (p *plan) offloads(what string) bool {
	if !p.train() || p.r.Offload == OffloadNone {
		return false
	}
	return what == OffloadOptimizer || p.r.Offload == OffloadParams
}

// tpSplit divides bytes of model states over the tensor-parallel ranks:
// the decoder matrices and the (vocabulary-parallel) embeddings split, the
// norms (repl bytes) are replicated on every rank.
func (p *plan) tpSplit(t Term, repl int64) Term {
	tp := p.tp()
	if tp == 1 {
		return t
	}
	repl = min(repl, t.Bytes)
	t.Bytes = sum(ceilDiv(t.Bytes-repl, tp), repl)
	t.Formula = p.say("(%s) split over tp %d, norms replicated", t.Formula, tp)
	return t
}

// normParamsAll counts the norm and other small per-layer parameters that
// tensor parallelism replicates.
func (p *plan) normParamsAll() int64 {
	n := p.m.normParams()
	for _, k := range p.kinds {
		n = sum(n, mul(int64(k.Count), k.Other))
	}
	return n
}

// weights is the weights bucket on the GPU and what offload moves to the host.
func (p *plan) weights() (Bucket, []Term) {
	pb := p.paramBytes()
	params := p.params
	adapters := func() Term {
		n := p.loraParams()
		return Term{"lora adapters", mul(n, pb), p.say("%s adapter params × %d B", num(n), pb)}
	}
	repl := mul(p.normParamsAll(), pb)
	var terms []Term
	switch {
	case p.r.CheckpointBytes > 0 && !p.train():
		terms = append(terms, Term{"checkpoint", p.r.CheckpointBytes, p.say("the checkpoint's stored bytes (%s B, from its index or header; the config counts %s params)",
			num(p.r.CheckpointBytes), num(params))})
	case p.train() && p.r.Method == MethodQLoRA:
		q := p.linearWeights()
		rest := params - q
		terms = append(terms,
			Term{"nf4 base", nf4Bytes(q), p.say("%s linear weights in %s", num(q), formatWords[fmtNF4])},
			Term{"unquantized rest", mul(rest, pb), p.say("%s embedding, lm_head, norm and bias params × %d B (%s)", num(rest), pb, p.precisionWords())},
			adapters())
	case p.train() && p.r.Method == MethodLoRA:
		terms = append(terms,
			Term{"frozen base", mul(params, pb), p.say("%s params × %d B (%s)", num(params), pb, p.precisionWords())},
			adapters())
	case !p.train():
		terms = append(terms, p.inferenceWeights()...)
	default:
		terms = append(terms, Term{"weights", mul(params, pb), p.say("%s params × %d B (%s)", num(params), pb, p.precisionWords())})
	}
	for i := range terms {
		terms[i] = p.tpSplit(terms[i], repl)
	}
	if p.train() && p.r.Method == MethodQLoRA {
		// A per-GPU working buffer, never sharded.
		terms = append(terms, Term{"dequant buffer", mul(p.largestMatrix, 2), p.say("the largest matrix (%s weights) dequantized to 16 bits × 2 B", num(p.largestMatrix))})
	}
	var host []Term
	div, words := p.shardDiv(p.shardsWeights())
	if div > 1 || p.offloads(OffloadParams) {
		// The stored weights are sharded or in host RAM; the GPU gathers
		// one unit at a time, with the next prefetched.
		var whole int64
		var stored, local []Term
		for _, t := range terms {
			if t.Name == "dequant buffer" {
				local = append(local, t)
				continue
			}
			stored = append(stored, t)
			whole = sum(whole, t.Bytes)
		}
		unit, unitWords := p.gatherUnit()
		shard := Term{"sharded weights", ceilDiv(whole, div), p.say("(%s)%s", joinFormulas(stored...), words)}
		gather := Term{"gather buffers", mul(2, unit), p.say("2 × the largest unit (%s = %s B) gathered for the current and the prefetched layer", unitWords, num(unit))}
		terms = append([]Term{shard, gather}, local...)
		if p.offloads(OffloadParams) {
			shard.Name = "offloaded weights"
			host = append(host, shard)
			terms = append([]Term{gather}, local...)
		}
	}
	b := bucket(BucketWeights, joinFormulas(terms...), terms...)
	if p.offloads(OffloadParams) {
		b.Formula += " (the weights live in host RAM: CPU offload)"
	}
	return b, host
}

// inferenceWeights sizes the weights of inference and serving in the
// resolved weight format: quantized decoder linears, the rest in dtype.
func (p *plan) inferenceWeights() []Term {
	db := dtypeBytes(p.r.Dtype)
	params := p.params
	format, expertsOnly, words := p.weightFormat()
	if format == fmtDtype {
		return []Term{{"weights", mul(params, db), p.say("%s params × %d B (%s)", num(params), db, p.r.Dtype)}}
	}
	// vLLM's MXFP4 kernels pad each rank's expert width to a multiple of
	// 256 (2,880 → 3,072 for gpt-oss).
	I, padded := int64(p.m.ExpertIntermediate), int64(p.m.ExpertIntermediate)
	if format == fmtMXFP4 && p.serve() && p.r.Engine == EngineVLLM {
		padded = roundUp(ceilDiv(I, p.tp()), 256) * p.tp()
	}
	var q, qb int64
	for _, k := range p.kinds {
		for _, l := range k.Linears {
			if expertsOnly && l.Group != groupExpert {
				continue
			}
			in, out := int64(l.In), int64(l.Out)
			if l.Group == groupExpert && padded != I {
				if isDown(l) {
					in = padded
				} else {
					out = out / I * padded
				}
			}
			q = sum(q, mul(int64(k.Count), int64(l.Count), int64(l.In), int64(l.Out)))
			qb = sum(qb, mul(int64(k.Count), linearBytes(format, in, out, int64(l.Count), db)))
		}
	}
	what := "linear weights"
	if expertsOnly {
		what = "expert weights"
	}
	if padded != I {
		words += p.say("; vLLM pads the expert width %s to %s per rank", num(I), num(padded/p.tp()))
	}
	rest := params - q
	return []Term{
		{"quantized linears", qb, p.say("%s %s in %s (%s)", num(q), what, formatWords[format], words)},
		{"unquantized rest", mul(rest, db), p.say("%s embedding, lm_head, norm, bias and other params × %d B (%s)", num(rest), db, p.r.Dtype)},
	}
}

// gatherUnit is the largest unit FSDP / ZeRO-3 gathers whole, in the bytes
// it is stored in: the token embedding (never quantized) or one decoder
// layer with its adapters, whose linear weights are NF4 under QLoRA. It
// returns the bytes and how they were counted.
func (p *plan) gatherUnit() (int64, string) {
	pb := p.paramBytes()
	emb := ceilDiv(p.m.EmbeddingParams(), p.tp())
	best := mul(emb, pb)
	words := p.say("the embedding, %s params × %d B", num(emb), pb)
	rank := int64(p.r.LoraRank)
	for _, k := range p.kinds {
		var linear, adapters int64
		for _, l := range k.Linears {
			linear = sum(linear, mul(int64(l.Count), int64(l.In), int64(l.Out)))
			if p.adapted(l) {
				adapters = sum(adapters, mul(int64(l.Count), rank, int64(l.In)+int64(l.Out)))
			}
		}
		linear = ceilDiv(linear, p.tp())
		params := sum(ceilDiv(k.Params()-k.Other, p.tp()), k.Other, ceilDiv(adapters, p.tp()))
		b := mul(params, pb)
		w := p.say("one decoder layer, %s params × %d B", num(params), pb)
		if p.train() && p.r.Method == MethodQLoRA {
			rest := params - linear
			b = sum(nf4Bytes(linear), mul(rest, pb))
			w = p.say("one decoder layer, %s linear weights in NF4 + %s norm, bias and adapter params × %d B", num(linear), num(rest), pb)
		}
		if b > best {
			best, words = b, w
		}
	}
	return best, words
}

// gradients is the gradients bucket on the GPU and what offload moves to
// the host.
func (p *plan) gradients() (Bucket, []Term) {
	if !p.train() {
		return Bucket{Name: BucketGradients, Formula: "none: inference keeps no gradients"}, nil
	}
	pb := p.paramBytes()
	n := p.trainableParams()
	t := Term{"gradients", mul(n, pb), p.say("%s trainable params × %d B", num(n), pb)}
	if p.full() {
		t = p.tpSplit(t, mul(p.normParamsAll(), pb))
	} else if p.tp() > 1 {
		t = Term{t.Name, ceilDiv(t.Bytes, p.tp()), p.say("(%s) ÷ tp %d", t.Formula, p.tp())}
	}
	div, words := p.shardDiv(p.shardsGradients())
	if div > 1 {
		t = Term{"sharded gradients", ceilDiv(t.Bytes, div), t.Formula + words}
	}
	if p.offloads(OffloadOptimizer) {
		// Gradients are reduced into host RAM; the GPU stages them one
		// unit at a time.
		unit, unitWords := p.gatherUnit()
		staging := Term{"gradient staging", min(t.Bytes, mul(2, unit)), p.say("2 × the largest unit's gradients (%s) staged before the copy to host RAM", unitWords)}
		host := Term{"offloaded gradients", t.Bytes, t.Formula}
		return bucket(BucketGradients, staging.Formula+" (the gradients live in host RAM: CPU offload)", staging), []Term{host}
	}
	if div > 1 {
		return bucket(BucketGradients, "", t), nil
	}
	terms := []Term{t}
	// The bucket copy is a PyTorch DDP detail the textbook (paper mode)
	// accounting of model states leaves out.
	if p.gpus() > 1 && (p.r.Shard == ShardDDP || p.r.Shard == ShardNone) && p.r.Activations == ActivationsTally {
		terms = append(terms, Term{"ddp buckets", t.Bytes, "DDP's gradient buckets, a second copy of the gradients (gradient_as_bucket_view=False)"})
	}
	return bucket(BucketGradients, joinFormulas(terms...), terms...), nil
}

// stateDtype is the size of one optimizer state element and how it is
// chosen: optim_dtype, or as torch.optim does, the parameter dtype (fp32
// with master weights). eightBit marks blockwise 8-bit states (an fp32
// absmax per 256 values).
func (p *plan) stateDtype() (bytes int64, eightBit bool, words string) {
	switch {
	case p.r.Optimizer == OptAdamW8bit || p.r.OptimDtype == OptimDtype8bit:
		return 1, true, "int8 + an fp32 absmax per 256-value block (bitsandbytes)"
	case p.r.OptimDtype == DtypeFP32:
		return 4, false, "fp32 (optim_dtype)"
	case p.r.OptimDtype == DtypeBF16:
		return 2, false, "bf16 (optim_dtype)"
	case p.r.Master:
		return 4, false, "fp32, the master weights' dtype"
	}
	b := p.paramBytes()
	return b, false, p.say("%s, the parameters' dtype (PyTorch's default)", map[int64]string{4: "fp32", 2: "16-bit"}[b])
}

// stateTerm is k optimizer states of n values each.
func (p *plan) stateTerm(name string, k, n int64, what string) Term {
	sb, eight, words := p.stateDtype()
	if eight {
		return Term{name, mul(k, sum(n, mul(4, ceilDiv(n, 256)))), p.say("%s × %d %s × %s", num(n), k, what, words)}
	}
	return Term{name, mul(k, n, sb), p.say("%s × %d %s × %d B: %s", num(n), k, what, sb, words)}
}

// factoredStates counts Adafactor's state elements: a row and a column
// vector per weight matrix, full size for vectors.
func (p *plan) factoredStates() (int64, string) {
	if p.peft() {
		var n int64
		r := int64(p.r.LoraRank)
		for _, k := range p.kinds {
			for _, l := range k.Linears {
				if p.adapted(l) {
					n = sum(n, mul(int64(k.Count), int64(l.Count), r+int64(l.In)+int64(l.Out)+r))
				}
			}
		}
		return n, "(r + d_in) + (d_out + r) per adapter pair"
	}
	var n int64
	for _, k := range p.kinds {
		one := k.Other
		for _, l := range k.Linears {
			one = sum(one, mul(int64(l.Count), int64(l.In)+int64(l.Out)))
			if l.Bias {
				one = sum(one, mul(int64(l.Count), int64(l.Out)))
			}
		}
		n = sum(n, mul(int64(k.Count), one))
	}
	emb := int64(p.m.Vocab + p.m.ExtraTokens + p.m.Hidden)
	if p.m.LearnedPositions {
		emb += int64(p.m.MaxPositions + p.m.Hidden)
	}
	if !p.m.TiedEmbeddings {
		emb += int64(p.m.Vocab + p.m.Hidden)
	}
	n = sum(n, emb, p.m.normParams(), p.m.VisionParams)
	return n, "rows + columns per weight matrix, full size for vectors (vision tower counted in full)"
}

// optimizer is the optimizer bucket (fp32 master weights and states) on
// the GPU and what offload moves to the host.
func (p *plan) optimizer() (Bucket, []Term) {
	if !p.train() {
		return Bucket{Name: BucketOptimizer, Formula: "none: inference has no optimizer"}, nil
	}
	n := ceilDiv(p.trainableParams(), p.tp())
	var terms []Term
	if p.r.Master {
		terms = append(terms, Term{"master weights", mul(n, 4), p.say("%s trainable params × 4 B (fp32 master copy)", num(n))})
	}
	switch p.r.Optimizer {
	case OptAdamW, OptAdamW8bit:
		terms = append(terms, p.stateTerm(p.r.Optimizer+" states", 2, n, "states (momentum, variance)"))
	case OptSGDMomentum:
		terms = append(terms, p.stateTerm("momentum", 1, n, "momentum state"))
	case OptLion:
		terms = append(terms, p.stateTerm("lion momentum", 1, n, "momentum state"))
	case OptAdafactor:
		f, how := p.factoredStates()
		t := p.stateTerm("adafactor states", 1, ceilDiv(f, p.tp()), "factored second moment ("+how+")")
		terms = append(terms, t)
	}
	if p.tp() > 1 {
		for i := range terms {
			terms[i].Formula += p.say(" (trainable params ÷ tp %d)", p.tp())
		}
	}
	div, words := p.shardDiv(p.shardsOptimizer())
	if div > 1 {
		whole := Term{"sharded optimizer", 0, "(" + joinFormulas(terms...) + ")" + words}
		for _, t := range terms {
			whole.Bytes = sum(whole.Bytes, t.Bytes)
		}
		whole.Bytes = ceilDiv(whole.Bytes, div)
		terms = []Term{whole}
	}
	if p.offloads(OffloadOptimizer) {
		host := make([]Term, len(terms))
		for i, t := range terms {
			host[i] = Term{"offloaded " + t.Name, t.Bytes, t.Formula}
		}
		return Bucket{Name: BucketOptimizer, Formula: "none on the GPU: the optimizer states live in host RAM and the step runs on the CPU (offload)"}, host
	}
	b := bucket(BucketOptimizer, joinFormulas(terms...), terms...)
	if len(b.Terms) == 0 {
		b.Formula = "none: plain SGD keeps no state"
	}
	return b, nil
}
