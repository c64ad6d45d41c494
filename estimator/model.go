package estimator

import "fmt"

// Model describes a decoder-only transformer by the dimensions of its Hugging
// Face config.json. The exported dimension fields are what other packages
// match tensors against: logits are b·s·Vocab, attention scores b·Heads·s²,
// a KV cache entry 2·KVHeads·HeadDim per token and layer.
type Model struct {
	// ID is the catalog slug (lower case, e.g. "llama-3.1-8b"), or "custom".
	ID string `json:"id"`
	// Name is a human-readable name.
	Name string `json:"name"`
	// HFID is the Hugging Face repository id the numbers come from.
	HFID string `json:"hf_id,omitempty"`
	// Arch is the config.json model_type (llama, qwen2, gemma3, ...).
	Arch string `json:"arch"`

	// Hidden is hidden_size (d_model).
	Hidden int `json:"hidden_size"`
	// Layers is num_hidden_layers.
	Layers int `json:"num_layers"`
	// Heads is num_attention_heads.
	Heads int `json:"num_heads"`
	// KVHeads is num_key_value_heads (equal to Heads without GQA).
	KVHeads int `json:"num_kv_heads"`
	// HeadDim is head_dim, which need not equal Hidden/Heads (Gemma, Qwen3,
	// gpt-oss). For MLA models it is the query/key head size (nope + rope).
	HeadDim int `json:"head_dim"`
	// Intermediate is intermediate_size of the dense MLP.
	Intermediate int `json:"intermediate_size"`
	// Vocab is vocab_size.
	Vocab int `json:"vocab_size"`
	// MaxPositions is max_position_embeddings (the context the model supports).
	MaxPositions int `json:"max_positions,omitempty"`
	// TiedEmbeddings is true when lm_head shares the embedding matrix.
	TiedEmbeddings bool `json:"tied_embeddings"`

	// QKVBias adds biases to the q, k and v projections (Qwen2, gpt-oss, GPT-2).
	QKVBias bool `json:"qkv_bias,omitempty"`
	// OutBias adds a bias to the attention output projection (gpt-oss, GPT-2).
	OutBias bool `json:"o_bias,omitempty"`
	// QKNorm adds per-head RMSNorms on queries and keys (Qwen3, Gemma 3).
	QKNorm bool `json:"qk_norm,omitempty"`
	// NormsPerLayer is 2 for most models and 4 for Gemma 2 and 3.
	NormsPerLayer int `json:"norms_per_layer"`
	// NormBias marks LayerNorm with a bias (GPT-2) instead of RMSNorm.
	NormBias bool `json:"norm_bias,omitempty"`
	// GatedMLP is true for SwiGLU/GeGLU MLPs (gate, up, down); false for the
	// two-matrix GELU MLP of GPT-2.
	GatedMLP bool `json:"gated_mlp"`
	// MLPBias adds biases to the MLP projections (GPT-2).
	MLPBias bool `json:"mlp_bias,omitempty"`
	// LearnedPositions adds a MaxPositions×Hidden position embedding (GPT-2).
	LearnedPositions bool `json:"learned_positions,omitempty"`
	// AttnSinks adds one learned sink logit per head and layer (gpt-oss).
	AttnSinks bool `json:"attn_sinks,omitempty"`
	// SlidingWindow is the local attention window, 0 if none.
	SlidingWindow int `json:"sliding_window,omitempty"`
	// SlidingLayers is how many layers use the sliding window.
	SlidingLayers int `json:"sliding_layers,omitempty"`

	// Experts is the number of routed experts per MoE layer (0: dense model).
	Experts int `json:"num_experts,omitempty"`
	// ExpertsPerToken is top-k routing.
	ExpertsPerToken int `json:"experts_per_token,omitempty"`
	// ExpertIntermediate is the intermediate size of one expert.
	ExpertIntermediate int `json:"expert_intermediate_size,omitempty"`
	// SharedExperts is the number of always-active shared experts.
	SharedExperts int `json:"shared_experts,omitempty"`
	// DenseLayers is how many leading layers use the dense MLP (DeepSeek's
	// first_k_dense_replace).
	DenseLayers int `json:"dense_layers,omitempty"`
	// ExpertBias adds biases to expert projections (gpt-oss).
	ExpertBias bool `json:"expert_bias,omitempty"`
	// RouterBias adds a bias (or score-correction bias) to the router.
	RouterBias bool `json:"router_bias,omitempty"`

	// QLoraRank, KVLoraRank, QKNopeDim, QKRopeDim and VHeadDim describe
	// multi-head latent attention (DeepSeek); KVLoraRank > 0 enables it.
	QLoraRank int `json:"q_lora_rank,omitempty"`
	// KVLoraRank is the compressed KV latent size (MLA).
	KVLoraRank int `json:"kv_lora_rank,omitempty"`
	// QKNopeDim is the non-rotary part of the query/key head (MLA).
	QKNopeDim int `json:"qk_nope_head_dim,omitempty"`
	// QKRopeDim is the rotary part of the query/key head (MLA).
	QKRopeDim int `json:"qk_rope_head_dim,omitempty"`
	// VHeadDim is the value head size (MLA).
	VHeadDim int `json:"v_head_dim,omitempty"`

	// CrossAttnLayers is how many of the Layers are cross-attention layers
	// that read image features (Llama 3.2 Vision): they hold weights but
	// neither text activations nor text KV cache.
	CrossAttnLayers int `json:"cross_attn_layers,omitempty"`
	// ExtraTokens counts embedding rows beyond Vocab (Llama 3.2 Vision's
	// 8 image tokens); lm_head keeps Vocab rows.
	ExtraTokens int `json:"extra_tokens,omitempty"`

	// VisionParams counts a vision tower and projector (Gemma 3, Mistral 3,
	// Llama 3.2 Vision), held as weights but not part of the text
	// activations.
	VisionParams int64 `json:"vision_params,omitempty"`
	// CheckpointQuant is the quant_method of the config's
	// quantization_config (fp8, mxfp4, awq, gptq, bitsandbytes, ...): the
	// format the published weights are stored in. Empty when unquantized.
	CheckpointQuant string `json:"checkpoint_quant,omitempty"`
	// DtypeName is the config's torch_dtype (bfloat16, float16, float32).
	DtypeName string `json:"torch_dtype,omitempty"`
	// Published is the parameter count the model card states ("8.03B"), if any.
	Published string `json:"published,omitempty"`
	// PublishedSource says where Published comes from.
	PublishedSource string `json:"published_source,omitempty"`
	// Notes record assumptions made when reading a custom config.
	Notes []string `json:"notes,omitempty"`
}

