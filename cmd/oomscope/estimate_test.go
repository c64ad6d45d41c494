package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oomscope/estimator"
)

func TestEstimateGolden(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"default.json", []string{"--json"}, exitCheck},
		{"paper-reference.json", []string{"--json", "--seq", "4096", "--master", "--activations", "paper", "--gpu", "h200-141gb"}, exitCheck},
		{"lora-custom-gpu.json", []string{"--json", "--model", "qwen3-8b", "--method", "lora", "--lora_targets", "q_proj,v_proj", "--ckpt", "full", "--gpu", "24GiB"}, exitOK},
		{"zero3-70b.json", []string{"--json", "--model=llama-3.1-70b", "--gpus=16", "--shard=zero3", "--ckpt=full", "--logits=chunked", "--batch=2", "--seq=4096"}, exitOK},
		{"zero3-master.json", []string{"--json", "--model=llama-3.1-70b", "--gpus=8", "--shard=zero3", "--master", "--ckpt=full", "--batch=2", "--seq=4096"}, exitCheck},
		{"infer-moe.json", []string{"--json", "--model", "qwen3-30b-a3b", "--mode", "infer", "--quant", "int4", "--kv_dtype", "fp8", "--batch", "8", "--seq", "32768", "--gpu", "l4-24gb"}, exitCheck},
		{"config-file.json", []string{"--json", "--config", "../../estimator/testdata/configs/gemma-2-2b.json", "--method", "qlora", "--gpu", "t4-16gb", "--dtype", "fp16", "--ckpt", "full", "--logits", "chunked"}, exitOK},
		{"serve.json", []string{"--json", "--mode", "serve", "--model", "qwen3-14b", "--gpu_memory_utilization", "0.95", "--max_model_len", "8192"}, exitOK},
		{"serve-tp-sglang.txt", []string{"--mode", "serve", "--engine", "sglang", "--model", "qwen3-32b", "--tp", "2", "--max_model_len", "16000"}, exitOK},
		{"serve-fails.txt", []string{"--mode=serve", "--model=llama-3.1-8b", "--gpu=rtx-4090-24gb"}, exitCheck},
		{"tp-offload.txt", []string{"--model=llama-3.1-70b", "--gpus=16", "--tp=2", "--shard=zero3", "--offload=optimizer", "--optim_dtype=fp32", "--ckpt=full", "--seq=4096"}, exitOK},
		{"default.txt", nil, exitCheck},
		{"infer.txt", []string{"--model", "mixtral-8x7b", "--mode", "infer", "--seq", "8192", "--gpu", "a100-80gb"}, exitCheck},
		{"list-models.txt", []string{"--list-models"}, exitOK},
		{"list-gpus.txt", []string{"--list-gpus"}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{"estimate"}, tt.args...), strings.NewReader(""), &out, &errb)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errb.String())
			}
			if errb.Len() != 0 {
				t.Errorf("stderr: %s", errb.String())
			}
			golden(t, "estimate", tt.name, out.Bytes())
		})
	}
}

// TestEstimateJSONContract checks the keys users rely on and that the JSON
// numbers are the estimator's own.
func TestEstimateJSONContract(t *testing.T) {
	var out bytes.Buffer
	code := run([]string{"estimate", "--json", "--model", "llama-3.2-1b", "--batch", "2"}, nil, &out, &out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"params", "trainable_params", "buckets", "total_bytes", "gpu", "fits", "smallest_gpu", "max_batch", "max_seq", "fixes", "formulas", "details",
		"readouts", "host_bytes", "feasible", "error_band", "capacity_margin"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	buckets, _ := m["buckets"].(map[string]any)
	for _, k := range estimator.BucketNames {
		if _, ok := buckets[k]; !ok {
			t.Errorf("buckets lack %q", k)
		}
	}
	r := estimator.DefaultRequest()
	r.Model, r.Batch = "llama-3.2-1b", 2
	want, err := estimator.Estimate(r)
	if err != nil {
		t.Fatal(err)
	}
	if got := int64(m["total_bytes"].(float64)); got != want.TotalBytes {
		t.Errorf("total_bytes %d, estimator says %d", got, want.TotalBytes)
	}
	ro, _ := m["readouts"].(map[string]any)
	for _, k := range estimator.ReadoutNames {
		if got, ok := ro[k].(float64); !ok || int64(got) != want.Readouts.Get(k) {
			t.Errorf("readouts.%s = %v, estimator says %d", k, ro[k], want.Readouts.Get(k))
		}
	}
	for _, f := range m["feasible"].([]any) {
		p := f.(map[string]any)
		if _, ok := p["seq"]; !ok {
			t.Errorf("feasible point lacks seq: %v", p)
		}
		if _, ok := p["max_batch"]; !ok {
			t.Errorf("feasible point lacks max_batch: %v", p)
		}
	}
	// Serving's keys.
	out.Reset()
	if code := run([]string{"estimate", "--json", "--mode", "serve"}, nil, &out, &out); code != exitOK {
		t.Fatalf("serve exit %d: %s", code, out.String())
	}
	var sm struct {
		Serving map[string]any `json:"serving"`
	}
	if err := json.Unmarshal(out.Bytes(), &sm); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"weights_bytes", "non_torch_bytes", "activation_peak_bytes", "kv_cache_bytes", "kv_cache_tokens", "kv_blocks", "max_concurrency"} {
		if _, ok := sm.Serving[k]; !ok {
			t.Errorf("serving lacks %q", k)
		}
	}
	for _, f := range m["fixes"].([]any) {
		fx := f.(map[string]any)
		for _, k := range []string{"name", "saves_bytes", "total_bytes"} {
			if _, ok := fx[k]; !ok {
				t.Errorf("fix lacks %q", k)
			}
		}
	}
}

func TestEstimateErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--batch", "x"}, `batch: "x" is not a whole number`},
		{[]string{"--model", "llama-9"}, `unknown model "llama-9"`},
		{[]string{"--gpu", "tpu-v9"}, `unknown GPU "tpu-v9"`},
		{[]string{"--mode", "serving", "--shard", "fsdp"}, `mode: "serving" is not one of train, infer, serve; shard: "fsdp"`},
		{[]string{"--config", "testdata/estimate/no-such.json"}, "config: open"},
		{[]string{"--config", "-"}, "missing required keys"},
		{[]string{"--config", "testdata/estimate/empty.json"}, "config.json: empty"},
		{[]string{"--config="}, "config: empty path"},
		{[]string{"--checkpoint_bytes", "testdata/estimate/no-such.safetensors"}, "checkpoint_bytes: open"},
		{[]string{"--tp", "3"}, "gpus: 1 GPUs cannot be split into tensor-parallel groups of 3"},
		{[]string{"--tp", "3", "--gpus", "3"}, "tp: 3 does not divide the model's 32 attention heads"},
		{[]string{"--mode", "serve", "--max_model_len", "200000"}, "max_model_len: 200000 is longer than the model's context"},
		{[]string{"--bogus"}, "flag provided but not defined"},
		{[]string{"stray"}, `unexpected argument "stray"`},
		{[]string{"--master", "--autocast"}, "not both"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := run(append([]string{"estimate"}, tt.args...), strings.NewReader(`{"model_type":"llama"}`), &out, &errb)
		if code != exitBadInput {
			t.Errorf("%q: exit %d, want %d", tt.args, code, exitBadInput)
		}
		if !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%q: stderr %q lacks %q", tt.args, errb.String(), tt.want)
		}
	}
}

func TestEstimateHelp(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"estimate", "-h"}, nil, &out, &out); code != exitOK {
		t.Errorf("exit %d", code)
	}
	for _, f := range estimator.Fields() {
		if !strings.Contains(out.String(), "-"+f.Key) {
			t.Errorf("help lacks -%s", f.Key)
		}
		// The help is the field table's, as the page shows it.
		if first := strings.Fields(f.Help)[0:3]; !strings.Contains(strings.Join(strings.Fields(out.String()), " "), strings.Join(first, " ")) {
			t.Errorf("help lacks the field table's text for %s", f.Key)
		}
	}
}

// TestEstimateEmptyStdin: an empty config on stdin is an error, never the
// default model.
func TestEstimateEmptyStdin(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"estimate", "--config", "-"}, strings.NewReader(" \n"), &out, &errb); code != exitBadInput {
		t.Errorf("exit %d, want %d", code, exitBadInput)
	}
	if !strings.Contains(errb.String(), "config.json: empty") || out.Len() != 0 {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
}

// TestEstimateCheckpointFile: --checkpoint_bytes takes an index or a
// .safetensors file and reads only what it needs.
func TestEstimateCheckpointFile(t *testing.T) {
	dir := t.TempDir()
	index := filepath.Join(dir, "model.safetensors.index.json")
	if err := os.WriteFile(index, []byte(`{"metadata": {"total_size": 16060522496}, "weight_map": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	hdr := `{"w":{"dtype":"F8_E4M3","shape":[4096,4096],"data_offsets":[0,16777216]}}`
	st := make([]byte, 8, 8+len(hdr))
	binary.LittleEndian.PutUint64(st, uint64(len(hdr)))
	st = append(st, hdr...) // the tensor data is not there: only the header is read
	single := filepath.Join(dir, "model.safetensors")
	if err := os.WriteFile(single, st, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int64{index: 16_060_522_496, single: 16_777_216} {
		var out, errb bytes.Buffer
		if code := run([]string{"estimate", "--json", "--mode", "infer", "--checkpoint_bytes", path}, nil, &out, &errb); code != exitOK {
			t.Fatalf("%s: exit %d: %s", path, code, errb.String())
		}
		var rep struct {
			Request struct {
				CheckpointBytes int64 `json:"checkpoint_bytes"`
			} `json:"request"`
			Buckets struct{ Weights int64 }
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Request.CheckpointBytes != want || rep.Buckets.Weights != want {
			t.Errorf("%s: checkpoint_bytes %d, weights %d, want %d", path, rep.Request.CheckpointBytes, rep.Buckets.Weights, want)
		}
	}
}

func TestEstimateConfigFromStdin(t *testing.T) {
	cfg, err := os.ReadFile("../../estimator/testdata/configs/gpt2.json")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run([]string{"estimate", "--json", "--config", "-"}, bytes.NewReader(cfg), &out, &out); code != exitOK {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	var rep struct{ Params int64 }
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Params != 124_439_808 {
		t.Errorf("params %d, %v", rep.Params, err)
	}
}

func TestJoinBoolValues(t *testing.T) {
	got := joinBoolValues([]string{"--master", "false", "--autocast", "--json", "-master", "true", "--model", "true"}, "master", "autocast")
	want := []string{"--master=false", "--autocast", "--json", "-master=true", "--model", "true"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("joinBoolValues = %q, want %q", got, want)
	}
}
