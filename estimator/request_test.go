package estimator

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestDefaultQueryIsEmpty(t *testing.T) {
	if q := DefaultRequest().QueryString(); q != "" {
		t.Errorf("default request encodes as %q, want empty", q)
	}
	r, err := ParseQuery(url.Values{})
	if err != nil || !reflect.DeepEqual(r, DefaultRequest()) {
		t.Errorf("ParseQuery(empty) = %+v, %v", r, err)
	}
}

func TestParseQuery(t *testing.T) {
	tests := []struct {
		query string
		check func(Request) bool
		canon string // QueryString of the parsed request
	}{
		{"model=qwen3-8b&gpu=a100-80gb&batch=4&seq=8192", func(r Request) bool { return r.Model == "qwen3-8b" && r.Batch == 4 && r.Seq == 8192 },
			"model=qwen3-8b&gpu=a100-80gb&batch=4&seq=8192"},
		{"seq=8192&batch=4&gpu=A100-80GB&model=Qwen3-8B", func(r Request) bool { return r.GPU == "a100-80gb" && r.Model == "qwen3-8b" },
			"model=qwen3-8b&gpu=a100-80gb&batch=4&seq=8192"},
		{"gpu=22.03GiB", func(r Request) bool { return r.GPU == "22.03GiB" }, "gpu=22.03GiB"},
		{"headroom=5%25&master=true", func(r Request) bool { return r.Headroom == 5 && r.Master }, "master=true&headroom=5"},
		{"method=lora&lora_targets=q_proj,+v_proj&lora_rank=8", func(r Request) bool { return r.LoraTargets == "q_proj,v_proj" && r.LoraRank == 8 },
			"method=lora&lora_rank=8&lora_targets=q_proj%2Cv_proj"},
		{"mode=infer&quant=int4&kv_dtype=fp8", func(r Request) bool { return r.Mode == ModeInfer && r.Quant == QuantInt4 }, "mode=infer&quant=int4&kv_dtype=fp8"},
		{`config={"model_type":"gpt2"}`, func(r Request) bool { return r.Model == ModelCustom }, "config=%7B%22model_type%22%3A%22gpt2%22%7D"},
		{"model=llama-3.1-8b&batch=1", func(r Request) bool { return true }, ""},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ParseQuery(q)
		if err != nil {
			t.Errorf("ParseQuery(%q): %v", tt.query, err)
			continue
		}
		if !tt.check(r) {
			t.Errorf("ParseQuery(%q) = %+v", tt.query, r)
		}
		if got := r.QueryString(); got != tt.canon {
			t.Errorf("ParseQuery(%q).QueryString() = %q, want %q", tt.query, got, tt.canon)
		}
		// Round trip: the canonical query parses back to the same request.
		back, err := ParseQuery(r.Query())
		if err != nil || !reflect.DeepEqual(back, r) {
			t.Errorf("round trip of %q: %+v, %v", tt.query, back, err)
		}
	}
}

func TestParseQueryErrors(t *testing.T) {
	tests := []struct{ query, want string }{
		{"batch=four", `batch: "four" is not a whole number: enter 1 to 65,536`},
		{"batch=0", "batch: 0 is out of range"},
		{"seq=99999999999", "seq: 99999999999 is out of range"},
		{"mode=training", `mode: "training" is not one of train, infer, serve`},
		{"gpu_memory_utilization=1.5", "gpu_memory_utilization: 1.5 is out of range (a fraction above 0, at most 1)"},
		{"gpu_memory_utilization=0", "gpu_memory_utilization: 0 is out of range"},
		{"max_model_len=-5", "max_model_len: -5 is out of range (0 to 16,777,216 (0: the model's context))"},
		{"tp=0", "tp: 0 is out of range (1 to 64)"},
		{"gpus=6&tp=4", "6 GPUs cannot be split into tensor-parallel groups of 4"},
		{"checkpoint_bytes=lots", `checkpoint_bytes: "lots" is not a byte count`},
		{"offload=disk", `offload: "disk" is not one of none, optimizer, params`},
		{"optim_dtype=fp8", `optim_dtype: "fp8" is not one of auto, fp32, bf16, 8bit`},
		{"config=", "config: model=custom needs a config.json"},
		{"dtype=fp8", `dtype: "fp8" is not one of fp32, bf16, fp16`},
		{"shard=fsdp", `shard: "fsdp" is not one of`},
		{"master=maybe", `master: "maybe" is not true or false`},
		{"headroom=100", "headroom: 100 is out of range"},
		{"headroom=NaN", "headroom: NaN is out of range"},
		{"bacth=4", `unknown parameter "bacth"`},
		{"batch=1&batch=2", "batch: given 2 times"},
		{"dtype=fp32&autocast=true", "dtype must be bf16 or fp16"},
		{"dtype=fp32&master=true", "master: fp32 master weights need 16-bit weights"},
		{"master=true&autocast=true", "not both"},
		{"model=custom", "config: model=custom needs a config.json"},
		{"model=gpt2&config={}", `model must be "custom"`},
		{"lora_targets=", "lora_targets: empty"},
		{"batch=0&mode=x", "mode: \"x\" is not one of"},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParseQuery(q)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseQuery(%q) error %v, want it to contain %q", tt.query, err, tt.want)
		}
	}
}

