package analysis

// Category is the bucket an allocation is put in: what kind of tensor it
// most likely held.
type Category uint8

// Categories, in display order.
const (
	Parameter Category = iota
	Gradient
	OptimizerState
	Activation
	Temporary
	Other
	numCategories
)

var categoryNames = [numCategories]string{"parameter", "gradient", "optimizer_state", "activation", "temporary", "other"}

// String returns the category's JSON name, e.g. "optimizer_state".
func (c Category) String() string {
	if c < numCategories {
		return categoryNames[c]
	}
	return "other"
}

// Categories returns every category in display order.
func Categories() []Category {
	return []Category{Parameter, Gradient, OptimizerState, Activation, Temporary, Other}
}

// CategoryBytes holds bytes per category; the JSON keys are the category
// names.
type CategoryBytes struct {
	Parameter      int64 `json:"parameter"`       // weights and buffers
	Gradient       int64 `json:"gradient"`        // .grad tensors
	OptimizerState int64 `json:"optimizer_state"` // e.g. AdamW's exp_avg, exp_avg_sq
	Activation     int64 `json:"activation"`      // saved for backward
	Temporary      int64 `json:"temporary"`       // freed within their phase
	Other          int64 `json:"other"`           // inputs, unknown, no stack
}

// Get returns the bytes of category c.
func (b *CategoryBytes) Get(c Category) int64 {
	switch c {
	case Parameter:
		return b.Parameter
	case Gradient:
		return b.Gradient
	case OptimizerState:
		return b.OptimizerState
	case Activation:
		return b.Activation
	case Temporary:
		return b.Temporary
	}
	return b.Other
}

// Add adds n bytes to category c.
func (b *CategoryBytes) Add(c Category, n int64) {
	switch c {
	case Parameter:
		b.Parameter += n
	case Gradient:
		b.Gradient += n
	case OptimizerState:
		b.OptimizerState += n
	case Activation:
		b.Activation += n
	case Temporary:
		b.Temporary += n
	default:
		b.Other += n
	}
}

// Total returns the sum over all categories.
func (b *CategoryBytes) Total() int64 {
	return b.Parameter + b.Gradient + b.OptimizerState + b.Activation + b.Temporary + b.Other
}

// Rule identifies the classification rule that labelled an allocation.
type Rule uint8

// Classification rules, tried in this order (docs/snapshot.md#classification). A rule's Text says
// what fired; heuristic rules are guesses and say so.
const (
	RuleProfilerCategory Rule = iota
	RuleUserMetadata
	RuleParamInit
	RuleForwardSurvives
	RuleForwardDies
	RuleBackwardSurvives
	RuleBackwardDies
	RuleOptimizerSurvives
	RuleOptimizerDies
	RulePreTraceLiveStateKnown
	RulePreTraceLiveNoOptimizer
	RulePreTraceLiveUnknown
	RulePreTraceFreedInBackward
	RulePreTraceFreed
	RuleFreedInBackward
	RuleNoStackBackwardSurvives
	RuleNoStackBackwardDies
	RuleNoPhase
	RuleNoStack
	RuleWorkspace
	numRules
)

type ruleInfo struct {
	id       string
	category Category
	text     string
}

var rules = [numRules]ruleInfo{
	RuleProfilerCategory:        {"profiler_category", Other, "the trace entry carries a `category` key (snapshot synthesized from profiler data by torch.cuda._memory_viz.profile_plot)"},
	RuleUserMetadata:            {"user_metadata", Other, "the trace entry's user_metadata names the component (set with torch.cuda.memory._set_memory_metadata or the component tracker)"},
	RuleParamInit:               {"stack_param_init", Parameter, "allocated under module construction or parameter loading (torch/nn __init__, reset_parameters, _apply/.to/.cuda, load_state_dict, torch/nn/init.py, torch/nn/parameter.py)"},
	RuleForwardSurvives:         {"forward_survives", Activation, "allocated in a forward pass (a `forward` frame or nn.Module._call_impl) and still alive when the forward phase ended: kept for backward"},
	RuleForwardDies:             {"forward_dies", Temporary, "allocated in a forward pass and freed before the forward phase ended"},
	RuleBackwardSurvives:        {"backward_survives", Gradient, "allocated in backward (autograd engine / AccumulateGrad frames) and still alive when the backward phase ended"},
	RuleBackwardDies:            {"backward_dies", Temporary, "allocated in backward and freed before the backward phase ended"},
	RuleOptimizerSurvives:       {"optimizer_survives", OptimizerState, "allocated inside the optimizer (torch/optim frames or an Optimizer.step annotation) and still alive when the optimizer phase ended"},
	RuleOptimizerDies:           {"optimizer_dies", Temporary, "allocated inside the optimizer and freed before the optimizer phase ended"},
	RulePreTraceLiveStateKnown:  {"pre_trace_live_params", Parameter, "guess: allocated before recording started and never freed, with no telling stack; the optimizer state is accounted for by its own stacks, so these are parameters or buffers"},
	RulePreTraceLiveNoOptimizer: {"pre_trace_live_guess", Parameter, "guess: allocated before recording started and never freed, with no telling stack; usually parameters or buffers (start recording before building the model to know)"},
	RulePreTraceLiveUnknown:     {"pre_trace_live_unknown", Other, "allocated before recording started and never freed, with no telling stack; the trace has an optimizer step that created no state, so these mix parameters and optimizer state"},
	RulePreTraceFreedInBackward: {"pre_trace_freed_in_backward", Activation, "allocated before recording started and freed during backward: saved activations"},
	RulePreTraceFreed:           {"pre_trace_freed", Other, "allocated before recording started (only its free is in the trace)"},
	RuleFreedInBackward:         {"freed_in_backward", Activation, "its stack names no phase, but it was allocated before a backward phase and freed during it: saved for backward (e.g. the logits of the loss)"},
	RuleNoStackBackwardSurvives: {"no_stack_backward_survives", Gradient, "no stack (Python-only stacks cannot see the autograd thread), allocated during backward (after the forward pass's last allocation or among backward ones) and still alive when backward ended"},
	RuleNoStackBackwardDies:     {"no_stack_backward_dies", Temporary, "no stack (Python-only stacks cannot see the autograd thread), allocated during backward and freed before it ended"},
	RuleNoPhase:                 {"no_phase", Other, "its stack has no forward, backward, optimizer or module-construction frame (e.g. inputs or user code)"},
	RuleNoStack:                 {"no_stack", Other, "no stack was recorded for it"},
	RuleWorkspace:               {"workspace", Other, "a cuBLAS/cuBLASLt workspace (at::cuda::getNewWorkspace, getCurrentCUDABlasHandle, getCUDABlasLtWorkspace frames): a persistent per-handle buffer, not an activation"},
}

// ID returns the rule's stable identifier, e.g. "forward_survives".
func (r Rule) ID() string {
	if r < numRules {
		return rules[r].id
	}
	return "unknown"
}

// Text returns a sentence explaining when the rule fires.
func (r Rule) Text() string {
	if r < numRules {
		return rules[r].text
	}
	return ""
}
