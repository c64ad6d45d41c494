package estimator

import (
	"fmt"

	"oomscope/bytesize"
)

// NF4 storage (QLoRA with double quantization): 4 bits per weight, an 8-bit
// absmax per 64-weight block and an fp32 scale per 256 blocks.
func nf4Bytes(n int64) int64 {
	return sum(ceilDiv(n, 2), ceilDiv(n, 64), mul(4, ceilDiv(n, 64*256)))
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

// shardWords says how a model state is split over GPUs.
func (p *plan) shardDiv(sharded bool) (int64, string) {
	n := p.gpus()
	if !sharded || n == 1 {
		return 1, ""
	}
	return n, fmt.Sprintf(" ÷ %d GPUs (%s)", n, p.r.Shard)
}

func (p *plan) shardsWeights() bool { return p.train() && p.r.Shard == ShardZero3 }
func (p *plan) shardsGradients() bool {
	return p.shardsWeights() || p.train() && p.r.Shard == ShardZero2
}
func (p *plan) shardsOptimizer() bool {
	return p.shardsGradients() || p.train() && p.r.Shard == ShardZero1
}

// weights is the weights bucket.
func (p *plan) weights() Bucket {
	pb := p.paramBytes()
	params := p.params
	adapters := func() Term {
		n := p.loraParams()
		return Term{"lora adapters", mul(n, pb), fmt.Sprintf("%s adapter params × %d B", bytesize.Commas(n), pb)}
	}
	var terms []Term
	switch {
	case p.train() && p.r.Method == MethodQLoRA:
		q := p.linearWeights()
		rest := params - q
		terms = append(terms,
			Term{"nf4 base", nf4Bytes(q), fmt.Sprintf("%s linear weights in NF4 with double quantization (4 bits + an 8-bit absmax per 64 + an fp32 scale per 16,384 ≈ 4.13 bits)", bytesize.Commas(q))},
			Term{"unquantized rest", mul(rest, pb), fmt.Sprintf("%s embedding, lm_head, norm and bias params × %d B (%s)", bytesize.Commas(rest), pb, p.precisionWords())},
			Term{"dequant buffer", mul(p.largestMatrix, 2), fmt.Sprintf("the largest matrix (%s weights) dequantized to 16 bits × 2 B", bytesize.Commas(p.largestMatrix))},
			adapters())
	case p.train() && p.r.Method == MethodLoRA:
		terms = append(terms,
			Term{"frozen base", mul(params, pb), fmt.Sprintf("%s params × %d B (%s)", bytesize.Commas(params), pb, p.precisionWords())},
			adapters())
	case !p.train() && p.r.Quant != QuantNone:
		q := p.linearWeights()
		rest := params - q
		db := dtypeBytes(p.r.Dtype)
		terms = append(terms, p.quantTerm(q), Term{"unquantized rest", mul(rest, db), fmt.Sprintf("%s embedding, lm_head, norm and bias params × %d B (%s)", bytesize.Commas(rest), db, p.r.Dtype)})
	default:
		terms = append(terms, Term{"weights", mul(params, pb), fmt.Sprintf("%s params × %d B (%s)", bytesize.Commas(params), pb, p.precisionWords())})
	}
	div, words := p.shardDiv(p.shardsWeights())
	if div > 1 {
		// The stored weights are sharded; the dequantization temporary is
		// a per-GPU working buffer and is not.
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
		terms = append([]Term{
			{"sharded weights", ceilDiv(whole, div), fmt.Sprintf("(%s)%s", joinFormulas(stored...), words)},
			{"gather buffers", mul(2, unit), fmt.Sprintf("2 × the largest unit (%s = %s B) gathered for the current and the prefetched layer", unitWords, bytesize.Commas(unit))},
		}, local...)
	}
	return bucket(BucketWeights, joinFormulas(terms...), terms...)
}

// gatherUnit is the largest unit FSDP / ZeRO-3 gathers whole, in the bytes
// it is stored in: the token embedding (never quantized) or one decoder
// layer with its adapters, whose linear weights are NF4 under QLoRA. It
// returns the bytes and how they were counted.
func (p *plan) gatherUnit() (int64, string) {
	pb := p.paramBytes()
	emb := p.m.EmbeddingParams()
	best := mul(emb, pb)
	words := fmt.Sprintf("the embedding, %s params × %d B", bytesize.Commas(emb), pb)
	rank := int64(p.r.LoraRank)
	for _, k := range p.kinds {
		var linear, adapters int64
		for _, l := range k.Linears {
			linear = sum(linear, mul(int64(l.Count), int64(l.In), int64(l.Out)))
			if p.adapted(l) {
				adapters = sum(adapters, mul(int64(l.Count), rank, int64(l.In)+int64(l.Out)))
			}
		}
		params := sum(k.Params(), adapters)
		b := mul(params, pb)
		w := fmt.Sprintf("one decoder layer, %s params × %d B", bytesize.Commas(params), pb)
		if p.train() && p.r.Method == MethodQLoRA {
			rest := params - linear
			b = sum(nf4Bytes(linear), mul(rest, pb))
			w = fmt.Sprintf("one decoder layer, %s linear weights in NF4 + %s norm, bias and adapter params × %d B", bytesize.Commas(linear), bytesize.Commas(rest), pb)
		}
		if b > best {
			best, words = b, w
		}
	}
	return best, words
}

// quantTerm sizes the quantized linear weights for inference.
func (p *plan) quantTerm(q int64) Term {
	var scales int64
	for _, k := range p.kinds {
		for _, l := range k.Linears {
			n := mul(int64(k.Count), int64(l.Count))
			switch p.r.Quant {
			case QuantInt8:
				scales = sum(scales, mul(n, int64(l.Out), 2))
			case QuantInt4:
				scales = sum(scales, fraction(mul(n, ceilDiv(int64(l.In), 128), int64(l.Out)), 5, 2))
			case QuantFP8:
				scales = sum(scales, mul(n, 4))
			}
		}
	}
	switch p.r.Quant {
	case QuantInt8:
		return Term{"int8 linears", sum(q, scales), fmt.Sprintf("%s linear weights × 1 B + a 16-bit scale per output channel", bytesize.Commas(q))}
	case QuantInt4:
		return Term{"int4 linears", sum(ceilDiv(q, 2), scales), fmt.Sprintf("%s linear weights × 0.5 B + a 16-bit scale and 4-bit zero per 128-weight group", bytesize.Commas(q))}
	}
	return Term{"fp8 linears", sum(q, scales), fmt.Sprintf("%s linear weights × 1 B (fp8) + an fp32 scale per matrix", bytesize.Commas(q))}
}

// gradients is the gradients bucket.
func (p *plan) gradients() Bucket {
	if !p.train() {
		return Bucket{Name: BucketGradients, Formula: "none: inference keeps no gradients"}
	}
	pb := p.paramBytes()
	n := p.trainableParams()
	t := Term{"gradients", mul(n, pb), fmt.Sprintf("%s trainable params × %d B", bytesize.Commas(n), pb)}
	div, words := p.shardDiv(p.shardsGradients())
	if div > 1 {
		t = Term{"sharded gradients", ceilDiv(t.Bytes, div), t.Formula + words}
		return bucket(BucketGradients, "", t)
	}
	terms := []Term{t}
	// The bucket copy is a PyTorch DDP detail the textbook (paper mode)
	// accounting of model states leaves out.
	if p.gpus() > 1 && (p.r.Shard == ShardDDP || p.r.Shard == ShardNone) && p.r.Activations == ActivationsTally {
		terms = append(terms, Term{"ddp buckets", t.Bytes, "DDP's gradient buckets, a second copy of the gradients (gradient_as_bucket_view=False)"})
	}
	return bucket(BucketGradients, joinFormulas(terms...), terms...)
}

// stateBytes is the size of one optimizer state element: torch.optim keeps
// states in the parameter dtype, so fp32 with master weights or fp32 params.
func (p *plan) stateBytes() int64 {
	if p.r.Master {
		return 4
	}
	return p.paramBytes()
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
	emb := int64(p.m.Vocab + p.m.Hidden)
	if p.m.LearnedPositions {
		emb += int64(p.m.MaxPositions + p.m.Hidden)
	}
	if !p.m.TiedEmbeddings {
		emb += int64(p.m.Vocab + p.m.Hidden)
	}
	n = sum(n, emb, p.m.normParams(), p.m.VisionParams)
	return n, "rows + columns per weight matrix, full size for vectors (vision tower counted in full)"
}

// optimizer is the optimizer bucket: fp32 master weights and states.
func (p *plan) optimizer() Bucket {
	if !p.train() {
		return Bucket{Name: BucketOptimizer, Formula: "none: inference has no optimizer"}
	}
	n := p.trainableParams()
	sb := p.stateBytes()
	var terms []Term
	if p.r.Master {
		terms = append(terms, Term{"master weights", mul(n, 4), fmt.Sprintf("%s trainable params × 4 B (fp32 master copy)", bytesize.Commas(n))})
	}
	switch p.r.Optimizer {
	case OptAdamW:
		terms = append(terms, Term{"adamw states", mul(n, 2, sb), fmt.Sprintf("%s × 2 states (momentum, variance) × %d B", bytesize.Commas(n), sb)})
	case OptAdamW8bit:
		terms = append(terms, Term{"adamw-8bit states", sum(mul(n, 2), mul(8, ceilDiv(n, 256))), fmt.Sprintf("%s × 2 int8 states + an fp32 absmax per 256-value block each", bytesize.Commas(n))})
	case OptSGDMomentum:
		terms = append(terms, Term{"momentum", mul(n, sb), fmt.Sprintf("%s × 1 momentum state × %d B", bytesize.Commas(n), sb)})
	case OptLion:
		terms = append(terms, Term{"lion momentum", mul(n, sb), fmt.Sprintf("%s × 1 momentum state × %d B", bytesize.Commas(n), sb)})
	case OptAdafactor:
		f, how := p.factoredStates()
		terms = append(terms, Term{"adafactor states", mul(f, sb), fmt.Sprintf("%s factored second-moment values (%s) × %d B", bytesize.Commas(f), how, sb)})
	}
	div, words := p.shardDiv(p.shardsOptimizer())
	if div > 1 {
		whole := Term{"sharded optimizer", 0, "(" + joinFormulas(terms...) + ")" + words}
		for _, t := range terms {
			whole.Bytes = sum(whole.Bytes, t.Bytes)
		}
		whole.Bytes = ceilDiv(whole.Bytes, div)
		return bucket(BucketOptimizer, "", whole)
	}
	b := bucket(BucketOptimizer, joinFormulas(terms...), terms...)
	if len(b.Terms) == 0 {
		b.Formula = "none: plain SGD keeps no state"
	}
	return b
}
