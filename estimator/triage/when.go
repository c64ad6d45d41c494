package triage

import (
	"fmt"
	"strings"
)

// When says when the out-of-memory error happened, which steers the advice.
type When string

// The moments a user can name.
const (
	// WhenUnknown: not said.
	WhenUnknown When = ""
	// WhenLoad: at load time or on step 0: the fixed cost (weights,
	// gradients, optimizer state) is too large.
	WhenLoad When = "load"
	// WhenAfterSteps: after N good steps: a retained graph (a logged loss
	// tensor) or a longer batch.
	WhenAfterSteps When = "after-steps"
	// WhenLongInputs: only on long inputs: activations grow with length.
	WhenLongInputs When = "long-inputs"
	// WhenEval: only in evaluation: autograd left on.
	WhenEval When = "eval"
)

// Whens lists the moments in display order, with a label for each.
var Whens = []struct {
	When  When
	Label string
}{
	{WhenUnknown, "not sure"},
	{WhenLoad, "at load time or on step 0"},
	{WhenAfterSteps, "after some good steps"},
	{WhenLongInputs, "only on long inputs"},
	{WhenEval, "only in evaluation"},
}

var whenAliases = map[string]When{
	"": WhenUnknown, "unknown": WhenUnknown,
	"load": WhenLoad, "step0": WhenLoad, "step-0": WhenLoad, "start": WhenLoad,
	"after-steps": WhenAfterSteps, "steps": WhenAfterSteps, "later": WhenAfterSteps,
	"long-inputs": WhenLongInputs, "long": WhenLongInputs,
	"eval": WhenEval, "evaluation": WhenEval,
}

// ParseWhen reads a When by name or alias (load/step0, after-steps/steps,
// long-inputs/long, eval/evaluation).
func ParseWhen(s string) (When, error) {
	w, ok := whenAliases[strings.ToLower(strings.TrimSpace(s))]
	if !ok {
		return WhenUnknown, fmt.Errorf("triage: unknown --when %q (want load, after-steps, long-inputs or eval)", s)
	}
	return w, nil
}

// whenFixes is the table that steers the advice: what failing at that moment
// implies, and the fixes that address it, in order.
var whenFixes = map[When]struct {
	meaning string
	fixes   []string
}{
	WhenLoad:       {"fixed cost too large (weights, gradients, optimizer state)", []string{"shard", "lora-qlora", "optimizer-8bit"}},
	WhenAfterSteps: {"retained graph or a longer batch", []string{"item-for-logging", "cap-seq-len"}},
	WhenLongInputs: {"activations grow with input length", []string{"checkpointing", "sdpa", "chunked-loss"}},
	WhenEval:       {"autograd left on during evaluation", []string{"inference-mode"}},
}
