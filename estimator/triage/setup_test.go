package triage

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseSetup(t *testing.T) {
	for _, tt := range []struct {
		query  string
		strict bool
		model  string // "" for no setup
		err    string
	}{
		{"model=llama-3.1-8b&batch=4&seq=2048", true, "llama-3.1-8b", ""},
		{"model=llama-3.1-8b&batch=4&when=eval&example=frag", false, "llama-3.1-8b", ""},
		{"model=llama-3.1-8b&tp=2", true, "", "tp: a setup takes only model, batch, seq, dtype, attn"},
		{"batch=4", false, "", ""},
		{"batch=4", true, "", "needs a model"},
		{"", true, "", ""},
		{"model=llama-3.1-8b&batch=zero", false, "", "batch"},
	} {
		q, _ := url.ParseQuery(tt.query)
		r, err := ParseSetup(q, tt.strict)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q strict=%v: error %v, want one saying %q", tt.query, tt.strict, err, tt.err)
			}
		case err != nil:
			t.Errorf("%q strict=%v: %v", tt.query, tt.strict, err)
		case tt.model == "" && r != nil, tt.model != "" && (r == nil || r.Model != tt.model):
			t.Errorf("%q strict=%v: setup %+v, want model %q", tt.query, tt.strict, r, tt.model)
		}
	}
	q, _ := url.ParseQuery("model=llama-3.1-8b&batch=4&seq=2048&dtype=fp32")
	r, _ := ParseSetup(q, true)
	if r == nil || r.Batch != 4 || r.Seq != 2048 || r.Dtype != "fp32" {
		t.Errorf("setup %+v lost a value", r)
	}
}
