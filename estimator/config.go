package estimator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"oomscope/bytesize"
)

// MaxConfigBytes bounds the size of a config.json ParseConfig accepts.
const MaxConfigBytes = 1 << 20

// Bounds on config.json dimensions, generous for real models and small
// enough that parameter counts cannot overflow int64.
const (
	maxHidden  = 1 << 17
	maxLayers  = 1 << 10
	maxHeads   = 1 << 12
	maxHeadDim = 1 << 12
	maxInter   = 1 << 20
	maxVocab   = 1 << 23
	maxExperts = 1 << 10
	maxPos     = 1 << 26
	// maxParams is 20 trillion parameters, ten times the largest model
	// published: a config beyond it has a typing error in a size.
	maxParams = 20e12
)

// cfgReader reads typed values out of a decoded config.json object and
// collects what is missing or malformed, so one error can name them all.
type cfgReader struct {
	obj     map[string]any
	missing []string
	bad     []string
}

func (r *cfgReader) has(key string) bool {
	v, ok := r.obj[key]
	return ok && v != nil
}

// intValue converts a JSON number to a bounded int.
func (r *cfgReader) intValue(key string, v any, min, max int) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		r.bad = append(r.bad, fmt.Sprintf("%s: want a number, got %s", key, describeJSON(v)))
		return 0, false
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < float64(min) || f > float64(max) {
		r.bad = append(r.bad, fmt.Sprintf("%s: want a whole number from %d to %d, got %s", key, min, max, n))
		return 0, false
	}
	return int(f), true
}

// req reads a required integer, accepting aliases; the first alias names it
// when absent.
func (r *cfgReader) req(max int, keys ...string) int {
	for _, k := range keys {
		if r.has(k) {
			n, _ := r.intValue(k, r.obj[k], 1, max)
			return n
		}
	}
	r.missing = append(r.missing, keys[0])
	return 0
}

// opt reads an optional integer (absent or null gives def); min may be 0.
func (r *cfgReader) opt(def, min, max int, keys ...string) int {
	for _, k := range keys {
		if r.has(k) {
			if n, ok := r.intValue(k, r.obj[k], min, max); ok {
				return n
			}
			return def
		}
	}
	return def
}

func (r *cfgReader) optBool(def bool, key string) bool {
	if !r.has(key) {
		return def
	}
	b, ok := r.obj[key].(bool)
	if !ok {
		r.bad = append(r.bad, fmt.Sprintf("%s: want true or false, got %s", key, describeJSON(r.obj[key])))
		return def
	}
	return b
}

func (r *cfgReader) optString(key string) string {
	s, _ := r.obj[key].(string)
	return s
}

// object returns the nested object under key, nil when absent; anything
// else there is an error.
func (r *cfgReader) object(key string) map[string]any {
	if !r.has(key) {
		return nil
	}
	o, ok := r.obj[key].(map[string]any)
	if !ok {
		r.bad = append(r.bad, fmt.Sprintf("%s: want an object, got %s", key, describeJSON(r.obj[key])))
	}
	return o
}

// list returns the JSON list under key, nil when absent; anything else
// there is an error.
func (r *cfgReader) list(key string) []any {
	if !r.has(key) {
		return nil
	}
	l, ok := r.obj[key].([]any)
	if !ok {
		r.bad = append(r.bad, fmt.Sprintf("%s: want a list, got %s", key, describeJSON(r.obj[key])))
	}
	return l
}

// layerTypes reads layer_types, which must name every layer when present.
func (r *cfgReader) layerTypes(layers int) []string {
	l := r.list("layer_types")
	if l == nil {
		return nil
	}
	if layers > 0 && len(l) != layers {
		r.bad = append(r.bad, fmt.Sprintf("layer_types: %d entries for %d layers (num_hidden_layers)", len(l), layers))
		return nil
	}
	out := make([]string, len(l))
	for i, v := range l {
		s, ok := v.(string)
		if !ok {
			r.bad = append(r.bad, fmt.Sprintf("layer_types: entry %d is %s, not a name", i, describeJSON(v)))
			return nil
		}
		out[i] = s
	}
	return out
}

