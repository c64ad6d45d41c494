package triage

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"oomscope/estimator"
)

// SetupKeys are the estimator vocabulary keys of a tensor-matching setup
// (Options.Setup): the model, the batch, the sequence, the dtype and the
// attention implementation. The CLI's --setup and the triage page's URL
// take exactly these (docs/triage.md#links-to-the-estimator).
var SetupKeys = []string{"model", "batch", "seq", "dtype", "attn"}

// ParseSetup reads a tensor-matching setup from the SetupKeys of q, with
// the estimator's defaults for the keys q lacks. It returns nil when q
// names no model (no setup), and an error for a value the estimator
// refuses. With strict, a key of q outside SetupKeys is an error too (the
// CLI); without, other keys are left alone (the page's URL holds its
// other state).
func ParseSetup(q url.Values, strict bool) (*estimator.Request, error) {
	if strict {
		var other []string
		for k := range q {
			if !slices.Contains(SetupKeys, k) {
				other = append(other, k)
			}
		}
		if len(other) > 0 {
			slices.Sort(other)
			return nil, fmt.Errorf("%s: a setup takes only %s", strings.Join(other, ", "), strings.Join(SetupKeys, ", "))
		}
	}
	sq := url.Values{}
	for _, k := range SetupKeys {
		if v := q.Get(k); v != "" {
			sq.Set(k, v)
		}
	}
	if sq.Get("model") == "" {
		if strict && len(sq) > 0 {
			return nil, fmt.Errorf("a setup needs a model")
		}
		return nil, nil
	}
	r, err := estimator.ParseQuery(sq)
	if err != nil {
		return nil, err
	}
	return &r, nil
}
