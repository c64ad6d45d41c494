package estimator

import "testing"

func TestModelSize(t *testing.T) {
	for id, want := range map[string]string{"llama-3.1-8b": "8.03B", "gpt2": "124M", "llama-3.1-405b": "405.85B"} {
		m, ok := LookupModel(id)
		if !ok {
			t.Fatalf("no model %s", id)
		}
		if got := m.Size(); got != want {
			t.Errorf("%s Size() = %q, want %q", id, got, want)
		}
	}
}