// indices reads a list of distinct layer indices in [0, layers).
func (r *cfgReader) indices(key string, layers int) []int {
	var out []int
	seen := map[int]bool{}
	for i, v := range r.list(key) {
		n, ok := r.intValue(fmt.Sprintf("%s[%d]", key, i), v, 0, max(0, layers-1))
		if !ok {
			return nil
		}
		if seen[n] {
			r.bad = append(r.bad, fmt.Sprintf("%s: layer %d is listed twice", key, n))
			return nil
		}
		seen[n] = true
		out = append(out, n)
	}
	return out
}

func (r *cfgReader) err() error {
	var parts []string
	if len(r.missing) > 0 {
		parts = append(parts, "missing required keys: "+strings.Join(r.missing, ", "))
	}
	parts = append(parts, r.bad...)
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("config.json: %s", strings.Join(parts, "; "))
}

func describeJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("%v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%v", v)
}

// knownArch lists the model_type values ParseConfig reads with their own
// rules; any other is read as a Llama-style decoder with a note.
var knownArch = map[string]bool{
	"llama": true, "mistral": true, "mixtral": true, "phi3": true, "qwen2": true, "qwen3": true, "qwen3_moe": true,
	"gemma": true, "gemma2": true, "gemma3": true, "gemma3_text": true, "gpt_oss": true, "gpt2": true,
	"deepseek_v2": true, "deepseek_v3": true, "mistral3": true, "mllama": true, "granite": true, "granitemoehybrid": true,
}

