package estimator

// Linear is one weight matrix of a decoder layer, named as in the Hugging
// Face module tree (q_proj, down_proj, ...). Count > 1 for expert weights,
// which exist once per expert.
type Linear struct {
	// Name is the module name LoRA targets match (q_proj, c_attn, w1, ...).
	Name string `json:"name"`
	// Group is attention, mlp, expert, shared or router.
	Group string `json:"group"`
	// In and Out are the input and output features.
	In  int `json:"in"`
	Out int `json:"out"`
	// Count is how many copies one layer holds (experts), at least 1.
	Count int `json:"count"`
	// Bias is true when the module has a bias vector.
	Bias bool `json:"bias,omitempty"`
}

// Params is the parameter count of all Count copies, biases included.
func (l Linear) Params() int64 {
	p := int64(l.In) * int64(l.Out)
	if l.Bias {
		p += int64(l.Out)
	}
	return p * int64(l.Count)
}

// Linear groups.
const (
	groupAttention = "attention"
	groupMLP       = "mlp"
	groupExpert    = "expert"
	groupShared    = "shared"
	groupRouter    = "router"
)

// LayerKind is a run of identical decoder layers: the dense layers and the
// MoE layers of a model differ.
type LayerKind struct {
	// Count is how many layers have this shape.
	Count int `json:"count"`
	// Linears are the weight matrices of one such layer.
	Linears []Linear `json:"linears"`
	// Other counts the remaining parameters of one layer: norms, q/k norms,
	// MLA latent norms, attention sinks, cross-attention gates.
	Other int64 `json:"other"`
	// Cross marks cross-attention layers (Llama 3.2 Vision), which read
	// image features: weights only for text.
	Cross bool `json:"cross,omitempty"`
}

// Params is the parameter count of one layer of this kind.
func (k LayerKind) Params() int64 {
	p := k.Other
	for _, l := range k.Linears {
		p += l.Params()
	}
	return p
}

// LayerKinds lists the decoder layer shapes of the model: one kind for a
// dense model, two for a MoE model with leading dense layers.
func (m *Model) LayerKinds() []LayerKind {
	attn := m.attentionLinears()
	other := m.layerOtherParams()
	var kinds []LayerKind
	if !m.MoE() {
		kinds = append(kinds, LayerKind{Count: m.textLayers(), Linears: append(append([]Linear(nil), attn...), m.denseMLP()...), Other: other})
		if m.CrossAttnLayers > 0 {
			// Same projections, plus q/k norms and two tanh gates.
			kinds = append(kinds, LayerKind{Count: m.CrossAttnLayers, Cross: true,
				Linears: append(append([]Linear(nil), attn...), m.denseMLP()...), Other: other + 2*int64(m.HeadDim) + 2})
		}
		return kinds
	}
	if m.DenseLayers > 0 {
		kinds = append(kinds, LayerKind{Count: m.DenseLayers, Linears: append(append([]Linear(nil), attn...), m.denseMLP()...), Other: other})
	}
	kinds = append(kinds, LayerKind{Count: m.moeLayers(), Linears: append(append([]Linear(nil), attn...), m.moeMLP()...), Other: other})
	return kinds
}

func (m *Model) normParams() int64 {
	if m.NormBias {
		return 2 * int64(m.Hidden)
	}
	return int64(m.Hidden)
}

// layerOtherParams counts per-layer parameters outside the linears.
func (m *Model) layerOtherParams() int64 {
	p := int64(m.NormsPerLayer) * m.normParams()
	if m.QKNorm {
		p += 2 * int64(m.HeadDim)
	}
	if m.AttnSinks {
		p += int64(m.Heads)
	}
	if m.MLA() {
		p += int64(m.QLoraRank) + int64(m.KVLoraRank)
	}
	return p
}

func (m *Model) attentionLinears() []Linear {
	h, a, kv, d := m.Hidden, m.Heads, m.KVHeads, m.HeadDim
	switch {
	case m.MLA():
		qk := m.QKNopeDim + m.QKRopeDim
		var ls []Linear
		if m.QLoraRank > 0 {
			ls = append(ls,
				Linear{Name: "q_a_proj", Group: groupAttention, In: h, Out: m.QLoraRank, Count: 1},
				Linear{Name: "q_b_proj", Group: groupAttention, In: m.QLoraRank, Out: a * qk, Count: 1})
		} else {
			ls = append(ls, Linear{Name: "q_proj", Group: groupAttention, In: h, Out: a * qk, Count: 1})
		}
		return append(ls,
			Linear{Name: "kv_a_proj_with_mqa", Group: groupAttention, In: h, Out: m.KVLoraRank + m.QKRopeDim, Count: 1},
			Linear{Name: "kv_b_proj", Group: groupAttention, In: m.KVLoraRank, Out: a * (m.QKNopeDim + m.VHeadDim), Count: 1},
			Linear{Name: "o_proj", Group: groupAttention, In: a * m.VHeadDim, Out: h, Count: 1, Bias: m.OutBias})
	case m.Arch == "gpt2":
		return []Linear{
			{Name: "c_attn", Group: groupAttention, In: h, Out: (a + 2*kv) * d, Count: 1, Bias: m.QKVBias},
			{Name: "c_proj", Group: groupAttention, In: a * d, Out: h, Count: 1, Bias: m.OutBias},
		}
	case m.Arch == "phi3":
		return []Linear{
			{Name: "qkv_proj", Group: groupAttention, In: h, Out: (a + 2*kv) * d, Count: 1, Bias: m.QKVBias},
			{Name: "o_proj", Group: groupAttention, In: a * d, Out: h, Count: 1, Bias: m.OutBias},
		}
	}
	return []Linear{
		{Name: "q_proj", Group: groupAttention, In: h, Out: a * d, Count: 1, Bias: m.QKVBias},
		{Name: "k_proj", Group: groupAttention, In: h, Out: kv * d, Count: 1, Bias: m.QKVBias},
		{Name: "v_proj", Group: groupAttention, In: h, Out: kv * d, Count: 1, Bias: m.QKVBias},
		{Name: "o_proj", Group: groupAttention, In: a * d, Out: h, Count: 1, Bias: m.OutBias},
	}
}

