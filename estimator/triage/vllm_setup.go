package triage

import (
	"regexp"
	"sort"
	"strings"
	"sync"

	"oomscope/estimator"
)

// vLLM's errors name no model and few settings, but the log pasted with
// them usually does: the engine's "non-default args: {...}" and "with
// config: model=..." lines, the memory profile ("total_gpu_memory=23.58GiB
// ... gpu_memory_utilization=0.90"), the KV cache it sized, and often the
// command that started it (vllm serve MODEL --max-model-len 8192, or
// LLM(model=..., ...)). The estimator link carries what they state.

// maxSettingMatches bounds the matches of each setting pattern read from
// one paste: a log states a setting a few times, and a paste that states
// one a thousand times (an attack on the time and memory triage takes)
// gets the first ones.
const maxSettingMatches = 1000

// settingValue is a setting's value: a number, size, name or path.
const settingValue = `([\w./:][\w./:-]*)`

// vllmSettingRes match a setting as the log's argument dict, its config
// line, its memory profile (key=value, key (value) or a table row), a
// command-line flag or a Python keyword states it, group 1 the value; each
// starts with a literal, so regexp skips to it (a paste may be megabytes).
// model is matched only where it is assigned (model=, 'model':, --model,
// vllm serve), not as the English word.
var vllmSettingRes = sync.OnceValue(func() []struct {
	key string
	re  *regexp.Regexp
} {
	spelled := []struct{ key, spelling string }{
		{"max_model_len", `max[-_]model[-_]len`}, {"max_model_len", `max_seq_len`},
		{"gpu_memory_utilization", `gpu[-_]memory[-_]utilization`}, {"tp", `tensor[-_]parallel[-_]size`},
		{"quant", `quantization`}, {"kv_dtype", `kv[-_]cache[-_]dtype`}, {"max_num_seqs", `max[-_]num[-_]seqs`},
		{"max_num_batched_tokens", `max[-_]num[-_]batched[-_]tokens`}, {"block_size", `block[-_]size`},
		{"total_gpu_memory", `total_gpu_memory`},
		{"model", `model(?:\s*=\s*['"]?|['"]\s*:\s*['"])`}, {"model", `--model[ \t]*=?[ \t]*`}, {"model", `vllm\s+serve\s+`},
	}
	out := make([]struct {
		key string
		re  *regexp.Regexp
	}, len(spelled))
	for i, s := range spelled {
		sep := `['"]?(?:\s*[=:]\s*|\s*\(\s*|[ \t]+)['"]?`
		if s.key == "model" {
			sep = ""
		}
		out[i].key, out[i].re = s.key, regexp.MustCompile(s.spelling+sep+settingValue)
	}
	return out
})

// vllmKVLogs match the KV cache a start-up sized, group 1 the number: V0's
// profile ("kv_cache_size=2.89GiB"), V1's "Available KV cache memory: 8.11
// GiB" and "GPU KV cache size: 178,880 tokens", and "# GPU blocks: 1478".
var vllmKVLogs = []struct {
	key string
	re  lazyRegexp
}{
	{"kv_cache_bytes", lazy(`kv_cache_size=(\d+(?:\.\d+)?)GiB`)},
	{"kv_cache_bytes", lazy(`Available\s+KV\s+cache\s+memory:\s*(-?\d+(?:\.\d+)?)\s*GiB`)},
	{"kv_cache_tokens", lazy(`GPU\s+KV\s+cache\s+size:\s*(\d[\d,]{0,15})\s+tokens`)},
	{"kv_blocks", lazy(`GPU\s+blocks:\s*(\d{1,12})\b`)},
}

// setting is one vLLM setting the paste states.
type setting struct {
	key    string // the estimator's key, or total_gpu_memory
	value  string // as printed
	phrase string // where the paste states it
	start  int    // the phrase's span in the input
	end    int
}

