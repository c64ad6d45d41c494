package estimator

import (
	"fmt"
	"strconv"
	"strings"

	"oomscope/bytesize"
)

// Names of linears whose input is the block's MLP output side (down
// projections): they read the MLP's inner width, not the normed hidden state.
func isDown(l Linear) bool {
	return l.Name == "down_proj" || l.Name == "w2" || (l.Name == "c_proj" && l.Group != groupAttention)
}

// isAttnOut reports the attention output projection.
func isAttnOut(l Linear) bool {
	return l.Group == groupAttention && (l.Name == "o_proj" || l.Name == "c_proj")
}

// eagerScores reports whether the s² attention tensors are stored: eager
// attention without selective recomputation.
func (p *plan) eagerScores() bool { return p.r.Attn == AttnEager && p.r.Ckpt != CkptSelective }

// normInBytes is what a norm keeps of each input element for backward:
// RMSNorm upcasts its input to fp32 and keeps that; LayerNorm keeps its input
// as is.
func (p *plan) normInBytes() int64 {
	if p.m.NormBias {
		return p.actBytes()
	}
	return 4
}

// tally is the per-token byte count of one decoder layer's saved tensors,
// with the parts named for the formula.
type tally struct {
	perToken int64
	parts    []string
}

func (t *tally) add(n int64, what string) {
	if n <= 0 {
		return
	}
	t.perToken += n
	t.parts = append(t.parts, fmt.Sprintf("%s %s", what, bytesize.Commas(n)))
}

// layerTally counts, per token, the tensors one decoder layer of kind k
// keeps for backward in a Hugging Face / torchtune block: RMSNorm's fp32
// input copy and (when a trained weight reads it) its normalized output;
// q, k, v and the attention output kept by SDPA/flash plus its fp32
// log-sum-exp; the o_proj input; the SwiGLU gate, activation, up and
// product tensors; MoE routing; LoRA's r-wide intermediates.
func (p *plan) layerTally(k LayerKind) tally {
	m := &p.m
	e := p.actBytes()
	h := int64(m.Hidden)
	var t tally
	anyTrains := func(pred func(Linear) bool) bool {
		for _, l := range k.Linears {
			if pred(l) && p.trains(l) {
				return true
			}
		}
		return false
	}
	normIn := p.normInBytes()
	normOut := func(needed bool) int64 {
		if needed {
			return e
		}
		return 0
	}
	full := p.full()
	attnIn := anyTrains(func(l Linear) bool {
		return l.Group == groupAttention && !isAttnOut(l) && l.Name != "q_b_proj" && l.Name != "kv_b_proj"
	})
	t.add(h*(normIn+normOut(full || attnIn)), "attention norm")
	if extra := int64(m.NormsPerLayer - 2); extra > 0 {
		t.add(extra*h*(4+normOut(full)), "post norms")
	}
	a := int64(m.Heads)
	dq, dv := int64(m.qkHeadDim()), int64(m.vHeadDim())
	kvA := int64(m.attnKVHeads())
	if p.r.Attn == AttnEager && !m.MLA() {
		kvA = a // eager attention repeats K/V to every query head
	}
	qD, kD, vD, oD := a*dq, kvA*dq, kvA*dv, a*dv
	if m.QKNorm {
		t.add((qD+int64(m.KVHeads)*dq)*(4+normOut(full)), "q/k norms")
	}
	if m.MLA() {
		qb := anyTrains(func(l Linear) bool { return l.Name == "q_b_proj" })
		kvb := anyTrains(func(l Linear) bool { return l.Name == "kv_b_proj" })
		t.add(int64(m.QLoraRank)*(4+normOut(full || qb))+int64(m.KVLoraRank)*(4+normOut(full || kvb)), "latent norms")
	}
	t.add(e*(qD+kD+vD+oD), "q, k, v, attention output")
	if p.r.Attn == AttnSDPA {
		t.add(4*a, "fp32 log-sum-exp")
	}
	if anyTrains(isAttnOut) {
		t.add(e*oD, "o_proj input")
	}
	mlpIn := anyTrains(func(l Linear) bool { return l.Group != groupAttention && !isDown(l) })
	t.add(h*(normIn+normOut(full || mlpIn)), "MLP norm")
	mlp := func(width int64, group string) int64 {
		down := anyTrains(func(l Linear) bool { return l.Group == group && isDown(l) })
		n := e * width // input of the activation function
		if m.GatedMLP {
			n = 3 * e * width // gate, activation output, up
		}
		if down {
			n += e * width // product read by the down projection
		}
		return n
	}
	moe := false
	for _, l := range k.Linears {
		if l.Group == groupExpert {
			moe = true
		}
	}
	if moe {
		topk := int64(m.ExpertsPerToken)
		t.add(4*int64(m.Experts)+4*topk, "router probabilities")
		if anyTrains(func(l Linear) bool { return l.Group == groupExpert && !isDown(l) }) {
			t.add(topk*h*e, "expert inputs")
		}
		t.add(topk*mlp(int64(m.ExpertIntermediate), groupExpert), "expert MLPs")
		// Each expert output is multiplied by its routing weight; both need
		// gradients (the hidden state does even when the router is frozen),
		// so the product keeps the outputs.
		t.add(topk*h*e, "expert outputs")
		if m.SharedExperts > 0 {
			t.add(mlp(int64(m.ExpertIntermediate*m.SharedExperts), groupShared), "shared expert")
		}
	} else {
		t.add(mlp(int64(m.Intermediate), groupMLP), "MLP")
	}
	if p.peft() {
		var n int64
		for _, l := range k.Linears {
			if p.adapted(l) {
				f := int64(1)
				if l.Group == groupExpert {
					f = int64(m.ExpertsPerToken)
				}
				n += f * e * int64(p.r.LoraRank)
			}
		}
		t.add(n, "LoRA intermediates")
	}
	return t
}

