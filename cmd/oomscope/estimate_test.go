package main

import (
	"bytes"
	"encoding/json"
	"os"
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
	for _, k := range []string{"params", "trainable_params", "buckets", "total_bytes", "gpu", "fits", "smallest_gpu", "max_batch", "max_seq", "fixes", "formulas", "details"} {
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
		{[]string{"--mode", "serve", "--shard", "fsdp"}, `mode: "serve" is not one of train, infer; shard: "fsdp"`},
		{[]string{"--config", "testdata/estimate/no-such.json"}, "config: open"},
		{[]string{"--config", "-"}, "missing required keys"},
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
	for _, k := range estimator.Keys {
		if !strings.Contains(out.String(), "-"+k) {
			t.Errorf("help lacks -%s", k)
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
