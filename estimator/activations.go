package estimator

import (
	"strconv"
	"strings"

	"oomscope/bytesize"
)

// Names of linears whose input is the block's MLP output side (down
// projections): they read the MLP's inner width, not the normed hidden state.
func isDown(l Linear) bool {
	return l.Name == "down_proj" || l.Name == "w2" || l.Name == "output_linear" || (l.Name == "c_proj" && l.Group != groupAttention)
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
	quiet    bool
}

func (t *tally) add(n int64, what string) {
	if n <= 0 {
		return
	}
	t.perToken += n
	if !t.quiet {
		t.parts = append(t.parts, what+" "+bytesize.Commas(n))
	}
}

// split adds a tensor that tensor parallelism divides over tp ranks (the
// heads and the MLP's inner width); add keeps h-wide tensors whole.
func (t *tally) split(n int64, what string, tp int64) {
	if tp > 1 {
		n, what = ceilDiv(n, tp), what+" ÷ tp"
	}
	t.add(n, what)
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
	t := tally{quiet: p.quiet}
	tp := p.tp()
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
		t.split((qD+int64(m.KVHeads)*dq)*(4+normOut(full)), "q/k norms", tp)
	}
	if m.MLA() {
		qb := anyTrains(func(l Linear) bool { return l.Name == "q_b_proj" })
		kvb := anyTrains(func(l Linear) bool { return l.Name == "kv_b_proj" })
		t.add(int64(m.QLoraRank)*(4+normOut(full || qb))+int64(m.KVLoraRank)*(4+normOut(full || kvb)), "latent norms")
	}
	t.split(e*(qD+kD+vD+oD), "q, k, v, attention output", tp)
	if p.r.Attn == AttnSDPA {
		t.split(4*a, "fp32 log-sum-exp", tp)
	}
	if anyTrains(isAttnOut) {
		t.split(e*oD, "o_proj input", tp)
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
		t.split(topk*mlp(int64(m.ExpertIntermediate), groupExpert), "expert MLPs", tp)
		// Each expert output is multiplied by its routing weight; both need
		// gradients (the hidden state does even when the router is frozen),
		// so the product keeps the outputs.
		t.add(topk*h*e, "expert outputs")
		if m.SharedExperts > 0 {
			t.split(mlp(int64(m.ExpertIntermediate*m.SharedExperts), groupShared), "shared expert", tp)
		}
	} else {
		t.split(mlp(int64(m.Intermediate), groupMLP), "MLP", tp)
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
		t.split(n, "LoRA intermediates", tp)
	}
	return t
}

// eagerLayerBytes is what eager attention adds per layer: the fp32 softmax
// output and its 16-bit copy for the value matmul, b·a·s² each.
func (p *plan) eagerLayerBytes() int64 {
	if !p.eagerScores() {
		return 0
	}
	return ceilDiv(mul(int64(p.r.Batch), int64(p.m.Heads), int64(p.r.Seq), int64(p.r.Seq), 4+p.actBytes()), p.tp())
}

// residualBytes is the size of one element of the residual stream (the
// embedding output, each layer's input and output): the dtype's, but fp32
// under autocast, where the fp32 norms and embedding write fp32 and the
// 16-bit matmul outputs are added into it.
func (p *plan) residualBytes() int64 {
	if p.train() && p.r.Autocast {
		return 4
	}
	return p.actBytes()
}