// eagerLayerBytes is what eager attention adds per layer: the fp32 softmax
// output and its 16-bit copy for the value matmul, b·a·s² each.
func (p *plan) eagerLayerBytes() int64 {
	if !p.eagerScores() {
		return 0
	}
	return mul(int64(p.r.Batch), int64(p.m.Heads), int64(p.r.Seq), int64(p.r.Seq), 4+p.actBytes())
}

// activations is the activations bucket.
func (p *plan) activations() Bucket {
	if !p.train() {
		return p.inferenceActivations()
	}
	if p.r.Activations == ActivationsPaper {
		return p.paperActivations()
	}
	T := p.tokens()
	e := p.actBytes()
	h := int64(p.m.Hidden)
	finalPer := h * p.normInBytes()
	if p.full() {
		finalPer += h * e // its output, read by the trained lm_head
	}
	final := Term{"final norm", mul(T, finalPer), fmt.Sprintf("final norm %s B per token × %s tokens", bytesize.Commas(finalPer), bytesize.Commas(T))}
	var terms []Term
	var biggest int64
	var biggestWords string
	for _, k := range p.kinds {
		t := p.layerTally(k)
		one := sum(mul(T, t.perToken), p.eagerLayerBytes())
		words := fmt.Sprintf("%s B per token (%s) × %s tokens", bytesize.Commas(t.perToken), strings.Join(t.parts, " + "), bytesize.Commas(T))
		if p.eagerScores() {
			words += fmt.Sprintf(" + eager scores b·a·s²·%d B", 4+e)
		}
		if one > biggest {
			biggest, biggestWords = one, words
		}
		if p.r.Ckpt != CkptFull {
			name := "decoder layers"
			if len(p.kinds) > 1 && k.Linears[len(k.Linears)-1].Group != groupMLP {
				name = "moe layers"
			} else if len(p.kinds) > 1 {
				name = "dense layers"
			}
			terms = append(terms, Term{name, mul(int64(k.Count), one), fmt.Sprintf("%d layers × (%s)", k.Count, words)})
		}
	}
	if p.r.Ckpt == CkptFull {
		terms = append(terms,
			Term{"checkpointed inputs", mul(int64(p.m.Layers), T, h, e), fmt.Sprintf("%d layers × %s tokens × h %s × %d B (each layer's input)", p.m.Layers, bytesize.Commas(T), bytesize.Commas(h), e)},
			Term{"recomputed layer", biggest, "one layer recomputed in backward: " + biggestWords})
	}
	terms = append(terms, final)
	formula := "tally of saved tensors: " + joinFormulas(terms...)
	switch {
	case p.r.Ckpt == CkptSelective && p.r.Attn == AttnSDPA:
		formula += " (selective recomputation saves nothing more with SDPA: it already drops the s² scores)"
	case p.r.Ckpt == CkptSelective:
		formula += " (selective recomputation drops eager attention's s² scores)"
	}
	return bucket(BucketActivations, formula, terms...)
}

