package gen

import (
	"fmt"
	"math/rand/v2"

	"oomscope/snapshot"
)

// categories in a fixed order, for arrays indexed by category.
var categoriesArr = [...]string{Parameter, Gradient, OptimizerState, Activation, Temporary, Other}

const (
	catParameter = iota
	catGradient
	catOptimizerState
	catActivation
	catTemporary
	catOther
)

// sideStream is the cudaStream_t of the prefetch stream.
const sideStream uint64 = 0x55d4c3a0b2c0

// delta is the effect of one allocator event, recorded or not.
type delta struct {
	trace    int // index in the device's recorded trace; -1 if not recorded
	live     int64
	cat      int
	reserved int64
	// step is the training iteration the event belongs to (-1: set-up
	// before the first), phase its part of the iteration.
	step  int32
	phase phase
	// leak marks an allocation the loop never frees (Loop.Leak).
	leak bool
}

// devRun is the simulation result for one device.
type devRun struct {
	trace       []snapshot.TraceEntry
	deltas      []delta
	segments    []snapshot.Segment
	annotations []snapshot.Annotation
	// oomCap is the peak reserved before the last step (the cap that makes
	// a bigger last step fail).
	oomCap int64
}

// sim runs the training program on one device.
type sim struct {
	opt       Options
	st        *stacks
	a         *allocator
	rng       *rand.Rand
	device    int
	recording bool
	clock     int64
	cat       int // category of the next alloc
	liveCat   map[uint64]int
	run       devRun
	meta      string // user_metadata for the next entries (Format210)
	reserved  int64
	// step and phase tag the events (Truth.Steps); leak marks the next
	// allocation as one the loop keeps forever.
	step  int32
	phase phase
	leak  bool
	// workspace: the cuBLAS workspace exists.
	workspace bool
}

// simulate runs the program on every device. caps[d] is device d's
// capacity; oomStep is the step that uses 4x the tokens (-1: none).
func simulate(opt Options, caps []int64, oomStep int, st *stacks) []devRun {
	runs := make([]devRun, opt.Devices)
	for d := range opt.Devices {
		s := &sim{opt: opt, st: st, rng: newRand(opt.Seed, d), device: d,
			clock: 1_748_000_000_000_000 + int64(d)*1000, liveCat: map[uint64]int{}}
		s.step, s.phase = -1, phaseOther
		s.a = newAllocator(d, caps[d], opt.Expandable, s.emit)
		s.program(oomStep)
		s.run.segments = s.a.segments()
		runs[d] = s.run
	}
	return runs
}

// emit records one allocator event.
func (s *sim) emit(e snapshot.TraceEntry) {
	s.clock += 1 + s.rng.Int64N(40)
	d := delta{trace: -1, step: s.step, phase: s.phase}
	switch e.Action {
	case snapshot.ActionAlloc:
		d.live, d.cat, d.leak = e.Size, s.cat, s.leak
		s.liveCat[e.Addr] = s.cat
	case snapshot.ActionFreeCompleted:
		d.live, d.cat = -e.Size, s.liveCat[e.Addr]
		delete(s.liveCat, e.Addr)
	case snapshot.ActionSegmentAlloc, snapshot.ActionSegmentMap:
		d.reserved = e.Size
	case snapshot.ActionSegmentFree, snapshot.ActionSegmentUnmap:
		d.reserved = -e.Size
	}
	s.reserved += d.reserved
	if s.recording {
		e.TimeUS = s.clock
		e.UserMetadata = s.meta
		d.trace = len(s.run.trace)
		s.run.trace = append(s.run.trace, e)
	}
	s.run.deltas = append(s.run.deltas, d)
}

func (s *sim) annotate(stage, name string) {
	s.clock += 1 + s.rng.Int64N(20)
	if s.recording {
		s.run.annotations = append(s.run.annotations, snapshot.Annotation{Stage: stage, Name: name, Device: s.device, TimeUS: s.clock})
	}
}

// malloc allocates with a category; it reports false after an OOM.
func (s *sim) malloc(n int64, cat int, stream uint64, stack snapshot.StackID) (*block, bool) {
	s.cat = cat
	if !s.recording {
		stack = snapshot.EmptyStack
	}
	b, err := s.a.malloc(n, stream, stack)
	if err != nil {
		s.a.oom(n, stream, stack)
		return nil, false
	}
	return b, true
}

// param is one model parameter with its gradient and optimizer state.
type param struct {
	size  int64
	grad  *block
	state []*block
}