// autocastCopies is the 16-bit copy of each weight matrix that autocast
// makes for a matmul and the matmul keeps for backward: every decoder
// linear's unless activation checkpointing recomputes them (then one
// layer's), and lm_head's always. NF4 weights are dequantized on the fly
// instead (the dequant buffer).
func (p *plan) autocastCopies() Term {
	if !p.train() || !p.r.Autocast {
		return Term{}
	}
	e := p.actBytes()
	head := int64(p.m.Vocab) * int64(p.m.Hidden)
	var layers, one int64
	if p.r.Method != MethodQLoRA {
		for _, k := range p.kinds {
			if k.Cross {
				continue
			}
			var lin int64
			for _, l := range k.Linears {
				lin = sum(lin, mul(int64(l.Count), int64(l.In), int64(l.Out)))
			}
			layers = sum(layers, mul(int64(k.Count), lin))
			one = max(one, lin)
		}
	}
	n, words := sum(layers, head), "every decoder linear's and lm_head's"
	if p.r.Ckpt == CkptFull {
		n, words = sum(one, head), "the recomputed layer's and lm_head's"
	}
	if p.r.Method == MethodQLoRA {
		n, words = head, "lm_head's (the NF4 linears are dequantized instead)"
	}
	n = ceilDiv(n, p.tp())
	return Term{"autocast weight copies", mul(n, e), p.say("%s weights × %d B: autocast's 16-bit copy of %s weight, kept by the matmul for backward", num(n), e, words)}
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
	final := Term{"final norm", mul(T, finalPer), p.say("final norm %s B per token × %s tokens", num(finalPer), num(T))}
	var terms []Term
	var biggest int64
	var biggestWords string
	for _, k := range p.kinds {
		if k.Cross {
			continue // no image, no cross-attention work
		}
		t := p.layerTally(k)
		one := sum(mul(T, t.perToken), p.eagerLayerBytes())
		words := p.say("%s B per token (%s) × %s tokens", num(t.perToken), strings.Join(t.parts, " + "), num(T))
		if p.eagerScores() {
			words += p.say(" + eager scores b·a·s²·%d B", 4+e)
		}
		if one > biggest {
			biggest, biggestWords = one, words
		}
		if p.r.Ckpt != CkptFull {
			name := "decoder layers"
			if p.m.MoE() && k.Linears[len(k.Linears)-1].Group != groupMLP {
				name = "moe layers"
			} else if p.m.MoE() && len(p.kinds) > 1 {
				name = "dense layers"
			}
			terms = append(terms, Term{name, mul(int64(k.Count), one), p.say("%d layers × (%s)", k.Count, words)})
		}
	}
	if p.r.Ckpt == CkptFull {
		terms = append(terms,
			Term{"checkpointed inputs", mul(int64(p.m.textLayers()), T, h, p.residualBytes()), p.say("%d layers × %s tokens × h %s × %d B (each layer's input%s)", p.m.textLayers(), num(T), num(h), p.residualBytes(), map[bool]string{true: ", fp32 under autocast"}[p.r.Autocast])},
			Term{"recomputed layer", biggest, "one layer recomputed in backward: " + biggestWords})
	}
	terms = append(terms, final, p.autocastCopies())
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
	dims := p.say("s %s, b %d, h %s", num(s), b, num(h))
	var t Term
	switch {
	case p.r.Ckpt == CkptFull:
		t = Term{"layer inputs", fraction(mul(2, s, b, h, L), float64(scale), 2), p.say("2·s·b·h B per layer (full checkpointing; %s) × %d layers", dims, L)}
	case p.eagerScores():
		t = Term{"layers", fraction(mul(paperLayer(p, s, b), L), float64(scale), 2), p.say("s·b·h·(34 + 5·a·s/h) B per layer (eager attention; %s, a %d) × %d layers", dims, p.m.Heads, L)}
	default:
		why := "SDPA: no s² term"
		if p.r.Attn == AttnEager {
			why = "selective recomputation drops the 5·a·s/h term"
		}
		t = Term{"layers", fraction(mul(34, s, b, h, L), float64(scale), 2), p.say("34·s·b·h B per layer (%s; %s) × %d layers", why, dims, L)}
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
	tp := p.tp()
	attn := e * (2*h + ceilDiv(qD+kvD+vD+oD, tp))
	mlp := e * (2*h + ceilDiv(3*width, tp))
	if !m.GatedMLP {
		mlp = e * (2*h + ceilDiv(2*width, tp))
	}
	perToken := max(attn, mlp)
	t := Term{"one layer", mul(T, perToken), p.say("max(attention %s, MLP %s) B per token: residual, normed input and the larger of q/k/v/out or gate/up/act × %s tokens", num(attn), num(mlp), num(T))}
	if p.r.Activations == ActivationsPaper {
		s, b := int64(p.r.Seq), int64(p.r.Batch)
		dims := p.say("s %s, b %d, h %s", num(s), b, num(h))
		if p.r.Attn == AttnEager {
			t = Term{"one layer", fraction(paperLayer(p, s, b), float64(e), 2), p.say("s·b·h·(34 + 5·a·s/h) B for one layer (Korthikanti et al., eager attention; %s, a %d; layers run one at a time)", dims, a)}
		} else {
			t = Term{"one layer", fraction(mul(34, s, b, h), float64(e), 2), p.say("34·s·b·h B for one layer (Korthikanti et al., SDPA; %s; layers run one at a time)", dims)}
		}
		if e == 4 {
			t.Formula += ", doubled for fp32 activations"
		}
		return bucket(BucketActivations, "", t)
	}
	scores := Term{}
	if p.r.Attn == AttnEager {
		scores = Term{"eager scores", ceilDiv(mul(int64(p.r.Batch), a, int64(p.r.Seq), int64(p.r.Seq), 4+e), tp), p.say("b·a·s² attention scores × (4 + %d) B (fp32 softmax and its copy)", e)}
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
		t = Term{"logits", mul(bsV, 12+e), p.say("s·b·V × %d B: logits in the activation dtype (%d) + fp32 log-softmax kept for backward (4) + at the start of backward its gradient and the fp32 logits gradient (4 + 4)", 12+e, e)}
	case p.r.Logits == LogitsBF16:
		t = Term{"logits", mul(bsV, 4*e), p.say("s·b·V × %d B: logits, log-softmax and their gradients in the activation dtype, no fp32 upcast (4 × %d B)", 4*e, e)}
	default:
		t = Term{"logits", fraction(bsV, float64(2*e+3), 2), p.say("s·b·V × %s B: logits in the activation dtype (%d) + fp32 loss work for one of 8 chunks (12 / 8)", strconv.FormatFloat(float64(e)+1.5, 'f', -1, 64), e)}
	}
	t.Formula += p.say(", with s·b = %s tokens and V = %s", num(p.tokens()), num(V))
	if tp := p.tp(); tp > 1 {
		t = Term{t.Name, ceilDiv(t.Bytes, tp), "(" + t.Formula + ") ÷ tp " + strconv.FormatInt(tp, 10) + " (vocabulary-parallel cross-entropy)"}
	}
	return bucket(BucketLogits, "", t)
}

// kvBytes is the size of one cached K or V element.
func (p *plan) kvBytes() int64 {
	if p.r.KVDtype == KVAuto {
		return p.actBytes()
	}
	return dtypeBytes(p.r.KVDtype)
}

// kvLayerBytes is what one layer caches per token on one GPU: K and V for
// the rank's key/value heads × head_dim, or MLA's latent (kv_lora_rank +
// the rotary key), which every tensor-parallel rank keeps whole.
func (p *plan) kvLayerBytes() (int64, string) {
	m := &p.m
	kb := p.kvBytes()
	if m.MLA() {
		return mul(int64(m.KVLoraRank+m.QKRopeDim), kb), p.say("(kv_lora_rank %d + rope %d) × %d B (MLA latent, as vLLM and SGLang cache it)", m.KVLoraRank, m.QKRopeDim, kb)
	}
	heads := p.kvHeadsPerGPU()
	hw := p.say("%d kv heads", heads)
	if p.tp() > 1 {
		hw = p.say("%d kv heads ÷ tp %d = %d", m.KVHeads, p.tp(), heads)
	}
	return mul(2, heads, int64(m.HeadDim), kb), p.say("2 (K,V) × %s × %d head_dim × %d B", hw, m.HeadDim, kb)
}

// kvLayers splits the layers that cache text tokens into full-attention
// and sliding-window layers (cross-attention layers cache image features).
func (p *plan) kvLayers() (full, sliding int64) {
	sliding = int64(p.m.SlidingLayers)
	return int64(p.m.textLayers()) - sliding, sliding
}

// kvCache is the KV cache bucket of plain inference: b sequences of s
// tokens, sliding-window layers capped at their window.
func (p *plan) kvCache() Bucket {
	if p.train() {
		return Bucket{Name: BucketKVCache, Formula: "none: training keeps no KV cache"}
	}
	b, s := int64(p.r.Batch), int64(p.r.Seq)
	per, words := p.kvLayerBytes()
	full, sliding := p.kvLayers()
	terms := []Term{{"full-attention layers", mul(full, per, b, s), p.say("%d layers × %s × b·s", full, words)}}
	if sliding > 0 {
		w := min(s, int64(p.m.SlidingWindow))
		terms = append(terms, Term{"sliding-window layers", mul(sliding, per, b, w), p.say("%d layers × %s × b × min(s, window %d)", sliding, words, p.m.SlidingWindow)})
	}
	return bucket(BucketKVCache, joinFormulas(terms...), terms...)
}