// vllmSettings returns every setting text states by key, each key's in
// order: keys in the estimator's vocabulary (max_model_len,
// gpu_memory_utilization, tp, quant, kv_dtype, max_num_seqs,
// max_num_batched_tokens, block_size, model) plus total_gpu_memory and the
// KV numbers (kv_cache_bytes, kv_cache_tokens, kv_blocks).
func vllmSettings(text string) map[string][]setting {
	out := map[string][]setting{}
	word := func(i int) bool { return i >= 0 && i < len(text) && isWordByte(text[i]) }
	for _, kv := range vllmSettingRes() {
		for _, m := range kv.re.FindAllStringSubmatchIndex(text, maxSettingMatches) {
			start, end := m[0], m[1]
			if word(start-1) || m[3]-m[2] > 200 {
				continue // inside a longer name (model_tag, my_block_size), or no value
			}
			if start > 0 && strings.IndexByte(`'"`, text[start-1]) >= 0 {
				start-- // the phrase opens its quote,
			}
			if end < len(text) && strings.IndexByte(`'")`, text[end]) >= 0 {
				end++ // and closes it or its parenthesis
			}
			out[kv.key] = append(out[kv.key], setting{kv.key, text[m[2]:m[3]], text[start:end], start, end})
		}
	}
	for _, kv := range vllmKVLogs {
		for _, m := range kv.re().FindAllStringSubmatchIndex(text, maxSettingMatches) {
			if !word(m[0] - 1) {
				out[kv.key] = append(out[kv.key], setting{kv.key, text[m[2]:m[3]], text[m[0]:m[1]], m[0], m[1]})
			}
		}
	}
	for _, ss := range out {
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].start < ss[j].start })
	}
	return out
}

// settingsFor returns, for each key, the setting stated last before end, or
// failing that the first one after it: the run whose error this is.
func settingsFor(byKey map[string][]setting, end int) map[string]setting {
	out := map[string]setting{}
	for k, ss := range byKey {
		i := sort.Search(len(ss), func(i int) bool { return ss[i].start >= end })
		if i > 0 {
			i--
		}
		out[k] = ss[i]
	}
	return out
}

// reQuantSuffix matches the quantization a checkpoint's name ends with
// (Qwen3-235B-A22B-FP8, Llama-3.3-70B-Instruct-FP8-dynamic, ...-AWQ,
// ...-GPTQ-Int4, ...-bnb-4bit).
var reQuantSuffix = lazy(`[-_.](fp8(?:[-_]dynamic)?|awq|gptq(?:[-_]int[48])?|int4|int8|w4a16|bnb[-_]4bit)$`)

// quantOfSuffix maps a checkpoint-name suffix to the estimator's quant.
func quantOfSuffix(s string) string {
	switch {
	case strings.HasPrefix(s, "fp8"):
		return estimator.QuantFP8
	case strings.HasPrefix(s, "gptq"):
		return estimator.QuantGPTQ
	case s == "w4a16", s == "int4":
		return estimator.QuantInt4
	case s == "int8":
		return estimator.QuantInt8
	case strings.HasPrefix(s, "bnb"):
		return estimator.QuantBnB
	}
	return s // awq
}

// modelKey reduces a Hugging Face repository name or local path to what
// identifies the architecture: the last path element, lower case, without
// the tokens that name a fine-tune of the same weights' shape (instruct,
// chat, it, hf, pt, base, a trailing date) and without a quantization
// suffix, which it returns as the estimator's quant ("" if none).
func modelKey(name string) (key, quant string) {
	name = strings.ToLower(strings.Trim(name, `'"/`))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if m := reQuantSuffix().FindStringSubmatch(name); m != nil {
		quant = quantOfSuffix(m[1])
		name = name[:len(name)-len(m[0])]
	}
	var kept []string
	for _, tok := range strings.Split(name, "-") {
		switch tok {
		case "instruct", "chat", "it", "hf", "pt", "base":
			continue
		}
		kept = append(kept, tok)
	}
	if n := len(kept); n > 1 && len(kept[n-1]) == 4 && strings.Trim(kept[n-1], "0123456789") == "" {
		kept = kept[:n-1] // Mistral's -2506
	}
	return strings.Join(kept, "-"), quant
}

// catalogModel finds the catalog model a vLLM model argument names: its
// Hugging Face id or catalog id, up to fine-tune and quantization
// suffixes. quant is the quantization the name states.
func catalogModel(name string) (m estimator.Model, quant string, ok bool) {
	key, quant := modelKey(name)
	if key == "" {
		return m, "", false
	}
	for _, c := range estimator.Models() {
		if k, _ := modelKey(c.HFID); k == key || strings.EqualFold(c.ID, key) {
			return c, quant, true
		}
	}
	return m, quant, false
}

// vllmQuant maps vLLM's --quantization and --kv-cache-dtype values to the
// estimator's, "" when the estimator has no such choice.
func vllmQuant(key, v string) string {
	v = strings.ToLower(v)
	switch {
	case v == "" || v == "none" || v == "auto":
		return ""
	case strings.HasPrefix(v, "fp8"):
		return estimator.QuantFP8
	case key == "kv_dtype":
		return ""
	case v == "awq" || v == "awq_marlin":
		return estimator.QuantAWQ
	case v == "gptq" || v == "gptq_marlin":
		return estimator.QuantGPTQ
	case v == "bitsandbytes":
		return estimator.QuantBnB
	}
	return ""
}

// isWordByte reports whether c is an ASCII letter, digit or underscore.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
