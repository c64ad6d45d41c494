package analysis

import (
	"testing"

	"oomscope/snapshot"
)

const (
	torchPkg = "/venv/lib/python3.12/site-packages/torch"
	userFile = "/home/u/proj/train.py"
)

// TestClassify labels one allocation per rule in a hand-built training step
// and checks the rule and category each gets.
func TestClassify(t *testing.T) {
	b := newBuilder()
	noise := cpp("torch::unwind::unwind()")
	engine := cpp("torch::autograd::Engine::evaluate_function(...)")
	initSt := b.stack(noise, py(torchPkg+"/nn/modules/module.py", 942, "_apply"), py(userFile, 10, "main"))
	fwd := b.stack(noise, py("/home/u/proj/model.py", 62, "forward"), py(torchPkg+"/nn/modules/module.py", 1750, "_call_impl"), py(userFile, 20, "main"))
	user := b.stack(noise, py(userFile, 30, "loss_fn"))
	bwd := b.stack(noise, cpp("torch::autograd::generated::MmBackward0::apply(...)"), engine)
	opt := b.stack(noise, py(torchPkg+"/optim/adamw.py", 145, "_init_group"), py(userFile, 40, "main"))
	custom := b.stack(py("/home/u/proj/my_optim.py", 7, "step"))

	type want struct {
		addr  uint64
		start int
		rule  string
		cat   Category
	}
	var wants []want
	alloc := func(addr uint64, size int64, st snapshot.StackID, rule string, cat Category) int {
		i := b.ev(snapshot.ActionAlloc, addr, size, st)
		wants = append(wants, want{addr, i, rule, cat})
		return i
	}
	freeAt := func(addr uint64, size int64) { b.ev(snapshot.ActionFreeCompleted, addr, size, snapshot.EmptyStack) }

	alloc(0x100, 100, initSt, "stack_param_init", Parameter)
	b.ev(snapshot.ActionFreeCompleted, 0xd00, 77, bwd) // allocated before the trace, freed by the engine
	wants = append(wants, want{0xd00, -1, "pre_trace_freed_in_backward", Activation})
	alloc(0x200, 100, fwd, "forward_survives", Activation)
	alloc(0x300, 100, fwd, "forward_dies", Temporary)
	freeAt(0x300, 100)
	alloc(0x400, 100, user, "freed_in_backward", Activation)
	alloc(0x500, 100, bwd, "backward_survives", Gradient)
	alloc(0x600, 100, bwd, "backward_dies", Temporary)
	freeAt(0x600, 100)
	freeAt(0x200, 100)
	freeAt(0x400, 100)
	alloc(0x700, 100, opt, "optimizer_survives", OptimizerState)
	alloc(0x800, 100, opt, "optimizer_dies", Temporary)
	freeAt(0x800, 100)
	alloc(0x900, 100, user, "no_phase", Other)
	alloc(0xa00, 100, snapshot.NoStack, "no_stack", Other)
	m := alloc(0xb00, 100, user, "user_metadata", OptimizerState)
	b.edit(m, func(e *snapshot.TraceEntry) { e.UserMetadata = "optimizer" })
	w := alloc(0xe00, 100, custom, "optimizer_dies", Temporary)
	freeAt(0xe00, 100)
	wt := b.s.DeviceTraces[0].TimeUS(w)
	b.s.ExternalAnnotations = []snapshot.Annotation{
		{Stage: "START", Name: "Optimizer.step#MyOpt.step", TimeUS: wt},
		{Stage: "END", Name: "Optimizer.step#MyOpt.step", TimeUS: wt + 1},
	}
	wants = append(wants, want{0xc00, -1, "pre_trace_live_params", Parameter})

	l := func(req int64) blk { return live(256, req, snapshot.EmptyStack) }
	b.seg(0x100, false, l(100), free(256), free(256), free(256), l(100), free(256), l(100), free(256),
		l(100), l(100), l(100), l(100), free(256), free(256))

	a := Analyze(b.s, Options{})
	d := a.Devices[0]
	if len(d.Warnings) > 0 {
		t.Fatalf("warnings %q", d.Warnings)
	}
	for _, w := range wants {
		var got *Allocation
		for _, al := range allocations(d) {
			if al.Addr == w.addr && int(al.Start) == w.start {
				got = &al
			}
		}
		if got == nil {
			t.Errorf("no allocation at %#x from %d", w.addr, w.start)
			continue
		}
		if got.Rule.ID() != w.rule || got.Category != w.cat {
			t.Errorf("allocation at %#x from %d: rule %s (%s), want %s (%s)", w.addr, w.start, got.Rule.ID(), got.Category, w.rule, w.cat)
		}
	}
	checkInvariants(t, a, d, d.Report())
}

// TestPreTraceLiveRules checks the three guesses for stackless blocks alive
// before the trace, which depend on what the trace shows of the optimizer.
func TestPreTraceLiveRules(t *testing.T) {
	tests := []struct {
		name  string
		trace func(b *builder, opt snapshot.StackID)
		rule  string
		cat   Category
	}{
		{"no optimizer in the trace", func(b *builder, opt snapshot.StackID) {}, "pre_trace_live_guess", Parameter},
		{"optimizer step without new state", func(b *builder, opt snapshot.StackID) {
			b.ev(snapshot.ActionAlloc, 0x200, 100, opt)
			b.ev(snapshot.ActionFreeCompleted, 0x200, 100, snapshot.EmptyStack)
			b.ev(snapshot.ActionAlloc, 0x300, 100, b.stack(py(userFile, 1, "main")))
		}, "pre_trace_live_unknown", Other},
		{"optimizer state created in the trace", func(b *builder, opt snapshot.StackID) {
			b.ev(snapshot.ActionAlloc, 0x200, 100, opt)
		}, "pre_trace_live_params", Parameter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			opt := b.stack(py(torchPkg+"/optim/adamw.py", 145, "_init_group"))
			tt.trace(b, opt)
			state := free(256)
			if tt.rule == "pre_trace_live_params" {
				state = live(256, 100, snapshot.EmptyStack)
			}
			b.seg(0x100, false, live(256, 100, snapshot.EmptyStack), state, free(512))
			d := Analyze(b.s, Options{}).Devices[0]
			for _, al := range allocations(d) {
				if al.Origin == PreTraceLive && (al.Rule.ID() != tt.rule || al.Category != tt.cat) {
					t.Errorf("ghost: rule %s (%s), want %s (%s)", al.Rule.ID(), al.Category, tt.rule, tt.cat)
				}
			}
		})
	}
}

// TestRulesDescribed checks that every rule has an ID and an explanation.
func TestRulesDescribed(t *testing.T) {
	seen := map[string]bool{}
	for r := Rule(0); r < numRules; r++ {
		if r.ID() == "" || r.Text() == "" || seen[r.ID()] {
			t.Errorf("rule %d: id %q, text %q (duplicate: %v)", r, r.ID(), r.Text(), seen[r.ID()])
		}
		seen[r.ID()] = true
	}
}