// TestEveryKeyRoundTrips sets every key to a non-default value and checks
// Query/ParseQuery carry it.
func TestEveryKeyRoundTrips(t *testing.T) {
	values := map[string]string{
		"model": "custom", "config": `{"model_type":"gpt2","n_embd":64,"n_layer":2,"n_head":4,"vocab_size":100}`,
		"gpu": "b200-180gb", "mode": "infer", "method": "qlora", "dtype": "fp16", "master": "true", "autocast": "false",
		"optimizer": "lion", "batch": "3", "seq": "333", "accum": "7", "ckpt": "selective", "attn": "eager",
		"logits": "chunked", "gpus": "4", "shard": "zero2", "lora_rank": "32", "lora_targets": "attention",
		"quant": "fp8", "kv_dtype": "fp8", "headroom": "12.5", "activations": "paper",
		"checkpoint_bytes": "16060522496", "optim_dtype": "fp32", "tp": "2", "offload": "optimizer", "engine": "sglang",
		"gpu_memory_utilization": "0.85", "max_model_len": "4096", "max_num_seqs": "64", "max_num_batched_tokens": "4096", "block_size": "32",
	}
	q := url.Values{}
	for k, v := range values {
		q.Set(k, v)
	}
	r, err := ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Keys {
		if got := r.Get(k); got != values[k] && !(k == "autocast" && got == "false") {
			t.Errorf("%s = %q, want %q", k, got, values[k])
		}
	}
	back, err := ParseQuery(r.Query())
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	if len(Keys) != reflect.TypeOf(Request{}).NumField() {
		t.Errorf("Keys has %d entries, Request %d fields", len(Keys), reflect.TypeOf(Request{}).NumField())
	}
	for i, k := range Keys {
		if tag := reflect.TypeOf(Request{}).Field(i).Tag.Get("json"); strings.Split(tag, ",")[0] != k {
			t.Errorf("field %d json tag %q, key %q", i, tag, k)
		}
	}
}

// TestFieldsNameTheirFields sets each key in turn and checks that exactly
// the Request field whose json tag is that key changed.
func TestFieldsNameTheirFields(t *testing.T) {
	values := map[string]string{"master": "true", "autocast": "true", "headroom": "33", "gpu": "T4-16GB", "gpu_memory_utilization": "0.5"}
	typ := reflect.TypeOf(Request{})
	for _, k := range Keys {
		v, ok := values[k]
		if !ok {
			v = "12345"
		}
		before := DefaultRequest()
		after := before
		if err := after.Set(k, v); err != nil {
			t.Errorf("Set(%q, %q): %v", k, v, err)
			continue
		}
		bv, av := reflect.ValueOf(before), reflect.ValueOf(after)
		for i := 0; i < typ.NumField(); i++ {
			tag := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
			changed := !reflect.DeepEqual(bv.Field(i).Interface(), av.Field(i).Interface())
			if changed != (tag == k) {
				t.Errorf("Set(%q, %q) changed %s: %v", k, v, typ.Field(i).Name, changed)
			}
		}
	}
}
