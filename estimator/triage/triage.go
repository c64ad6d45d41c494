package triage

import (
	"strconv"

	"oomscope/estimator"
)

// Options steer Triage.
type Options struct {
	// When says when the error happened; it reorders the fixes.
	When When
	// Setup, when set, is an estimator request (model, batch, sequence,
	// dtype, attention) whose tensors are matched against each message's
	// failed request.
	Setup *estimator.Request
}

// Result is everything Triage found in one input.
type Result struct {
	// Findings are the messages found, in input order.
	Findings []Finding `json:"findings"`
	// Truncated is true when the input held more than the 200 messages
	// Triage reports.
	Truncated bool `json:"truncated,omitempty"`
	// When echoes Options.When.
	When When `json:"when,omitempty"`
}

// Triage finds every out-of-memory message in text, reads its numbers,
// assigns a cause and lists the fixes. It never panics and runs in time
// linear in len(text). A Setup the estimator rejects yields a TensorMatches
// whose Note names the problem.
func Triage(text string, opt Options) Result {
	normalized := normalize(text)
	found, truncated := scan(text, normalized, maxFindings)
	var settings map[string][]setting
	read := false
	for i := range found {
		if found[i].Backend != BackendVLLM {
			continue
		}
		if !read {
			settings, read = vllmSettings(normalized), true
		}
		found[i].settings = settingsFor(settings, found[i].End)
	}
	seen := map[string]int{}
	for i := range found {
		f := &found[i]
		if j, ok := seen[f.Text]; ok {
			f.DuplicateOf = &j
		} else {
			seen[f.Text] = i
		}
		diagnose(f)
		chooseFixes(f, opt.When)
		if l, ok := EstimatorParams(f); ok {
			f.Estimator = &l
		}
		if opt.Setup != nil {
			m, err := MatchTensors(f, *opt.Setup)
			if err != nil {
				m = Matching{Note: "cannot match tensors: " + err.Error()}
			}
			f.TensorMatches = &m
		}
	}
	if found == nil {
		found = []Finding{}
	}
	return Result{Findings: found, Truncated: truncated, When: opt.When}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
