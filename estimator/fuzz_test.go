package estimator

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseConfig: any input gives a model or an error, never a panic; a
// model it accepts has a sane size and can be estimated, analysed and
// served. Seeded with real configs, the catalog's records and the hostile
// configs of TestParseConfigErrors.
func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/configs/*.json")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	_, recs, _ := loadCatalog()
	for _, rec := range recs {
		f.Add([]byte(rec.Config))
	}
	for _, h := range hostileConfigs {
		f.Add([]byte(h.json))
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
		if m.Params() <= 0 || float64(m.Params()) > maxParams {
			t.Fatalf("accepted config with %d params", m.Params())
		}
		if m.Hidden <= 0 || m.Layers <= 0 || m.Heads <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0 || m.Vocab <= 0 {
			t.Fatalf("accepted a config with a zero size: %+v", m)
		}
		r := DefaultRequest()
		r.Model, r.Config, r.Method, r.Seq = ModelCustom, string(data), MethodLoRA, 64
		rep, err := Advise(r)
		if err != nil {
			t.Fatalf("accepted config fails to estimate: %v", err)
		}
		if rep.TotalBytes <= 0 {
			t.Fatalf("total %d", rep.TotalBytes)
		}
		r.Mode, r.MaxModelLen = ModeServe, 256
		if _, err := Estimate(r); err != nil && !strings.Contains(err.Error(), "max_model_len") {
			t.Fatalf("accepted config fails to serve: %v", err)
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
	f.Add("mode=serve&engine=sglang&gpu_memory_utilization=95%25&max_model_len=4096&tp=2&block_size=32&max_num_seqs=8")
	f.Add("offload=params&optim_dtype=fp32&checkpoint_bytes=16GiB&utm_source=x&embed=1")
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
