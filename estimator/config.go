package estimator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
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

// intValue converts a JSON number to a bounded positive int.
func (r *cfgReader) intValue(key string, v any, min, max int) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		r.bad = append(r.bad, fmt.Sprintf("%s: want a number, got %s", key, describeJSON(v)))
		return 0, false
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < float64(min) || f > float64(max) {
		r.bad = append(r.bad, fmt.Sprintf("%s: want an integer from %d to %d, got %s", key, min, max, n))
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

// countLayerTypes counts entries equal to want in a layer_types list, or -1
// when the key is absent or not a list of strings.
func (r *cfgReader) countLayerTypes(want string) int {
	list, ok := r.obj["layer_types"].([]any)
	if !ok {
		return -1
	}
	n := 0
	for _, v := range list {
		if s, _ := v.(string); s == want {
			n++
		}
	}
	return n
}

// countList returns the length of a JSON list, 0 when absent.
func (r *cfgReader) countList(key string) int {
	list, _ := r.obj[key].([]any)
	return len(list)
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

// ParseConfig reads a Hugging Face config.json into a Model with ID "custom".
// It understands the model types of the catalog (llama, mistral, mixtral,
// qwen2, qwen3, qwen3_moe, gemma, gemma2, gemma3, gemma3_text, phi3,
// deepseek_v2, deepseek_v3, gpt_oss, gpt2); any other model_type is read as a
// Llama-style decoder and says so in Model.Notes. Unknown keys are ignored;
// missing required keys give one error naming all of them.
func ParseConfig(data []byte) (Model, error) {
	if len(data) > MaxConfigBytes {
		return Model{}, fmt.Errorf("config.json: %d bytes is too large (limit %d)", len(data), MaxConfigBytes)
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
	if tc, ok := obj["text_config"].(map[string]any); ok {
		r = &cfgReader{obj: tc}
		if t, _ := tc["model_type"].(string); arch == "" && t != "" {
			arch = t
		}
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

	switch arch {
	case "gpt2":
		readGPT2(r, &m)
	case "deepseek_v2", "deepseek_v3":
		readDense(r, &m, false)
		readMLA(r, &m)
	default:
		readDense(r, &m, strings.HasPrefix(arch, "gemma"))
		switch arch {
		case "llama", "mistral", "phi3", "qwen2", "qwen3", "gemma", "gemma2", "gemma3", "gemma3_text", "mixtral", "qwen3_moe", "gpt_oss":
		case "":
		default:
			notes = append(notes, fmt.Sprintf("model_type %q is not one the estimator knows: read as a Llama-style decoder (GQA attention, gated MLP, RMSNorm)", arch))
			if r.has("num_experts") || r.has("num_local_experts") || r.has("n_routed_experts") {
				notes = append(notes, "its expert keys were ignored: the count may be far too low")
			}
		}
	}
	if err := r.err(); err != nil {
		return Model{}, err
	}
	if arch == "gemma3" {
		if vc, ok := obj["vision_config"].(map[string]any); ok {
			v := &cfgReader{obj: vc}
			m.VisionParams = siglipParams(
				v.opt(1152, 1, maxHidden, "hidden_size"), v.opt(27, 1, maxLayers, "num_hidden_layers"),
				v.opt(4304, 1, maxInter, "intermediate_size"), v.opt(14, 1, 4096, "patch_size"),
				v.opt(896, 1, 1<<16, "image_size"), m.Hidden)
			if err := v.err(); err != nil {
				return Model{}, fmt.Errorf("vision_config: %v", err)
			}
		}
	}
	if !m.MLA() && m.Heads%m.KVHeads != 0 {
		return Model{}, fmt.Errorf("config.json: num_attention_heads (%d) must be a multiple of num_key_value_heads (%d)", m.Heads, m.KVHeads)
	}
	if m.Experts > 0 && m.ExpertsPerToken > m.Experts {
		return Model{}, fmt.Errorf("config.json: num_experts_per_tok (%d) exceeds the number of experts (%d)", m.ExpertsPerToken, m.Experts)
	}
	if m.DenseLayers > m.Layers {
		m.DenseLayers = m.Layers
	}
	m.Notes = notes
	sort.Strings(m.Notes)
	return m, nil
}

// readDense reads the Llama-family keys and the per-family variations.
func readDense(r *cfgReader, m *Model, gemma bool) {
	m.Hidden = r.req(maxHidden, "hidden_size")
	m.Layers = r.req(maxLayers, "num_hidden_layers")
	m.Heads = r.req(maxHeads, "num_attention_heads")
	m.Vocab = r.req(maxVocab, "vocab_size")
	if m.Arch != "qwen3_moe" && m.Arch != "gpt_oss" {
		m.Intermediate = r.req(maxInter, "intermediate_size")
	} else {
		m.Intermediate = r.opt(0, 0, maxInter, "intermediate_size")
	}
	m.KVHeads = r.opt(m.Heads, 1, maxHeads, "num_key_value_heads")
	def := 0
	if m.Heads > 0 {
		def = m.Hidden / m.Heads
	}
	m.HeadDim = r.opt(def, 1, maxHeadDim, "head_dim")
	if m.HeadDim == 0 {
		m.HeadDim = 1
	}
	m.MaxPositions = r.opt(0, 0, maxPos, "max_position_embeddings")
	m.TiedEmbeddings = r.optBool(gemma, "tie_word_embeddings")
	bias := r.optBool(false, "attention_bias")
	m.QKVBias, m.OutBias = bias, bias
	m.MLPBias = r.optBool(false, "mlp_bias")
	window := r.opt(0, 0, maxPos, "sliding_window")
	sliding := r.countLayerTypes("sliding_attention")

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
	}
	if m.Arch == "qwen3_moe" {
		m.Experts = r.req(maxExperts, "num_experts")
		m.ExpertsPerToken = r.req(maxExperts, "num_experts_per_tok")
		m.ExpertIntermediate = r.req(maxInter, "moe_intermediate_size")
		step := r.opt(1, 1, maxLayers, "decoder_sparse_step")
		only := r.countList("mlp_only_layers")
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
}