// paperActivations is Korthikanti et al.'s per-layer formula.
func (p *plan) paperActivations() Bucket {
	s, b, h, L := int64(p.r.Seq), int64(p.r.Batch), int64(p.m.Hidden), int64(p.m.Layers)
	scale := p.actBytes() // the paper's constants assume 2-byte tensors
	dims := fmt.Sprintf("s %s, b %d, h %s", bytesize.Commas(s), b, bytesize.Commas(h))
	var t Term
	switch {
	case p.r.Ckpt == CkptFull:
		t = Term{"layer inputs", fraction(mul(2, s, b, h, L), float64(scale), 2), fmt.Sprintf("2·s·b·h B per layer (full checkpointing; %s) × %d layers", dims, L)}
	case p.eagerScores():
		t = Term{"layers", fraction(mul(paperLayer(p, s, b), L), float64(scale), 2), fmt.Sprintf("s·b·h·(34 + 5·a·s/h) B per layer (eager attention; %s, a %d) × %d layers", dims, p.m.Heads, L)}
	default:
		why := "SDPA: no s² term"
		if p.r.Attn == AttnEager {
			why = "selective recomputation drops the 5·a·s/h term"
		}
		t = Term{"layers", fraction(mul(34, s, b, h, L), float64(scale), 2), fmt.Sprintf("34·s·b·h B per layer (%s; %s) × %d layers", why, dims, L)}
	}
	if scale == 4 {
		t.Formula += ", doubled for fp32 activations"
	}
	return bucket(BucketActivations, "Korthikanti et al.: "+t.Formula, t)
}

// paperLayer is one layer of the paper's formula with eager attention, in
// 2-byte units: s·b·h·(34 + 5·a·s/h) = 34·s·b·h + 5·a·s²·b.
func paperLayer(p *plan, s, b int64) int64 {
	return sum(mul(34, s, b, int64(p.m.Hidden)), mul(5, int64(p.m.Heads), s, s, b))
}

// inferenceActivations is one layer's transient working set during
// prefill of b × s tokens (layers run one after another).
func (p *plan) inferenceActivations() Bucket {
	m := &p.m
	e := p.actBytes()
	T := p.tokens()
	h := int64(m.Hidden)
	a := int64(m.Heads)
	qD := a * int64(m.qkHeadDim())
	kvD := int64(m.attnKVHeads()) * int64(m.qkHeadDim())
	vD := int64(m.attnKVHeads()) * int64(m.vHeadDim())
	oD := a * int64(m.vHeadDim())
	width := int64(m.Intermediate)
	if m.MoE() {
		width = max(int64(m.Intermediate), int64(m.ExpertsPerToken*m.ExpertIntermediate))
	}
	attn := e * (2*h + qD + kvD + vD + oD)
	mlp := e * (2*h + 3*width)
	if !m.GatedMLP {
		mlp = e * (2*h + 2*width)
	}
	perToken := max(attn, mlp)
	t := Term{"one layer", mul(T, perToken), fmt.Sprintf("max(attention %s, MLP %s) B per token: residual, normed input and the larger of q/k/v/out or gate/up/act × %s tokens", bytesize.Commas(attn), bytesize.Commas(mlp), bytesize.Commas(T))}
	if p.r.Activations == ActivationsPaper {
		s, b := int64(p.r.Seq), int64(p.r.Batch)
		dims := fmt.Sprintf("s %s, b %d, h %s", bytesize.Commas(s), b, bytesize.Commas(h))
		if p.r.Attn == AttnEager {
			t = Term{"one layer", fraction(paperLayer(p, s, b), float64(e), 2), fmt.Sprintf("s·b·h·(34 + 5·a·s/h) B for one layer (Korthikanti et al., eager attention; %s, a %d; layers run one at a time)", dims, a)}
		} else {
			t = Term{"one layer", fraction(mul(34, s, b, h), float64(e), 2), fmt.Sprintf("34·s·b·h B for one layer (Korthikanti et al., SDPA; %s; layers run one at a time)", dims)}
		}
		if e == 4 {
			t.Formula += ", doubled for fp32 activations"
		}
		return bucket(BucketActivations, "", t)
	}
	scores := Term{}
	if p.r.Attn == AttnEager {
		scores = Term{"eager scores", mul(int64(p.r.Batch), a, int64(p.r.Seq), int64(p.r.Seq), 4+e), fmt.Sprintf("b·a·s² attention scores × (4 + %d) B (fp32 softmax and its copy)", e)}
	}
	return bucket(BucketActivations, joinFormulas(t, scores), t, scores)
}

