package estimator

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseConfigFiles reads real config.json files and checks that they
// give the catalog's model, dimension for dimension.
func TestParseConfigFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/configs/*.json")
	if err != nil || len(files) < 8 {
		t.Fatalf("want config files in testdata/configs, got %d (%v)", len(files), err)
	}
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(id, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseConfig(data)
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			want, ok := LookupModel(id)
			if !ok {
				t.Fatalf("no catalog model %s", id)
			}
			if got.Params() != want.Params() {
				t.Errorf("Params() = %d, catalog %d", got.Params(), want.Params())
			}
			if len(got.Notes) != 0 {
				t.Errorf("unexpected notes %q", got.Notes)
			}
			// Compare the architecture, not the catalog's labels.
			got.ID, got.Name, got.HFID, got.Published, got.PublishedSource = want.ID, want.Name, want.HFID, want.Published, want.PublishedSource
			if got.MaxPositions == 0 {
				got.MaxPositions = want.MaxPositions // absent from Gemma 3's text_config
			}
			got.Notes, want.Notes = nil, nil
			if gs, ws := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); gs != ws {
				t.Errorf("parsed model differs from the catalog:\n got %s\nwant %s", gs, ws)
			}
		})
	}
}

// llamaCfg is a small valid Llama config with edits applied as raw JSON
// members (later keys win in ParseConfig's decoder).
func llamaCfg(extra string) string {
	base := `"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128`
	if extra == "" {
		return "{" + base + "}"
	}
	return "{" + base + "," + extra + "}"
}

// hostileConfigs are inconsistent or absurd configs (issue 10) with the
// words their error must contain. The fuzz target is seeded with them.
var hostileConfigs = []struct {
	name, json string
	want       []string
}{
	{"empty", ``, []string{"config.json: empty"}},
	{"blank", " \n\t ", []string{"config.json: empty"}},
	{"not json", `{"hidden_size": `, []string{"not valid JSON"}},
	{"not an object", `[1, 2]`, []string{"want a JSON object"}},
	{"null", `null`, []string{"want a JSON object, got null"}},
	{"trailing data", `{"model_type":"llama"} {}`, []string{"extra data"}},
	{"missing keys", `{"model_type":"llama","hidden_size":4096,"num_attention_heads":32}`,
		[]string{"missing required keys: num_hidden_layers, vocab_size, intermediate_size"}},
	{"null required", llamaCfg(`"vocab_size":null`), []string{"missing required keys: vocab_size"}},
	{"gpt2 missing", `{"model_type":"gpt2","n_embd":768}`, []string{"missing required keys: n_layer, n_head, vocab_size"}},
	{"moe missing", llamaCfg(`"model_type":"mixtral"`), []string{"missing required keys: num_local_experts, num_experts_per_tok"}},
	{"mla missing", llamaCfg(`"model_type":"deepseek_v3"`), []string{"missing required keys: kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim"}},
	{"string number", llamaCfg(`"hidden_size":"4096"`), []string{`hidden_size: want a number, got the string "4096"`}},
	{"zero", llamaCfg(`"num_hidden_layers":0`), []string{"num_hidden_layers: want a whole number from 1 to 1024, got 0"}},
	{"zero kv heads", llamaCfg(`"num_key_value_heads":0`), []string{"num_key_value_heads: want a whole number from 1"}},
	{"negative", llamaCfg(`"hidden_size":-1`), []string{"hidden_size: want a whole number from 1 to 131072, got -1"}},
	{"negative head_dim", llamaCfg(`"head_dim":-64`), []string{"head_dim: want a whole number from 1"}},
	{"fraction", llamaCfg(`"hidden_size":64.5`), []string{"hidden_size: want a whole number"}},
	{"huge", llamaCfg(`"hidden_size":1e30`), []string{"hidden_size: want a whole number from 1 to 131072, got 1e30"}},
	{"absurd total", llamaCfg(`"hidden_size":131072,"num_hidden_layers":1024,"intermediate_size":1048576,"num_attention_heads":128`),
		[]string{"more than any real model (limit 20 trillion)"}},
	{"heads do not divide hidden", llamaCfg(`"num_attention_heads":6,"num_key_value_heads":6`),
		[]string{"num_attention_heads (6) does not divide hidden_size (64), and no head_dim"}},
	{"more heads than hidden", llamaCfg(`"num_attention_heads":128,"num_key_value_heads":128`),
		[]string{"num_attention_heads (128) does not divide hidden_size (64)"}},
	{"gqa mismatch", llamaCfg(`"num_attention_heads":6,"num_key_value_heads":4,"head_dim":16`),
		[]string{"must be a multiple of num_key_value_heads"}},
	{"kv above heads", llamaCfg(`"num_key_value_heads":8`), []string{"(4) must be a multiple of num_key_value_heads (8)"}},
	{"gpt2 heads", `{"model_type":"gpt2","n_embd":100,"n_layer":2,"n_head":3,"vocab_size":10}`, []string{"n_head (3) does not divide n_embd (100)"}},
	{"bad bool", llamaCfg(`"tie_word_embeddings":"yes"`), []string{"tie_word_embeddings: want true or false"}},
	{"top-k over experts", llamaCfg(`"model_type":"mixtral","num_local_experts":2,"num_experts_per_tok":3`),
		[]string{"exceeds the number of experts"}},
	{"layer_types length", llamaCfg(`"layer_types":["full_attention"]`), []string{"layer_types: 1 entries for 2 layers"}},
	{"layer_types entry", llamaCfg(`"layer_types":["full_attention", 3]`), []string{"layer_types: entry 1 is 3, not a name"}},
	{"text_config not object", `{"model_type":"gemma3","text_config":"big"}`, []string{`text_config: want an object, got the string "big"`}},
	{"vision_config not object", `{"model_type":"gemma3","text_config":{"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128},"vision_config":[1]}`,
		[]string{"vision_config: want an object, got a list"}},
	{"cross layer out of range", `{"model_type":"mllama","text_config":{"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128,"cross_attention_layers":[5]}}`,
		[]string{"cross_attention_layers[0]: want a whole number from 0 to 1, got 5"}},
	{"cross layer twice", `{"model_type":"mllama","text_config":{"hidden_size":64,"num_hidden_layers":4,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128,"cross_attention_layers":[1,1]}}`,
		[]string{"layer 1 is listed twice"}},
	{"granite mamba", llamaCfg(`"model_type":"granitemoehybrid","shared_intermediate_size":128,"layer_types":["mamba","attention"]`),
		[]string{`layer 0 is "mamba"; only all-attention Granite 4.0 models`}},
	{"quantization_config not object", llamaCfg(`"quantization_config":7`), []string{"quantization_config: want an object, got 7"}},
}

func TestParseConfigErrors(t *testing.T) {
	for _, tt := range hostileConfigs {
		_, err := ParseConfig([]byte(tt.json))
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tt.name, err, w)
			}
		}
	}
	if _, err := ParseConfig(make([]byte, MaxConfigBytes+1)); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("oversized config: %v", err)
	}
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	if _, err := ParseConfig([]byte(deep)); err == nil {
		t.Errorf("20,000 nested lists: no error")
	}
}

// TestParseConfigNotes: inconsistencies that have one sensible reading are
// read that way and say so.
func TestParseConfigNotes(t *testing.T) {
	tests := []struct{ json, note string }{
		{`{"hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128}`, "no model_type"},
		{llamaCfg(`"model_type":"deepseek_v2","kv_lora_rank":8,"qk_nope_head_dim":8,"qk_rope_head_dim":8,"v_head_dim":8,"n_routed_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":16,"first_k_dense_replace":9`),
			"first_k_dense_replace (9) is more than the 2 layers"},
		{llamaCfg(`"model_type":"llava","vision_config":{"hidden_size":8}`), "vision_config's tower is not counted"},
	}
	for _, tt := range tests {
		m, err := ParseConfig([]byte(tt.json))
		if err != nil {
			t.Errorf("%s: %v", tt.json, err)
			continue
		}
		if !strings.Contains(strings.Join(m.Notes, " | "), tt.note) {
			t.Errorf("%s: notes %q lack %q", tt.json, m.Notes, tt.note)
		}
	}
}

func TestParseConfigUnknownType(t *testing.T) {
	m, err := ParseConfig([]byte(`{"model_type":"olmo2","hidden_size":2048,"num_hidden_layers":16,"num_attention_heads":16,"vocab_size":100352,"intermediate_size":8192,"some_new_key":{"x":[1,2]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Notes) == 0 || !strings.Contains(m.Notes[0], `"olmo2"`) {
		t.Errorf("notes %q should say the type was read as Llama-style", m.Notes)
	}
	// Llama layout by hand: untied embeddings, MHA, gated MLP, 2 norms.
	h, L, V, i := int64(2048), int64(16), int64(100352), int64(8192)
	want := 2*V*h + L*(4*h*h+3*h*i+2*h) + h
	if m.Params() != want {
		t.Errorf("Params() = %d, want %d", m.Params(), want)
	}
}