// ParseConfig reads a Hugging Face config.json into a Model with ID "custom".
// It understands the model types in knownArch (llama, mistral, mixtral,
// qwen2, qwen3, qwen3_moe, gemma, gemma2, gemma3, phi3, deepseek_v2,
// deepseek_v3, gpt_oss, gpt2, mistral3, mllama, granite,
// granitemoehybrid); any other model_type is read as a Llama-style decoder
// and says so in Model.Notes. Unknown keys are ignored; missing required
// keys give one error naming all of them. Empty input, a config whose
// sizes contradict each other (heads that do not divide hidden_size
// without a head_dim, a layer_types list of the wrong length, top-k above
// the expert count) or describe more than 20 trillion parameters is an
// error, never a default model.
func ParseConfig(data []byte) (Model, error) {
	if len(data) > MaxConfigBytes {
		return Model{}, fmt.Errorf("config.json: %d bytes is too large (limit %d)", len(data), MaxConfigBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Model{}, fmt.Errorf("config.json: empty: paste or drop the contents of a Hugging Face config.json")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		return Model{}, fmt.Errorf("config.json: not valid JSON: %v", err)
	}
	if dec.More() {
		return Model{}, fmt.Errorf("config.json: extra data after the JSON object")
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return Model{}, fmt.Errorf("config.json: want a JSON object, got %s", describeJSON(top))
	}
	outer := &cfgReader{obj: obj}
	arch := outer.optString("model_type")
	r := outer
	var notes []string
	if tc := outer.object("text_config"); tc != nil {
		r = &cfgReader{obj: tc}
		if t, _ := tc["model_type"].(string); arch == "" && t != "" {
			arch = t
		}
	}
	if err := outer.err(); err != nil {
		return Model{}, err
	}
	if arch == "" {
		notes = append(notes, "config.json has no model_type: read as a Llama-style decoder")
	}
	m := Model{ID: "custom", Arch: arch, NormsPerLayer: 2, GatedMLP: true}
	if name := outer.optString("_name_or_path"); name != "" {
		m.HFID = name
	}
	switch {
	case m.HFID != "":
		m.Name = m.HFID
	case arch != "":
		m.Name = "custom " + arch + " model"
	default:
		m.Name = "custom model"
	}
	m.DtypeName = outer.optString("torch_dtype")
	if m.DtypeName == "" {
		m.DtypeName = r.optString("torch_dtype")
	}
	if qc := outer.object("quantization_config"); qc != nil {
		q := &cfgReader{obj: qc}
		m.CheckpointQuant = strings.ToLower(q.optString("quant_method"))
	}

	headDimGiven := r.has("head_dim")
	switch arch {
	case "gpt2":
		readGPT2(r, &m)
		headDimGiven = false
	case "deepseek_v2", "deepseek_v3":
		readDense(r, &m, false)
		readMLA(r, &m)
		headDimGiven = true // MLA heads are sized by their own keys
	default:
		readDense(r, &m, strings.HasPrefix(arch, "gemma"))
		if !knownArch[arch] && arch != "" {
			notes = append(notes, fmt.Sprintf("model_type %q is not one the estimator knows: read as a Llama-style decoder (GQA attention, gated MLP, RMSNorm)", arch))
			if r.has("num_experts") || r.has("num_local_experts") || r.has("n_routed_experts") {
				notes = append(notes, "its expert keys were ignored: the count may be far too low")
			}
		}
	}
	if err := r.err(); err != nil {
		return Model{}, err
	}
	if err := readVision(outer, r, &m); err != nil {
		return Model{}, err
	}
	if !headDimGiven && m.Hidden%m.Heads != 0 {
		return Model{}, fmt.Errorf("config.json: num_attention_heads (%d) does not divide hidden_size (%d), and no head_dim says how wide a head is", m.Heads, m.Hidden)
	}
	if !m.MLA() && m.Heads%m.KVHeads != 0 {
		return Model{}, fmt.Errorf("config.json: num_attention_heads (%d) must be a multiple of num_key_value_heads (%d)", m.Heads, m.KVHeads)
	}
	if m.Experts > 0 && m.ExpertsPerToken > m.Experts {
		return Model{}, fmt.Errorf("config.json: num_experts_per_tok (%d) exceeds the number of experts (%d)", m.ExpertsPerToken, m.Experts)
	}
	if m.DenseLayers > m.Layers {
		notes = append(notes, fmt.Sprintf("first_k_dense_replace (%d) is more than the %d layers: every layer is dense", m.DenseLayers, m.Layers))
		m.DenseLayers = m.Layers
	}
	if n := m.Params(); float64(n) > maxParams {
		return Model{}, fmt.Errorf("config.json: these sizes describe %s parameters, more than any real model (limit 20 trillion): check hidden_size, num_hidden_layers, intermediate_size and vocab_size", bytesize.Commas(n))
	}
	m.Notes = append(notes, m.Notes...)
	sort.Strings(m.Notes)
	return m, nil
}

// readDense reads the Llama-family keys and the per-family variations.
func readDense(r *cfgReader, m *Model, gemma bool) {
	m.Hidden = r.req(maxHidden, "hidden_size")
	m.Layers = r.req(maxLayers, "num_hidden_layers")
	m.Heads = r.req(maxHeads, "num_attention_heads")
	m.Vocab = r.req(maxVocab, "vocab_size")
	switch m.Arch {
	case "qwen3_moe", "gpt_oss":
		m.Intermediate = r.opt(0, 0, maxInter, "intermediate_size")
	case "granitemoehybrid":
		m.Intermediate = r.req(maxInter, "shared_intermediate_size", "intermediate_size")
	default:
		m.Intermediate = r.req(maxInter, "intermediate_size")
	}
	m.KVHeads = r.opt(m.Heads, 1, maxHeads, "num_key_value_heads")
	def := 1
	if m.Heads > 0 && m.Hidden >= m.Heads {
		def = m.Hidden / m.Heads
	}
	m.HeadDim = r.opt(def, 1, maxHeadDim, "head_dim")
	m.MaxPositions = r.opt(0, 0, maxPos, "max_position_embeddings")
	m.TiedEmbeddings = r.optBool(gemma, "tie_word_embeddings")
	bias := r.optBool(false, "attention_bias")
	m.QKVBias, m.OutBias = bias, bias
	m.MLPBias = r.optBool(false, "mlp_bias")
	window := r.opt(0, 0, maxPos, "sliding_window")
	types := r.layerTypes(m.Layers)
	sliding := -1
	if types != nil {
		sliding = 0
		for _, t := range types {
			if t == "sliding_attention" {
				sliding++
			}
		}
	}

	switch m.Arch {
	case "qwen2":
		m.QKVBias, m.OutBias = true, false
		if !r.optBool(false, "use_sliding_window") {
			window = 0
		}
	case "qwen3", "qwen3_moe":
		m.QKNorm = true
		if !r.optBool(false, "use_sliding_window") {
			window = 0
		}
	case "gemma2", "gemma3", "gemma3_text":
		m.NormsPerLayer = 4
		m.QKNorm = m.Arch != "gemma2"
		if sliding < 0 {
			pattern := 2
			if m.Arch != "gemma2" {
				pattern = r.opt(6, 1, maxLayers, "sliding_window_pattern")
			}
			sliding = m.Layers - m.Layers/pattern
		}
	case "gpt_oss":
		m.QKVBias, m.OutBias, m.AttnSinks, m.ExpertBias, m.RouterBias = true, true, true, true, true
		m.Experts = r.req(maxExperts, "num_local_experts")
		m.ExpertsPerToken = r.req(maxExperts, "experts_per_token", "num_experts_per_tok")
		m.ExpertIntermediate = r.req(maxInter, "intermediate_size")
	case "mixtral":
		m.Experts = r.req(maxExperts, "num_local_experts")
		m.ExpertsPerToken = r.req(maxExperts, "num_experts_per_tok")
		m.ExpertIntermediate = m.Intermediate
	case "mllama_text_model", "mllama":
		m.ExtraTokens = 8 // image tokens appended to the embedding
		m.CrossAttnLayers = len(r.indices("cross_attention_layers", m.Layers))
		if m.CrossAttnLayers == m.Layers && m.Layers > 0 {
			r.bad = append(r.bad, "cross_attention_layers: every layer is a cross-attention layer, none reads text")
		}
	case "granitemoehybrid":
		for i, t := range types {
			if t != "attention" {
				r.bad = append(r.bad, fmt.Sprintf("layer_types: layer %d is %q; only all-attention Granite 4.0 models (no Mamba layers) are supported", i, t))
				break
			}
		}
		if n := r.opt(0, 0, maxExperts, "num_local_experts"); n > 0 {
			r.bad = append(r.bad, fmt.Sprintf("num_local_experts: %d; only dense Granite 4.0 models (0 experts) are supported", n))
		}
		m.Arch = "granitemoehybrid"
	}
	if m.Arch == "qwen3_moe" {
		m.Experts = r.req(maxExperts, "num_experts")
		m.ExpertsPerToken = r.req(maxExperts, "num_experts_per_tok")
		m.ExpertIntermediate = r.req(maxInter, "moe_intermediate_size")
		step := r.opt(1, 1, maxLayers, "decoder_sparse_step")
		only := len(r.indices("mlp_only_layers", m.Layers))
		dense := 0
		for i := 0; i < m.Layers; i++ {
			if (i+1)%step != 0 {
				dense++
			}
		}
		m.DenseLayers = min(m.Layers, dense+only)
	}
	if window > 0 {
		if sliding < 0 {
			sliding = m.Layers // one window for every layer (Mistral v0.1)
		}
		m.SlidingWindow, m.SlidingLayers = window, min(sliding, m.Layers)
	}
}

// readMLA reads DeepSeek's latent attention and MoE keys.
func readMLA(r *cfgReader, m *Model) {
	m.QLoraRank = r.opt(0, 0, maxHidden, "q_lora_rank")
	m.KVLoraRank = r.req(maxHidden, "kv_lora_rank")
	m.QKNopeDim = r.req(maxHeadDim, "qk_nope_head_dim")
	m.QKRopeDim = r.req(maxHeadDim, "qk_rope_head_dim")
	m.VHeadDim = r.req(maxHeadDim, "v_head_dim")
	m.HeadDim = m.QKNopeDim + m.QKRopeDim
	if r.has("n_routed_experts") {
		m.Experts = r.req(maxExperts, "n_routed_experts")
		m.ExpertsPerToken = r.req(maxExperts, "num_experts_per_tok")
		m.ExpertIntermediate = r.req(maxInter, "moe_intermediate_size")
		m.SharedExperts = r.opt(0, 0, 64, "n_shared_experts")
		m.DenseLayers = r.opt(0, 0, maxLayers, "first_k_dense_replace")
		m.RouterBias = m.Arch == "deepseek_v3" // e_score_correction_bias
	}
}

// readGPT2 reads GPT-2's own key names.
func readGPT2(r *cfgReader, m *Model) {
	m.Hidden = r.req(maxHidden, "n_embd", "hidden_size")
	m.Layers = r.req(maxLayers, "n_layer", "num_hidden_layers")
	m.Heads = r.req(maxHeads, "n_head", "num_attention_heads")
	m.Vocab = r.req(maxVocab, "vocab_size")
	m.KVHeads = m.Heads
	if m.Heads > 0 {
		m.HeadDim = max(1, m.Hidden/m.Heads)
	}
	m.Intermediate = r.opt(4*m.Hidden, 1, maxInter, "n_inner")
	m.MaxPositions = r.opt(1024, 1, maxPos, "n_positions")
	m.TiedEmbeddings = r.optBool(true, "tie_word_embeddings")
	m.GatedMLP, m.NormBias, m.MLPBias, m.QKVBias, m.OutBias, m.LearnedPositions = false, true, true, true, true, true
	if m.Heads > 0 && m.Hidden%m.Heads != 0 {
		r.bad = append(r.bad, fmt.Sprintf("n_head (%d) does not divide n_embd (%d)", m.Heads, m.Hidden))
	}
}

// readVision counts the vision tower of a multimodal config (Gemma 3,
// Mistral 3, Llama 3.2 Vision) from its vision_config; other vision
// configs are noted and left out.
func readVision(outer, text *cfgReader, m *Model) error {
	vc := outer.object("vision_config")
	if vc == nil {
		return outer.err()
	}
	v := &cfgReader{obj: vc}
	switch m.Arch {
	case "gemma3":
		m.VisionParams = siglipParams(
			v.opt(1152, 1, maxHidden, "hidden_size"), v.opt(27, 1, maxLayers, "num_hidden_layers"),
			v.opt(4304, 1, maxInter, "intermediate_size"), v.opt(14, 1, 4096, "patch_size"),
			v.opt(896, 1, 1<<16, "image_size"), m.Hidden)
	case "mistral3":
		m.VisionParams = pixtralParams(
			v.req(maxHidden, "hidden_size"), v.req(maxLayers, "num_hidden_layers"), v.req(maxInter, "intermediate_size"),
			v.req(4096, "patch_size"), v.opt(3, 1, 16, "num_channels"), outer.opt(2, 1, 64, "spatial_merge_size"),
			m.Hidden, outer.optBool(true, "multimodal_projector_bias"))
	case "mllama", "mllama_text_model":
		m.VisionParams = mllamaVisionParams(
			v.req(maxHidden, "hidden_size"), v.req(maxInter, "intermediate_size"), v.req(maxLayers, "num_hidden_layers"),
			v.opt(8, 0, maxLayers, "num_global_layers"), v.req(4096, "patch_size"), v.req(1<<16, "image_size"),
			v.opt(3, 1, 16, "num_channels"), v.opt(4, 1, 64, "max_num_tiles"), max(1, len(v.list("supported_aspect_ratios"))),
			v.req(1<<20, "vision_output_dim"), m.Hidden)
		if len(v.list("supported_aspect_ratios")) == 0 {
			v.missing = append(v.missing, "supported_aspect_ratios")
		}
	default:
		m.Notes = append(m.Notes, "the vision_config's tower is not counted: weights are the text model's only")
	}
	if err := v.err(); err != nil {
		return fmt.Errorf("vision_config: %v", err)
	}
	return outer.err()
}
