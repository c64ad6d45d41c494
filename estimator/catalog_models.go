package estimator

import (
	"sort"
	"strings"
)

// dense builds a Llama-style decoder (GQA attention, gated MLP, RMSNorm).
func dense(id, name, hf, arch string, h, layers, heads, kv, headDim, inter, vocab, maxPos int, tied bool, published string) Model {
	return Model{
		ID: id, Name: name, HFID: hf, Arch: arch,
		Hidden: h, Layers: layers, Heads: heads, KVHeads: kv, HeadDim: headDim,
		Intermediate: inter, Vocab: vocab, MaxPositions: maxPos, TiedEmbeddings: tied,
		NormsPerLayer: 2, GatedMLP: true, Published: published,
	}
}

// siglipParams counts a SigLIP vision tower (patch embedding with bias,
// learned positions, pre-norm blocks with biased attention and GELU MLP,
// post-layernorm) as Gemma 3 ships it, plus the multimodal projector into
// a text model of width textHidden (a vision×text matrix and an RMSNorm).
func siglipParams(hidden, layers, inter, patch, image, textHidden int) int64 {
	h, i := int64(hidden), int64(inter)
	patches := int64(image/patch) * int64(image/patch)
	embed := 3*int64(patch)*int64(patch)*h + h + patches*h
	block := 2*2*h + 4*(h*h+h) + (h*i + i) + (i*h + h)
	tower := embed + int64(layers)*block + 2*h
	return tower + h*int64(textHidden) + h
}

// gemma3Vision is Gemma 3's SigLIP-so400m tower (896 px, patch 14).
func gemma3Vision(textHidden int) int64 {
	return siglipParams(1152, 27, 4304, 14, 896, textHidden)
}

