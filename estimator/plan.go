package estimator

import (
	"fmt"

	"oomscope/bytesize"
	"sort"
	"strings"
)

// plan is a validated request with its model and GPU resolved, ready to be
// computed many times with small changes (batch, seq, GPU, GPU count) by the
// searches.
type plan struct {
	r     Request
	m     Model
	g     GPU
	kinds []LayerKind
	// params and largestMatrix are m.Params() and its largest weight
	// matrix, counted once: the searches compute a plan many times and
	// change neither the model nor its layers.
	params, largestMatrix int64
	// targets is the LoRA target set: nil for all-linear, or names.
	targets     map[string]bool
	targetsAttn bool
	// quiet skips the formulas' words (search probes).
	quiet bool
}

// newPlan validates r and resolves its model, GPU and LoRA targets.
func newPlan(r Request) (*plan, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	var m Model
	if r.Model == ModelCustom {
		var err error
		if m, err = ParseConfig([]byte(r.Config)); err != nil {
			return nil, err
		}
	} else {
		var ok bool
		if m, ok = LookupModel(r.Model); !ok {
			return nil, fmt.Errorf("model: unknown model %q (see the model list, or use model=custom with a config.json)", r.Model)
		}
	}
	g, err := ResolveGPU(r.GPU)
	if err != nil {
		return nil, err
	}
	if err := checkTP(r, &m); err != nil {
		return nil, err
	}
	if r.Mode == ModeServe && r.MaxModelLen > 0 && m.MaxPositions > 0 && r.MaxModelLen > m.MaxPositions {
		return nil, &FieldError{Key: "max_model_len", Msg: fmt.Sprintf("%d is longer than the model's context (max_position_embeddings %d); vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set", r.MaxModelLen, m.MaxPositions)}
	}
	kinds := m.LayerKinds()
	p := &plan{r: r, m: m, g: g, kinds: kinds, params: m.paramsWith(kinds), largestMatrix: largestMatrixParams(kinds)}
	if err := p.resolveTargets(); err != nil {
		return nil, err
	}
	return p, nil
}

// checkTP checks that tensor parallelism can split the model's heads as
// Megatron and vLLM require.
func checkTP(r Request, m *Model) error {
	if r.TP <= 1 {
		return nil
	}
	if m.Heads%r.TP != 0 {
		return &FieldError{Key: "tp", Msg: fmt.Sprintf("%d does not divide the model's %d attention heads: tensor parallelism splits whole heads", r.TP, m.Heads)}
	}
	if !m.MLA() && m.KVHeads > r.TP && m.KVHeads%r.TP != 0 {
		return &FieldError{Key: "tp", Msg: fmt.Sprintf("%d does not divide the model's %d key/value heads", r.TP, m.KVHeads)}
	}
	return nil
}

