package triage

import (
	"encoding/json"
	"math"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"oomscope/estimator"
)

// noCacheBlocks is vLLM V0's error when weights and activations leave
// nothing for the KV cache; appended to start-up logs that did not fail.
const noCacheBlocks = "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."

// opens checks that the link opens an estimate without an error, as the
// page does: the query parses and the estimator analyses it.
func opens(t *testing.T, l *EstimatorLink) estimator.Request {
	t.Helper()
	q, err := url.ParseQuery(l.Query)
	if err != nil {
		t.Fatalf("query %q: %v", l.Query, err)
	}
	r, err := estimator.ParseQuery(q)
	if err != nil {
		t.Fatalf("the estimator rejects %q: %v", l.Query, err)
	}
	if _, err := estimator.Advise(r); err != nil {
		t.Fatalf("the estimate of %q fails: %v", l.Query, err)
	}
	if len(l.Reasons) != len(l.Params) {
		t.Errorf("%d reasons for %d params", len(l.Reasons), len(l.Params))
	}
	return r
}

// vllmLink returns the link of the last vLLM finding of text.
func vllmLink(t *testing.T, text string) (*Finding, *EstimatorLink) {
	t.Helper()
	var f *Finding
	res := Triage(text, Options{})
	for i := range res.Findings {
		if res.Findings[i].Backend == "vllm" {
			f = &res.Findings[i]
		}
	}
	if f == nil || f.Estimator == nil {
		t.Fatalf("no vLLM finding with a link in %q", text)
	}
	return f, f.Estimator
}

// TestServingLinkExamples: every real vLLM message of the shared examples
// and realPath links to a serving estimate that opens without an error and
// carries the numbers the example's expect lists (max_model_len,
// gpu_memory_utilization, the KV cache tokens to compare with).
func TestServingLinkExamples(t *testing.T) {
	n := 0
	for _, ex := range append(loadExamples(t), loadJSONL(t, realPath)...) {
		if ex.Kind != "vllm" && ex.Kind != "vllm-startup" {
			continue
		}
		n++
		t.Run(ex.Source, func(t *testing.T) {
			_, l := vllmLink(t, ex.Text)
			r := opens(t, l)
			if r.Mode != estimator.ModeServe || r.Engine != estimator.EngineVLLM {
				t.Errorf("mode %q engine %q, want serve and vllm", r.Mode, r.Engine)
			}
			var want struct {
				MaxModelLen   int      `json:"max_model_len"`
				Util          float64  `json:"gpu_memory_utilization"`
				KVCacheTokens int64    `json:"kv_cache_tokens"`
				Total         *float64 `json:"total_bytes"`
			}
			raw, _ := json.Marshal(ex.Expect)
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if want.MaxModelLen > 0 && r.MaxModelLen != want.MaxModelLen {
				// Longer than the default model's context: left out, said why.
				def := estimator.DefaultRequest()
				def.Mode, def.MaxModelLen = estimator.ModeServe, want.MaxModelLen
				if _, err := estimator.Estimate(def); err == nil || !slices.ContainsFunc(l.Notes, func(n string) bool { return strings.HasPrefix(n, "max_model_len=") }) {
					t.Errorf("max_model_len %d, want %d (or a note why not); notes %q", r.MaxModelLen, want.MaxModelLen, l.Notes)
				}
			}
			if want.Util > 0 && r.GPUMemoryUtil != want.Util {
				t.Errorf("gpu_memory_utilization %v, want %v", r.GPUMemoryUtil, want.Util)
			}
			if want.KVCacheTokens > 0 && !slices.Contains(l.Compare, Printed{"serving.kv_cache_tokens", "Tokens the KV cache holds", strconv.FormatInt(want.KVCacheTokens, 10)}) {
				t.Errorf("compare %v lacks the KV cache's %d tokens", l.Compare, want.KVCacheTokens)
			}
			if want.Total == nil && slices.ContainsFunc(l.Params, func(p [2]string) bool { return p[0] == "gpu" }) {
				t.Errorf("a gpu from a message that prints no capacity: %q", l.Query)
			}
			if want.Total != nil {
				g, err := estimator.ResolveGPU(r.GPU)
				if err != nil || math.Abs(float64(g.CapacityBytes)-*want.Total) > gpuMatchTolerance {
					t.Errorf("gpu %q (%v), want a capacity of %v B", r.GPU, err, *want.Total)
				}
			}
		})
	}
	if n < 8 {
		t.Errorf("only %d vLLM examples", n)
	}
}