// catalogModels is the model catalog. Dimensions are the config.json
// values of each Hugging Face repository (estimator-notes §4).
var catalogModels = func() []Model {
	var ms []Model
	add := func(m Model, edit func(*Model)) {
		if edit != nil {
			edit(&m)
		}
		ms = append(ms, m)
	}
	qwen2 := func(m *Model) { m.QKVBias = true }
	qwen3 := func(m *Model) { m.QKNorm = true }

	add(dense("gpt2", "GPT-2 (124M)", "openai-community/gpt2", "gpt2", 768, 12, 12, 12, 64, 3072, 50257, 1024, true, "124M"), func(m *Model) {
		m.GatedMLP, m.NormBias, m.MLPBias, m.QKVBias, m.OutBias, m.LearnedPositions = false, true, true, true, true, true
	})
	add(dense("llama-2-7b", "Llama 2 7B", "meta-llama/Llama-2-7b-hf", "llama", 4096, 32, 32, 32, 128, 11008, 32000, 4096, false, "6.74B"), nil)
	add(dense("llama-2-13b", "Llama 2 13B", "meta-llama/Llama-2-13b-hf", "llama", 5120, 40, 40, 40, 128, 13824, 32000, 4096, false, "13.0B"), nil)
	add(dense("llama-2-70b", "Llama 2 70B", "meta-llama/Llama-2-70b-hf", "llama", 8192, 80, 64, 8, 128, 28672, 32000, 4096, false, "69.0B"), nil)
	add(dense("llama-3.1-8b", "Llama 3.1 8B", "meta-llama/Llama-3.1-8B", "llama", 4096, 32, 32, 8, 128, 14336, 128256, 131072, false, "8.03B"), nil)
	add(dense("llama-3.1-70b", "Llama 3.1 70B", "meta-llama/Llama-3.1-70B", "llama", 8192, 80, 64, 8, 128, 28672, 128256, 131072, false, "70.6B"), nil)
	add(dense("llama-3.1-405b", "Llama 3.1 405B", "meta-llama/Llama-3.1-405B", "llama", 16384, 126, 128, 8, 128, 53248, 128256, 131072, false, "406B"), nil)
	add(dense("llama-3.2-1b", "Llama 3.2 1B", "meta-llama/Llama-3.2-1B", "llama", 2048, 16, 32, 8, 64, 8192, 128256, 131072, true, "1.24B"), nil)
	add(dense("llama-3.2-3b", "Llama 3.2 3B", "meta-llama/Llama-3.2-3B", "llama", 3072, 28, 24, 8, 128, 8192, 128256, 131072, true, "3.21B"), nil)
	add(dense("mistral-7b", "Mistral 7B v0.3", "mistralai/Mistral-7B-v0.3", "mistral", 4096, 32, 32, 8, 128, 14336, 32768, 32768, false, "7.25B"), nil)
	add(dense("mixtral-8x7b", "Mixtral 8x7B", "mistralai/Mixtral-8x7B-v0.1", "mixtral", 4096, 32, 32, 8, 128, 14336, 32000, 32768, false, "46.7B"), func(m *Model) {
		m.Experts, m.ExpertsPerToken, m.ExpertIntermediate = 8, 2, 14336
	})
	add(dense("qwen2.5-0.5b", "Qwen2.5 0.5B", "Qwen/Qwen2.5-0.5B", "qwen2", 896, 24, 14, 2, 64, 4864, 151936, 32768, true, "0.49B"), qwen2)
	add(dense("qwen2.5-1.5b", "Qwen2.5 1.5B", "Qwen/Qwen2.5-1.5B", "qwen2", 1536, 28, 12, 2, 128, 8960, 151936, 131072, true, "1.54B"), qwen2)
	add(dense("qwen2.5-3b", "Qwen2.5 3B", "Qwen/Qwen2.5-3B", "qwen2", 2048, 36, 16, 2, 128, 11008, 151936, 32768, true, "3.09B"), qwen2)
	add(dense("qwen2.5-7b", "Qwen2.5 7B", "Qwen/Qwen2.5-7B", "qwen2", 3584, 28, 28, 4, 128, 18944, 152064, 131072, false, "7.61B"), qwen2)
	add(dense("qwen2.5-14b", "Qwen2.5 14B", "Qwen/Qwen2.5-14B", "qwen2", 5120, 48, 40, 8, 128, 13824, 152064, 131072, false, "14.7B"), qwen2)
	add(dense("qwen2.5-32b", "Qwen2.5 32B", "Qwen/Qwen2.5-32B", "qwen2", 5120, 64, 40, 8, 128, 27648, 152064, 131072, false, "32.8B"), qwen2)
	add(dense("qwen2.5-72b", "Qwen2.5 72B", "Qwen/Qwen2.5-72B", "qwen2", 8192, 80, 64, 8, 128, 29568, 152064, 131072, false, "72.7B"), qwen2)
	add(dense("qwen3-8b", "Qwen3 8B", "Qwen/Qwen3-8B", "qwen3", 4096, 36, 32, 8, 128, 12288, 151936, 40960, false, "8.19B"), qwen3)
	add(dense("qwen3-32b", "Qwen3 32B", "Qwen/Qwen3-32B", "qwen3", 5120, 64, 64, 8, 128, 25600, 151936, 40960, false, "32.8B"), qwen3)
	add(dense("qwen3-30b-a3b", "Qwen3 30B-A3B", "Qwen/Qwen3-30B-A3B", "qwen3_moe", 2048, 48, 32, 4, 128, 6144, 151936, 40960, false, "30.5B"), func(m *Model) {
		m.QKNorm = true
		m.Experts, m.ExpertsPerToken, m.ExpertIntermediate = 128, 8, 768
	})
	gemma2 := func(window int) func(*Model) {
		return func(m *Model) {
			m.NormsPerLayer = 4
			m.SlidingWindow, m.SlidingLayers = window, m.Layers/2
		}
	}
	add(dense("gemma-2-2b", "Gemma 2 2B", "google/gemma-2-2b", "gemma2", 2304, 26, 8, 4, 256, 9216, 256000, 8192, true, "2.61B"), gemma2(4096))
	add(dense("gemma-2-9b", "Gemma 2 9B", "google/gemma-2-9b", "gemma2", 3584, 42, 16, 8, 256, 14336, 256000, 8192, true, "9.24B"), gemma2(4096))
	add(dense("gemma-2-27b", "Gemma 2 27B", "google/gemma-2-27b", "gemma2", 4608, 46, 32, 16, 128, 36864, 256000, 8192, true, "27.2B"), gemma2(4096))
	gemma3 := func(vision bool) func(*Model) {
		return func(m *Model) {
			m.NormsPerLayer, m.QKNorm = 4, true
			// Five local layers per global one: layer i is global when i%6 == 5.
			m.SlidingWindow, m.SlidingLayers = 1024, m.Layers-m.Layers/6
			if vision {
				m.VisionParams = gemma3Vision(m.Hidden)
			}
		}
	}
	add(dense("gemma-3-1b", "Gemma 3 1B", "google/gemma-3-1b-pt", "gemma3_text", 1152, 26, 4, 1, 256, 6912, 262144, 32768, true, "1.00B"), func(m *Model) {
		gemma3(false)(m)
		m.SlidingWindow = 512
	})
	add(dense("gemma-3-4b", "Gemma 3 4B", "google/gemma-3-4b-it", "gemma3", 2560, 34, 8, 4, 256, 10240, 262208, 131072, true, "4.30B"), gemma3(true))
	add(dense("gemma-3-12b", "Gemma 3 12B", "google/gemma-3-12b-it", "gemma3", 3840, 48, 16, 8, 256, 15360, 262208, 131072, true, "12.2B"), gemma3(true))
	add(dense("gemma-3-27b", "Gemma 3 27B", "google/gemma-3-27b-it", "gemma3", 5376, 62, 32, 16, 128, 21504, 262208, 131072, true, "27.4B"), gemma3(true))
	add(dense("phi-3-mini", "Phi-3 mini 4k", "microsoft/Phi-3-mini-4k-instruct", "phi3", 3072, 32, 32, 32, 96, 8192, 32064, 4096, false, "3.82B"), func(m *Model) {
		m.SlidingWindow, m.SlidingLayers = 2047, m.Layers
	})
	add(dense("phi-4", "Phi-4", "microsoft/phi-4", "phi3", 5120, 40, 40, 10, 128, 17920, 100352, 16384, false, "14.7B"), nil)
	add(dense("deepseek-v3", "DeepSeek-V3", "deepseek-ai/DeepSeek-V3", "deepseek_v3", 7168, 61, 128, 128, 192, 18432, 129280, 163840, false, "671B"), func(m *Model) {
		m.Experts, m.ExpertsPerToken, m.ExpertIntermediate, m.SharedExperts, m.DenseLayers = 256, 8, 2048, 1, 3
		m.RouterBias = true // e_score_correction_bias
		m.QLoraRank, m.KVLoraRank, m.QKNopeDim, m.QKRopeDim, m.VHeadDim = 1536, 512, 128, 64, 128
	})
	gptOSS := func(m *Model) {
		m.QKVBias, m.OutBias, m.AttnSinks = true, true, true
		m.ExpertBias, m.RouterBias = true, true
		m.ExpertsPerToken, m.ExpertIntermediate = 4, 2880
		m.SlidingWindow, m.SlidingLayers = 128, m.Layers/2
	}
	add(dense("gpt-oss-20b", "gpt-oss 20B", "openai/gpt-oss-20b", "gpt_oss", 2880, 24, 64, 8, 64, 2880, 201088, 131072, false, "20.9B"), func(m *Model) {
		m.Experts = 32
		gptOSS(m)
	})
	add(dense("gpt-oss-120b", "gpt-oss 120B", "openai/gpt-oss-120b", "gpt_oss", 2880, 36, 64, 8, 64, 2880, 201088, 131072, false, "117B"), func(m *Model) {
		m.Experts = 128
		gptOSS(m)
	})
	return ms
}()

// Models returns the model catalog sorted by ID. The slice is a copy.
func Models() []Model {
	ms := make([]Model, len(catalogModels))
	copy(ms, catalogModels)
	sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
	return ms
}

// LookupModel finds a catalog model by ID (case-insensitive).
func LookupModel(id string) (Model, bool) {
	for _, m := range catalogModels {
		if strings.EqualFold(m.ID, id) {
			return m, true
		}
	}
	return Model{}, false
}