// resolveTargets reads lora_targets against the model's module names.
func (p *plan) resolveTargets() error {
	switch p.r.LoraTargets {
	case TargetsAllLinear:
		return nil
	case TargetsAttention:
		p.targetsAttn = true
		return nil
	}
	known := map[string]bool{}
	for _, k := range p.kinds {
		for _, l := range k.Linears {
			if l.Group != groupRouter {
				known[l.Name] = true
			}
		}
	}
	p.targets = map[string]bool{}
	var unknown []string
	for _, name := range strings.Split(p.r.LoraTargets, ",") {
		if name == "" {
			continue
		}
		if !known[name] {
			unknown = append(unknown, name)
		}
		p.targets[name] = true
	}
	if len(unknown) > 0 || len(p.targets) == 0 {
		var names []string
		for n := range known {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("lora_targets: %s has no module named %s (use all-linear, attention, or some of: %s)",
			p.m.ID, strings.Join(quoteAll(unknown), ", "), strings.Join(names, ", "))
	}
	return nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	if len(out) == 0 {
		return []string{`""`}
	}
	return out
}

func (p *plan) train() bool { return p.r.Mode == ModeTrain }

func (p *plan) serve() bool { return p.r.Mode == ModeServe }

// full reports full fine-tuning: every parameter trains.
func (p *plan) full() bool { return p.train() && p.r.Method == MethodFull }

// peft reports LoRA or QLoRA training.
func (p *plan) peft() bool { return p.train() && p.r.Method != MethodFull }

// adapted reports whether LoRA adapts this linear.
func (p *plan) adapted(l Linear) bool {
	if !p.peft() || l.Group == groupRouter {
		return false
	}
	switch {
	case p.targetsAttn:
		return l.Group == groupAttention
	case p.targets == nil:
		return true
	}
	return p.targets[l.Name]
}

// trains reports whether backward needs this linear's input: its weight
// trains (full) or it carries an adapter.
func (p *plan) trains(l Linear) bool { return p.full() || p.adapted(l) }

func dtypeBytes(d string) int64 {
	switch d {
	case DtypeFP32:
		return 4
	case KVFP8:
		return 1
	}
	return 2
}

// paramBytes is the stored size of one trainable (or, for full and LoRA,
// frozen) parameter: fp32 for fp32 training and autocast, else the dtype.
func (p *plan) paramBytes() int64 {
	if p.train() && p.r.Autocast {
		return 4
	}
	return dtypeBytes(p.r.Dtype)
}

// actBytes is the size of one activation element: the dtype's (with
// autocast, the autocast dtype's), so 4 for plain fp32 and 2 otherwise.
func (p *plan) actBytes() int64 { return dtypeBytes(p.r.Dtype) }

// precisionWords describes the precision regime.
func (p *plan) precisionWords() string {
	switch {
	case !p.train():
		return p.r.Dtype
	case p.r.Autocast:
		return "fp32 weights, " + p.r.Dtype + " autocast"
	case p.r.Master:
		return p.r.Dtype + " weights with fp32 master copy"
	case p.r.Dtype == DtypeFP32:
		return "fp32"
	}
	return "pure " + p.r.Dtype
}

// gpus is the data-parallel degree: the GPUs over tensor-parallel groups
// (1 for inference and serving).
func (p *plan) gpus() int64 {
	if !p.train() {
		return 1
	}
	return int64(max(1, p.r.GPUs/max(1, p.r.TP)))
}

// tp is the tensor-parallel size.
func (p *plan) tp() int64 { return int64(max(1, p.r.TP)) }

// kvHeadsPerGPU is how many key/value heads one tensor-parallel rank holds:
// the heads ÷ tp, at least one (a head is replicated when tp exceeds them).
func (p *plan) kvHeadsPerGPU() int64 { return max(1, int64(p.m.KVHeads)/p.tp()) }

// tokens is micro-batch × sequence length.
func (p *plan) tokens() int64 { return mul(int64(p.r.Batch), int64(p.r.Seq)) }

// loraParams counts adapter parameters: r·(d_in + d_out) per adapted linear.
func (p *plan) loraParams() int64 {
	var n int64
	rank := int64(p.r.LoraRank)
	for _, k := range p.kinds {
		for _, l := range k.Linears {
			if p.adapted(l) {
				n = sum(n, mul(int64(k.Count), int64(l.Count), rank, int64(l.In)+int64(l.Out)))
			}
		}
	}
	return n
}

// trainableParams counts what the optimizer updates.
func (p *plan) trainableParams() int64 {
	switch {
	case !p.train():
		return 0
	case p.full():
		return p.params
	}
	return p.loraParams()
}

// say formats a formula, or returns "" for a quiet plan: a search probe
// that reads only bytes and the verdict, so the searches do not pay for
// the words.
func (p *plan) say(format string, args ...any) string {
	if p.quiet {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

// num writes a count with thousands separators when a formula is formatted
// (and costs nothing when a quiet plan skips it).
type num int64

func (n num) String() string { return bytesize.Commas(int64(n)) }
