package triage

import (
	"strconv"
)

// Options steer Triage.
type Options struct {
	// When says when the error happened; it reorders the fixes.
	When When
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
// linear in len(text).
func Triage(text string, opt Options) Result {
	found, truncated := scan(text, maxFindings)
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
	}
	if found == nil {
		found = []Finding{}
	}
	return Result{Findings: found, Truncated: truncated, When: opt.When}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