// program is the training loop; it stops at the first OOM. Each step
// (iteration) runs, in order: an evaluation pass (Loop.EvalEvery) and a
// logging pass (Loop.Leak == LeakLossGraph), zero_grad, the side-stream
// prefetch, Loop.Accum micro-batches of forward and backward, and the AdamW
// step. Events are tagged with their step and phase for the truth: a phase
// starts at its first allocation and lasts until the next one starts.
func (s *sim) program(oomStep int) {
	o := s.opt
	h := int64(o.Hidden)
	s.recording = !o.PreTraceParams
	var layers [][]*param
	for l := range o.Layers {
		s.meta = s.fqn(fmt.Sprintf("layers.%d", l))
		var ps []*param
		for _, n := range []int64{3 * h * h, h * h, 4 * h * h, 4 * h * h, h, h} {
			p := &param{size: 4 * n}
			if _, ok := s.malloc(p.size, catParameter, 0, s.st.param); !ok {
				return
			}
			ps = append(ps, p)
		}
		layers = append(layers, ps)
	}
	if v := int64(o.Loop.Vocab); v > 0 {
		s.meta = s.fqn("embed_tokens")
		p := &param{size: 4 * v * h}
		if _, ok := s.malloc(p.size, catParameter, 0, s.st.param); !ok {
			return
		}
		layers[0] = append(layers[0], p)
	}
	s.recording = true
	var pendingPrefetch, batch *block
	for step := range o.Steps {
		s.step, s.phase = int32(step), phaseOther
		tok := int64(o.Tokens)
		if step == oomStep {
			s.run.oomCap = s.peakReservedSoFar()
			tok *= 4
		}
		if o.Loop.EvalEvery > 0 && step > 0 && step%o.Loop.EvalEvery == 0 {
			if !s.passWithoutBackward(tok, false) {
				return
			}
		}
		if o.Loop.Leak == LeakLossGraph && !s.passWithoutBackward(tok, true) {
			return
		}
		if o.Loop.Cache && step == 1 {
			s.meta = s.fqn("")
			if _, ok := s.malloc(cacheBytes, catOther, 0, s.st.cache); !ok {
				return
			}
		}
		// zero_grad(set_to_none=True) frees last step's gradients.
		s.meta = s.fqn("optimizer")
		s.annotate("START", "Optimizer.zero_grad#AdamW.zero_grad")
		for _, ps := range layers {
			for _, p := range ps {
				if p.grad != nil {
					s.a.free(p.grad, s.st.zeroGrad, false)
					p.grad = nil
				}
			}
		}
		s.annotate("END", "Optimizer.zero_grad#AdamW.zero_grad")
		if pendingPrefetch != nil {
			s.a.complete(pendingPrefetch, s.st.backwardFree)
			pendingPrefetch = nil
		}
		var prefetch *block
		if o.TwoStreams {
			s.meta = s.fqn("")
			var ok bool
			if prefetch, ok = s.malloc(tok*h*2, catOther, sideStream, s.st.sideStream); !ok {
				return
			}
		}
		for range max(1, o.Loop.Accum) {
			mtok := tok
			if o.Loop.VarySeq {
				mtok = max(1, tok/2+s.rng.Int64N(tok+1))
				// The new batch is moved to the GPU before the old one is
				// dropped (Python rebinds the name after the call).
				s.meta = s.fqn("")
				b, ok := s.malloc(mtok*16, catOther, 0, s.st.input)
				if !ok {
					return
				}
				if batch != nil {
					s.a.free(batch, s.st.input, false)
				}
				batch = b
			}
			if !s.microBatch(layers, mtok) {
				return
			}
		}
		// AdamW step: state on the first step, temporaries every step.
		s.meta = s.fqn("optimizer")
		s.annotate("START", "Optimizer.step#AdamW.step")
		s.phase = phaseOptimizer
		for _, ps := range layers {
			for _, p := range ps {
				for len(p.state) < 2 {
					b, ok := s.malloc(p.size, catOptimizerState, 0, s.st.optState)
					if !ok {
						return
					}
					p.state = append(p.state, b)
				}
			}
		}
		var tmps []*block
		for _, ps := range layers {
			var n int64
			for _, p := range ps {
				n += p.size
			}
			b, ok := s.malloc(n, catTemporary, 0, s.st.optTmp)
			if !ok {
				return
			}
			tmps = append(tmps, b)
		}
		for _, b := range tmps {
			s.a.free(b, s.st.optTmp, false)
		}
		s.annotate("END", "Optimizer.step#AdamW.step")
		if prefetch != nil {
			// record_stream: the free completes once the side stream's
			// events are done, after the next zero_grad (or at the end).
			s.a.free(prefetch, s.st.sideStream, true)
			pendingPrefetch = prefetch
		}
		if o.Expandable && step < o.Steps-1 {
			s.a.unmapTails()
		}
	}
	if pendingPrefetch != nil && !o.Loop.KeepPending {
		s.a.complete(pendingPrefetch, s.st.backwardFree)
	}
}

