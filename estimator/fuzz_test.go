package estimator

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseConfig: any input gives a model or an error, never a panic; a
// model it accepts can be estimated and analysed.
func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/configs/*.json")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"model_type":"gpt2","n_embd":8,"n_layer":1,"n_head":2,"vocab_size":10}`))
	f.Add([]byte(`{"model_type":"deepseek_v3","hidden_size":8,"num_hidden_layers":2,"num_attention_heads":2,"vocab_size":10,"intermediate_size":8,"kv_lora_rank":4,"qk_nope_head_dim":2,"qk_rope_head_dim":2,"v_head_dim":2,"n_routed_experts":2,"num_experts_per_tok":1,"moe_intermediate_size":4,"first_k_dense_replace":9}`))
	f.Add([]byte(`{"text_config":{"hidden_size":1}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseConfig(data)
		if err != nil {
			return
		}
		if m.Params() <= 0 {
			t.Fatalf("accepted config with %d params", m.Params())
		}
		r := DefaultRequest()
		r.Model, r.Config, r.Method, r.Seq = ModelCustom, string(data), MethodLoRA, 64
		rep, err := Analyze(r)
		if err != nil {
			t.Fatalf("accepted config fails to estimate: %v", err)
		}
		if rep.TotalBytes <= 0 {
			t.Fatalf("total %d", rep.TotalBytes)
		}
	})
}

// FuzzParseQuery: any query gives a request or an error; an accepted
// request round-trips through Query.
func FuzzParseQuery(f *testing.F) {
	f.Add("model=qwen3-8b&gpu=80GiB&batch=4&seq=8192&method=lora&lora_targets=q_proj,v_proj")
	f.Add("mode=infer&quant=int4&kv_dtype=fp8&headroom=5%25")
	f.Add("gpus=8&shard=zero3&master=true&optimizer=adafactor&ckpt=selective&attn=eager")
	f.Add("batch=&seq=-1&gpu=0.1GB")
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		r, err := ParseQuery(q)
		if err != nil {
			return
		}
		back, err := ParseQuery(r.Query())
		if err != nil {
			t.Fatalf("canonical query %q of an accepted request fails: %v", r.QueryString(), err)
		}
		if back != r {
			t.Fatalf("round trip changed the request:\n%+v\n%+v", r, back)
		}
		if res, err := Estimate(r); err == nil && res.TotalBytes <= 0 {
			t.Fatalf("total %d", res.TotalBytes)
		}
	})
}