// TestServingLinkStartupLogs pastes each real vLLM start-up log (the
// estimator's copy of vllm-startup-logs.jsonl), with a vLLM error after it
// where it has none:
// the link carries the settings its lines state and only those (want), with
// the values of the estimator's own query for that log (MeasuredSetups,
// written from the log's record), and opens without an error.
func TestServingLinkStartupLogs(t *testing.T) {
	want := map[string][]string{
		"vllm-i10517-rtx3090-llama3.1-8b-len20000":                       {"gpu", "gpu_memory_utilization"},
		"vllm-i10517-rtx3090-llama3.1-8b-len29000-fail":                  {"gpu", "max_model_len", "gpu_memory_utilization"},
		"vllm-pr10511-h100-llama3-8b-tp1":                                {"gpu", "gpu_memory_utilization"},
		"vllm-i13074-16xh20-deepseek-r1-tp8-pp2":                         {"gpu", "gpu_memory_utilization"},
		"vllm-file-aws-sagemaker-8xa100-40gb-deepseek-coder-v2-lite-tp8": {"gpu", "gpu_memory_utilization"},
		"vllm-file-dennislee-a100-80gb-qwen2-7b-util0.5":                 {"model", "max_model_len", "gpu_memory_utilization"},
		"vllm-file-dennislee-a100-80gb-qwen2-7b-util0.25":                {"model", "max_model_len", "gpu_memory_utilization"},
		"vllm-file-dennislee-2xa100-80gb-qwen2-7b-tp2-util0.5":           {"model", "tp", "max_model_len", "gpu_memory_utilization"},
		"vllm-file-dennislee-2xa100-40gb-qwen2-7b-tp2-2nodes-util0.5":    {"model", "tp", "max_model_len", "gpu_memory_utilization"},
		"vllm-file-dennislee-4xa100-80gb-gpt-oss-120b-tp4-util0.8":       {"model", "tp", "max_model_len", "gpu_memory_utilization"},
		"vllm-web-myoceane-a100-gpt-oss-20b-len131072":                   {"model", "max_model_len", "gpu_memory_utilization"},
		"vllm-file-ibm-codeengine-l40s-granite-4.0-micro-fp8":            nil,
		"vllm-i23278-h100-gpt-oss-120b-fail":                             nil,
		"vllm-llmd-h100-mistral-small-3.2-24b-len16000":                  nil,
		"vllm-file-arm-dgx-spark-mistral-7b-gptq-len32768":               nil,
		"vllm-i21348-4xh100-qwen3-235b-a22b-fp8-tp4":                     nil,
		"vllm-pr2031-a100-80gb-llama2-7b-tp1":                            nil,
		"vllm-llmdplanner-h100-qwen3-14b-len8192-v0.17.0":                nil,
	}
	queries := map[string]url.Values{}
	for _, m := range estimator.MeasuredSetups() {
		q, err := url.ParseQuery(m.Query)
		if err != nil {
			t.Fatal(err)
		}
		queries[m.ID] = q
	}
	data, err := os.ReadFile("../testdata/vllm-startup-logs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			ID    string   `json:"id"`
			Lines []string `json:"lines"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		keys, ok := want[rec.ID]
		if !ok {
			continue
		}
		seen++
		t.Run(rec.ID, func(t *testing.T) {
			text := strings.Join(rec.Lines, "\n")
			if !slices.ContainsFunc(Triage(text, Options{}).Findings, func(f Finding) bool { return f.Backend == "vllm" }) {
				text += "\n" + noCacheBlocks + "\n" // a start-up that did not fail
			}
			_, l := vllmLink(t, text)
			opens(t, l)
			var got []string
			for _, p := range l.Params {
				if p[0] != "mode" && p[0] != "engine" {
					got = append(got, p[0])
				}
			}
			if !slices.Equal(got, keys) {
				t.Errorf("carried %v, want %v (query %q)", got, keys, l.Query)
			}
			q := queries[rec.ID]
			for _, p := range l.Params {
				if !q.Has(p[0]) && p[0] != "gpu" {
					continue
				}
				switch w := q.Get(p[0]); p[0] {
				case "gpu":
					if w == "" {
						continue
					}
					a, errA := estimator.ResolveGPU(p[1])
					b, errB := estimator.ResolveGPU(w)
					if errA != nil || errB != nil || math.Abs(float64(a.CapacityBytes-b.CapacityBytes)) > gpuMatchTolerance {
						t.Errorf("gpu=%s, the estimator's query has gpu=%s", p[1], w)
					}
				case "model", "quant", "engine", "mode":
					if p[1] != w {
						t.Errorf("%s=%s, the estimator's query has %s", p[0], p[1], w)
					}
				default:
					x, _ := strconv.ParseFloat(p[1], 64)
					y, _ := strconv.ParseFloat(w, 64)
					if x != y {
						t.Errorf("%s=%s, the estimator's query has %s", p[0], p[1], w)
					}
				}
			}
		})
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d logs", seen, len(want))
	}
}

// TestVLLMSettings reads the settings in each form a paste states them.
func TestVLLMSettings(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]string
	}{
		{"command line", "$ vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768 --gpu-memory-utilization=0.95 --tensor-parallel-size 2 --kv-cache-dtype fp8 --max-num-seqs 64",
			map[string]string{"model": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": "32768", "gpu_memory_utilization": "0.95", "tp": "2", "kv_dtype": "fp8", "max_num_seqs": "64"}},
		{"--model flag", "python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct-AWQ --quantization awq --block-size 32",
			map[string]string{"model": "Qwen/Qwen2.5-7B-Instruct-AWQ", "quant": "awq", "block_size": "32"}},
		{"Python", `llm = LLM(model="google/gemma-2-9b", gpu_memory_utilization=0.8, max_model_len=8192, max_num_batched_tokens=4096)`,
			map[string]string{"model": "google/gemma-2-9b", "gpu_memory_utilization": "0.8", "max_model_len": "8192", "max_num_batched_tokens": "4096"}},
		{"engine config", "INFO 07-01 llm_engine.py:161] Initializing an LLM engine (v0.5.0) with config: model='mistralai/Mistral-7B-Instruct-v0.2', speculative_config=None, tokenizer='mistralai/Mistral-7B-Instruct-v0.2', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, quantization=None, kv_cache_dtype=auto, seed=0)",
			map[string]string{"model": "mistralai/Mistral-7B-Instruct-v0.2", "max_model_len": "32768", "tp": "1", "quant": "None", "kv_dtype": "auto"}},
		{"profile", "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90\n# GPU blocks: 1478, # CPU blocks: 2048",
			map[string]string{"total_gpu_memory": "23.58GiB", "gpu_memory_utilization": "0.90", "kv_cache_bytes": "2.89", "kv_blocks": "1478"}},
		{"prose is not a setting", "The model's max seq len (4096) is larger than the KV cache. Try increasing gpu_memory_utilization or decreasing max_model_len when initializing the engine. The model is loaded; model weights take 14.96GiB",
			map[string]string{"gpu_memory_utilization": "or", "max_model_len": "when"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for k, ss := range vllmSettings(tt.text) {
				for _, s := range ss {
					got[k] = s.value
					if s.key != k || tt.text[s.start:s.end] != s.phrase || !strings.Contains(s.phrase, s.value) {
						t.Errorf("%s: %s at [%d,%d) phrase %q, value %q", k, s.key, s.start, s.end, s.phrase, s.value)
					}
				}
			}
			if !mapsEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	// The prose case's words are read but never carried: the link checks
	// each value with the estimator.
	_, l := vllmLink(t, tests[len(tests)-1].text+"\n"+noCacheBlocks)
	if got := l.Query; got != "mode=serve&engine=vllm" {
		t.Errorf("prose gave %q", got)
	}
	if len(l.Notes) == 0 {
		t.Error("no note for the words that are no values")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCatalogModel maps Hugging Face names as vLLM logs them to the
// catalog: instruct and chat fine-tunes share their base's shape, a
// quantization suffix becomes quant, unknown models are not guessed.
func TestCatalogModel(t *testing.T) {
	tests := []struct{ name, id, quant string }{
		{"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b", ""},
		{"meta-llama/Meta-Llama-3-8B", "llama-3-8b", ""},
		{"Qwen2-7B-Instruct", "qwen2-7b", ""},
		{"/models/Qwen/Qwen3-14B", "qwen3-14b", ""},
		{"Qwen/Qwen3-235B-A22B-FP8", "qwen3-235b-a22b", estimator.QuantFP8},
		{"RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "llama-3.3-70b", estimator.QuantFP8},
		{"TheBloke/Mistral-7B-Instruct-v0.2-GPTQ", "mistral-7b-v0.2", estimator.QuantGPTQ},
		{"mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b", ""},
		{"mistralai/Mistral-Small-3.2-24B-Instruct-2506", "mistral-small-3.2-24b", ""},
		{"google/gemma-3-27b-it", "gemma-3-27b", ""},
		{"gpt-oss-120b", "gpt-oss-120b", ""},
		{"Qwen/Qwen2.5-7B-Instruct-AWQ", "qwen2.5-7b", estimator.QuantAWQ},
		{"deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek-r1-distill-qwen-7b", ""},
		{"meta-llama/Llama-3.1-8B-Vision", "", ""},
		{"Qwen/Qwen2.5-VL-7B-Instruct", "", ""},
		{"my-finetune", "", ""},
	}
	for _, tt := range tests {
		m, q, ok := catalogModel(tt.name)
		if got := map[bool]string{true: m.ID}[ok]; got != tt.id || (ok && q != tt.quant) {
			t.Errorf("%s: %q quant %q (found %v), want %q quant %q", tt.name, m.ID, q, ok, tt.id, tt.quant)
		}
	}
}