// microBatch runs one forward and backward pass over tok tokens; it
// reports false after an OOM.
func (s *sim) microBatch(layers [][]*param, tok int64) bool {
	o := s.opt
	h := int64(o.Hidden)
	// Forward: per layer, activations kept for backward and a temporary
	// (attention scores) freed inside forward.
	acts := make([][]*block, o.Layers)
	s.phase = phaseForward
	if o.Loop.Workspace && !s.workspace {
		// The handle's workspace, created by the first matmul and kept.
		if _, ok := s.malloc(workspaceBytes, catOther, 0, s.st.workspace); !ok {
			return false
		}
		s.workspace = true
	}
	for l := range o.Layers {
		s.meta = s.fqn(fmt.Sprintf("layers.%d", l))
		if o.PrivatePool && l == 0 {
			s.a.pool = snapshot.PoolID{1, 0}
		}
		for _, n := range []int64{tok * h * 4, tok * 3 * h * 4, tok * h * 2} {
			b, ok := s.malloc(n, catActivation, 0, s.st.forwardAct[l])
			if !ok {
				return false
			}
			acts[l] = append(acts[l], b)
		}
		tmp, ok := s.malloc(tok*h*8, catTemporary, 0, s.st.forwardTmp[l])
		if !ok {
			return false
		}
		for _, n := range []int64{tok * h * 4, tok * 4 * h * 4, tok * 4 * h * 4, tok * 8} {
			b, ok := s.malloc(n, catActivation, 0, s.st.forwardAct[l])
			if !ok {
				return false
			}
			acts[l] = append(acts[l], b)
		}
		s.a.free(tmp, s.st.forwardTmp[l], false)
		s.a.pool = snapshot.PoolID{}
	}
	s.meta = s.fqn("")
	if o.Loop.Leak == LeakHistory {
		// logits = self.lm_head(x), then history.append(logits) in the
		// loop: the list keeps every step's logits, never freed.
		s.leak = true
		_, ok := s.malloc(tok*h*2, catActivation, 0, s.st.lmHead)
		s.leak = false
		if !ok {
			return false
		}
	}
	logits, ok := s.malloc(tok*h*4, catActivation, 0, s.st.loss)
	if !ok {
		return false
	}
	lossTmp, ok := s.malloc(4, catTemporary, 0, s.st.loss)
	if !ok {
		return false
	}
	s.a.free(lossTmp, s.st.loss, false)
	// Backward in the autograd thread, last layer first.
	s.phase = phaseBackward
	for l := o.Layers - 1; l >= 0; l-- {
		tmp, ok := s.malloc(tok*h*4, catTemporary, 0, s.st.backwardTmp)
		if !ok {
			return false
		}
		for _, p := range layers[l] {
			if p.grad == nil {
				if p.grad, ok = s.malloc(p.size, catGradient, 0, s.st.grad); !ok {
					return false
				}
			}
		}
		s.a.free(tmp, s.st.backwardFree, false)
		for _, b := range acts[l] {
			s.a.free(b, s.st.backwardFree, false)
		}
		if l == o.Layers-1 {
			s.a.free(logits, s.st.backwardFree, false)
		}
	}
	return true
}

// passWithoutBackward runs a forward pass with no backward: an evaluation
// under torch.no_grad() (each layer's outputs freed once the next layer has
// used them), or, with retain, a logging pass outside no_grad whose loss is
// accumulated (total_loss += loss), which keeps the pass's graph and so all
// its saved activations alive for good. It reports false after an OOM.
func (s *sim) passWithoutBackward(tok int64, retain bool) bool {
	o := s.opt
	h := int64(o.Hidden)
	s.phase = phaseForward
	cat, stacks := catTemporary, s.st.evalAct
	if retain {
		cat, stacks = catActivation, s.st.logAct
	}
	var prev []*block
	for l := range o.Layers {
		s.meta = s.fqn(fmt.Sprintf("layers.%d", l))
		var cur []*block
		for _, n := range []int64{tok * h * 4, tok * 4 * h * 4, tok * h * 4} {
			s.leak = retain
			b, ok := s.malloc(n, cat, 0, stacks[l])
			s.leak = false
			if !ok {
				return false
			}
			cur = append(cur, b)
		}
		if !retain {
			for _, b := range prev {
				s.a.free(b, s.st.evalAct[l], false)
			}
		}
		prev = cur
	}
	if !retain {
		for _, b := range prev {
			s.a.free(b, s.st.evalAct[0], false)
		}
	}
	return true
}

// fqn returns the user_metadata to attach for Format210 ("" otherwise).
func (s *sim) fqn(name string) string {
	if s.opt.Format == snapshot.Format210 {
		return name
	}
	return ""
}

// peakReservedSoFar is the maximum reserved so far, from the deltas.
func (s *sim) peakReservedSoFar() int64 {
	var r, peak int64
	for _, d := range s.run.deltas {
		r += d.reserved
		peak = max(peak, r)
	}
	return peak
}
