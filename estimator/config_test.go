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
			if got.Params() != wantParams[id] {
				t.Errorf("Params() = %d, want %d", got.Params(), wantParams[id])
			}
			if len(got.Notes) != 0 {
				t.Errorf("unexpected notes %q", got.Notes)
			}
			// Compare the architecture, not the catalog's labels.
			got.ID, got.Name, got.HFID, got.Published = want.ID, want.Name, want.HFID, want.Published
			if got.MaxPositions == 0 {
				got.MaxPositions = want.MaxPositions // absent from Gemma 3's text_config
			}
			if got.Arch == "gemma3_text" && want.Arch == "gemma3" {
				got.Arch = want.Arch
			}
			got.Notes = nil
			if gs, ws := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); gs != ws {
				t.Errorf("parsed model differs from the catalog:\n got %s\nwant %s", gs, ws)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name, json string
		want       []string
	}{
		{"not json", `{"hidden_size": `, []string{"not valid JSON"}},
		{"not an object", `[1, 2]`, []string{"want a JSON object"}},
		{"trailing data", `{"model_type":"llama"} {}`, []string{"extra data"}},
		{"missing keys", `{"model_type":"llama","hidden_size":4096,"num_attention_heads":32}`,
			[]string{"missing required keys: num_hidden_layers, vocab_size, intermediate_size"}},
		{"gpt2 missing", `{"model_type":"gpt2","n_embd":768}`, []string{"missing required keys: n_layer, n_head, vocab_size"}},
		{"moe missing", `{"model_type":"mixtral","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128}`,
			[]string{"missing required keys: num_local_experts, num_experts_per_tok"}},
		{"mla missing", `{"model_type":"deepseek_v3","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128}`,
			[]string{"missing required keys: kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim"}},
		{"string number", `{"model_type":"llama","hidden_size":"4096","num_hidden_layers":32,"num_attention_heads":32,"vocab_size":100,"intermediate_size":128}`,
			[]string{`hidden_size: want a number, got the string "4096"`}},
		{"negative", `{"model_type":"llama","hidden_size":-1,"num_hidden_layers":32,"num_attention_heads":32,"vocab_size":100,"intermediate_size":128}`,
			[]string{"hidden_size: want an integer from 1"}},
		{"fraction", `{"model_type":"llama","hidden_size":64.5,"num_hidden_layers":32,"num_attention_heads":32,"vocab_size":100,"intermediate_size":128}`,
			[]string{"hidden_size: want an integer"}},
		{"huge", `{"model_type":"llama","hidden_size":1e30,"num_hidden_layers":32,"num_attention_heads":32,"vocab_size":100,"intermediate_size":128}`,
			[]string{"hidden_size: want an integer from 1 to 131072"}},
		{"gqa mismatch", `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":6,"num_key_value_heads":4,"vocab_size":100,"intermediate_size":128}`,
			[]string{"must be a multiple of num_key_value_heads"}},
		{"bad bool", `{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128,"tie_word_embeddings":"yes"}`,
			[]string{"tie_word_embeddings: want true or false"}},
		{"top-k over experts", `{"model_type":"mixtral","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128,"num_local_experts":2,"num_experts_per_tok":3}`,
			[]string{"exceeds the number of experts"}},
	}
	for _, tt := range tests {
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