// mlpLinears builds one MLP of width i in the model's naming, count copies.
func (m *Model) mlpLinears(group string, i, count int, bias bool) []Linear {
	h := m.Hidden
	switch {
	case !m.GatedMLP:
		return []Linear{
			{Name: "c_fc", Group: group, In: h, Out: i, Count: count, Bias: bias},
			{Name: "c_proj", Group: group, In: i, Out: h, Count: count, Bias: bias},
		}
	case m.Arch == "phi3" || m.Arch == "gpt_oss":
		return []Linear{
			{Name: "gate_up_proj", Group: group, In: h, Out: 2 * i, Count: count, Bias: bias},
			{Name: "down_proj", Group: group, In: i, Out: h, Count: count, Bias: bias},
		}
	case m.Arch == "granitemoehybrid":
		return []Linear{
			{Name: "input_linear", Group: group, In: h, Out: 2 * i, Count: count, Bias: bias},
			{Name: "output_linear", Group: group, In: i, Out: h, Count: count, Bias: bias},
		}
	case m.Arch == "mixtral" && group == groupExpert:
		return []Linear{
			{Name: "w1", Group: group, In: h, Out: i, Count: count, Bias: bias},
			{Name: "w3", Group: group, In: h, Out: i, Count: count, Bias: bias},
			{Name: "w2", Group: group, In: i, Out: h, Count: count, Bias: bias},
		}
	}
	return []Linear{
		{Name: "gate_proj", Group: group, In: h, Out: i, Count: count, Bias: bias},
		{Name: "up_proj", Group: group, In: h, Out: i, Count: count, Bias: bias},
		{Name: "down_proj", Group: group, In: i, Out: h, Count: count, Bias: bias},
	}
}

func (m *Model) denseMLP() []Linear {
	return m.mlpLinears(groupMLP, m.Intermediate, 1, m.MLPBias)
}

func (m *Model) moeMLP() []Linear {
	ls := []Linear{{Name: "gate", Group: groupRouter, In: m.Hidden, Out: m.Experts, Count: 1, Bias: m.RouterBias}}
	ls = append(ls, m.mlpLinears(groupExpert, m.ExpertIntermediate, m.Experts, m.ExpertBias)...)
	if m.SharedExperts > 0 {
		ls = append(ls, m.mlpLinears(groupShared, m.ExpertIntermediate*m.SharedExperts, 1, false)...)
	}
	return ls
}

// EmbeddingParams counts the token embedding (and learned positions).
func (m *Model) EmbeddingParams() int64 {
	p := int64(m.Vocab+m.ExtraTokens) * int64(m.Hidden)
	if m.LearnedPositions {
		p += int64(m.MaxPositions) * int64(m.Hidden)
	}
	return p
}

// LMHeadParams counts the output projection: zero when tied to the embedding.
func (m *Model) LMHeadParams() int64 {
	if m.TiedEmbeddings {
		return 0
	}
	return int64(m.Vocab) * int64(m.Hidden)
}

// LayerParams counts every decoder layer.
func (m *Model) LayerParams() int64 { return layerParams(m.LayerKinds()) }

func layerParams(kinds []LayerKind) int64 {
	var p int64
	for _, k := range kinds {
		p += int64(k.Count) * k.Params()
	}
	return p
}

// Params is the total parameter count: embeddings, decoder layers, final
// norm, untied lm_head and any vision tower.
func (m *Model) Params() int64 { return m.paramsWith(m.LayerKinds()) }

// paramsWith is Params given the model's LayerKinds.
func (m *Model) paramsWith(kinds []LayerKind) int64 {
	return m.EmbeddingParams() + layerParams(kinds) + m.normParams() + m.LMHeadParams() + m.VisionParams
}

// ActiveParams counts the parameters used per token: for MoE models only
// ExpertsPerToken routed experts count. Equal to Params for dense models.
func (m *Model) ActiveParams() int64 {
	kinds := m.LayerKinds()
	p := m.paramsWith(kinds)
	if !m.MoE() {
		return p
	}
	for _, k := range kinds {
		for _, l := range k.Linears {
			if l.Group == groupExpert {
				unused := l
				unused.Count = l.Count - m.ExpertsPerToken
				p -= int64(k.Count) * unused.Params()
			}
		}
	}
	return p
}

// largestMatrixParams is the biggest single weight matrix in the layers (the
// dequantization temporary of QLoRA).
func largestMatrixParams(kinds []LayerKind) int64 {
	var best int64
	for _, k := range kinds {
		for _, l := range k.Linears {
			if p := int64(l.In) * int64(l.Out); p > best {
				best = p
			}
		}
	}
	return best
}