// logits is the logits bucket: the b·s·V tensor around the loss.
func (p *plan) logits() Bucket {
	V := int64(p.m.Vocab)
	if !p.train() {
		t := Term{"last-token logits", mul(int64(p.r.Batch), V, 4), "b·V × 4 B: fp32 logits of the last position (generation)"}
		return bucket(BucketLogits, "", t)
	}
	bsV := mul(p.tokens(), V)
	e := p.actBytes()
	var t Term
	switch {
	case p.r.Activations == ActivationsPaper && p.r.Logits == LogitsFP32:
		t = Term{"logits", mul(bsV, 4), "s·b·V × 4 B (fp32 logits)"}
	case p.r.Activations == ActivationsPaper && p.r.Logits == LogitsChunked:
		t = Term{"logits", mul(bsV, 2), "s·b·V × 2 B (16-bit logits; chunked cross-entropy upcasts one chunk at a time)"}
	case p.r.Activations == ActivationsPaper:
		t = Term{"logits", mul(bsV, 2), "s·b·V × 2 B (16-bit logits)"}
	case p.r.Logits == LogitsFP32:
		t = Term{"logits", mul(bsV, 12+e), fmt.Sprintf("s·b·V × %d B: logits in the activation dtype (%d) + fp32 log-softmax kept for backward (4) + at the start of backward its gradient and the fp32 logits gradient (4 + 4)", 12+e, e)}
	case p.r.Logits == LogitsBF16:
		t = Term{"logits", mul(bsV, 4*e), fmt.Sprintf("s·b·V × %d B: logits, log-softmax and their gradients in the activation dtype, no fp32 upcast (4 × %d B)", 4*e, e)}
	default:
		t = Term{"logits", fraction(bsV, float64(2*e+3), 2), fmt.Sprintf("s·b·V × %s B: logits in the activation dtype (%d) + fp32 loss work for one of 8 chunks (12 / 8)", strconv.FormatFloat(float64(e)+1.5, 'f', -1, 64), e)}
	}
	t.Formula += fmt.Sprintf(", with s·b = %s tokens and V = %s", bytesize.Commas(p.tokens()), bytesize.Commas(V))
	return bucket(BucketLogits, "", t)
}

// kvBytes is the size of one cached K or V element.
func (p *plan) kvBytes() int64 {
	if p.r.KVDtype == KVAuto {
		return p.actBytes()
	}
	return dtypeBytes(p.r.KVDtype)
}

// kvCache is the KV cache bucket (inference only).
func (p *plan) kvCache() Bucket {
	if p.train() {
		return Bucket{Name: BucketKVCache, Formula: "none: training keeps no KV cache"}
	}
	m := &p.m
	b, s := int64(p.r.Batch), int64(p.r.Seq)
	kb := p.kvBytes()
	if m.MLA() {
		per := int64(m.KVLoraRank + m.QKRopeDim)
		t := Term{"latent cache", mul(int64(m.Layers), per, kb, b, s), fmt.Sprintf("%d layers × (kv_lora_rank %d + rope %d) × %d B × b·s (MLA latent, as vLLM/SGLang cache it)", m.Layers, m.KVLoraRank, m.QKRopeDim, kb)}
		return bucket(BucketKVCache, "", t)
	}
	per := mul(2, int64(m.KVHeads), int64(m.HeadDim), kb)
	full := int64(m.Layers - m.SlidingLayers)
	terms := []Term{{"full-attention layers", mul(full, per, b, s), fmt.Sprintf("2 (K,V) × %d layers × %d kv heads × %d head_dim × %d B × b·s", full, m.KVHeads, m.HeadDim, kb)}}
	if m.SlidingLayers > 0 {
		w := min(s, int64(m.SlidingWindow))
		terms = append(terms, Term{"sliding-window layers", mul(int64(m.SlidingLayers), per, b, w), fmt.Sprintf("2 × %d layers × %d kv heads × %d head_dim × %d B × b × min(s, window %d)", m.SlidingLayers, m.KVHeads, m.HeadDim, kb, m.SlidingWindow)})
	}
	return bucket(BucketKVCache, joinFormulas(terms...), terms...)
}