// Size is the parameter count in the short form model cards use: "8.03B"
// from a billion up (999.9 million is "1.00B", not "1000M"), "124M" below.
func (m *Model) Size() string {
	n := m.Params()
	if n >= 999_500_000 {
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	}
	return fmt.Sprintf("%.0fM", float64(n)/1e6)
}

// textLayers is how many decoder layers process text tokens: all but the
// cross-attention layers.
func (m *Model) textLayers() int { return m.Layers - m.CrossAttnLayers }

// MLA reports whether the model uses multi-head latent attention.
func (m *Model) MLA() bool { return m.KVLoraRank > 0 }

// MoE reports whether the model has routed experts.
func (m *Model) MoE() bool { return m.Experts > 0 }

// qkHeadDim is the query/key head size.
func (m *Model) qkHeadDim() int {
	if m.MLA() {
		return m.QKNopeDim + m.QKRopeDim
	}
	return m.HeadDim
}

// vHeadDim is the value head size.
func (m *Model) vHeadDim() int {
	if m.MLA() {
		return m.VHeadDim
	}
	return m.HeadDim
}

// attnKVHeads is how many K/V heads the attention kernel sees (MLA
// decompresses to one K/V head per query head).
func (m *Model) attnKVHeads() int {
	if m.MLA() {
		return m.Heads
	}
	return m.KVHeads
}

// moeLayers is how many layers carry routed experts.
func (m *Model) moeLayers() int {
	if !m.MoE() {
		return 0
	}
	return m.Layers - m.DenseLayers
}
