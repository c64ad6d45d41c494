package analysis

import (
	"slices"
	"sort"
	"strings"

	"oomscope/snapshot"
)

// Phase names of the report (Step, PhasePeak, PeakPhase).
const (
	PhaseForward   = "forward"
	PhaseBackward  = "backward"
	PhaseOptimizer = "optimizer"
	PhaseOther     = "other"
)

// phaseName maps a stack phase to the report's phase names.
func phaseName(p phase) string {
	switch p {
	case phaseForward:
		return PhaseForward
	case phaseBackward:
		return PhaseBackward
	case phaseOptimizer:
		return PhaseOptimizer
	}
	return PhaseOther
}

// Step is one training iteration found in the trace: it ends with an
// optimizer step (see StepInfo.Rule for how it was found).
type Step struct {
	// FirstEntry and LastEntry bound the step in the trace.
	FirstEntry int `json:"first_entry"`
	LastEntry  int `json:"last_entry"`
	// PeakAllocatedBytes is the highest allocated memory after any of its
	// entries; PeakIndex the entry where it was first reached.
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes"`
	PeakIndex          int   `json:"peak_index"`
	// EndAllocatedBytes is the allocated memory after its last entry.
	EndAllocatedBytes int64 `json:"end_allocated_bytes"`
	// Partial is true when the trace window cuts the step: it started
	// before the first entry (ring buffer, late recording) or the trace
	// ends before its optimizer step (an OOM, a dump mid-step).
	Partial bool `json:"partial,omitempty"`
	// MicroBatches counts its backward passes (gradient accumulation when
	// more than one); EvalPasses its forward passes that no backward
	// follows (evaluation).
	MicroBatches int `json:"micro_batches"`
	EvalPasses   int `json:"eval_passes,omitempty"`
}

// PhasePeak is the highest allocated memory of one phase in one step.
type PhasePeak struct {
	// Step indexes DiagnosisReport.Steps (-1: before the first step).
	Step int `json:"step"`
	// Phase is forward, backward, optimizer or other.
	Phase string `json:"phase"`
	// PeakAllocatedBytes is the phase's highest allocated memory, first
	// reached after entry PeakIndex.
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes"`
	PeakIndex          int   `json:"peak_index"`
}

// PeakPhase says where the device's peak fell.
type PeakPhase struct {
	// Step indexes Steps; -1 when the peak is outside every step (before
	// the first entry, or during set-up).
	Step int `json:"step"`
	// Phase is forward, backward, optimizer or other.
	Phase string `json:"phase"`
}

// StepInfo says how steps and phases were found.
type StepInfo struct {
	// Rule says which markers cut the trace into steps.
	Rule string `json:"rule"`
	// Phases says what the phases rest on: record_function annotations,
	// stack frames, Python-only stacks, or nothing.
	Phases string `json:"phases"`
	// EvalPasses is the number of forward passes without a backward found
	// in all steps (evaluation or logging).
	EvalPasses int `json:"eval_passes"`
}

// Rules of StepInfo.Rule.
const (
	stepRuleProfiler  = "ProfilerStep#N record_function annotations mark the steps"
	stepRuleOptimizer = "each optimizer step (torch/optim frames or an Optimizer.step annotation) ends a step; the next starts at zero_grad, or else at the next allocation"
	stepRuleBackward  = "no optimizer step in the trace: each backward pass (autograd frames) ends a step"
	stepRuleNone      = "no optimizer step, backward pass or ProfilerStep annotation in the trace: the whole trace is one step"
	stepRuleEmpty     = "the trace has no allocations: no steps"
)

// run is a stretch of the trace whose allocations with a known phase all
// have one phase; it lasts until the next run starts.
type run struct {
	ph phase
	// first is the entry where the run starts (its first labelled entry,
	// or the segment growth right before it); last its last labelled entry.
	first, last int
	// window is the annotation window that labelled its entries (-1: their
	// stacks did); entries of another window start a new run.
	window int
}

// kind of an annotation window.
type windowKind uint8

const (
	markPhase windowKind = iota
	markZeroGrad
	markProfilerStep
)

// mark is a record_function window of this device.
type mark struct {
	kind       windowKind
	ph         phase
	start, end int64
}

// marks pairs the device's START/END annotations by name and keeps those
// naming a phase (optimizer, backward, forward), zero_grad, or a profiler
// step. A START without END lasts to the end of time.
func marks(anns []snapshot.Annotation) []mark {
	var out []mark
	open := map[string][]int64{}
	add := func(name string, start, end int64) {
		n := strings.ToLower(name)
		switch {
		case strings.HasPrefix(name, "ProfilerStep#"):
			out = append(out, mark{kind: markProfilerStep, start: start, end: end})
		case strings.Contains(n, "zero_grad"):
			out = append(out, mark{kind: markZeroGrad, start: start, end: end})
		default:
			if p := annotationPhase(name); p != phaseUnknown {
				out = append(out, mark{kind: markPhase, ph: p, start: start, end: end})
			}
		}
	}
	for _, an := range anns {
		switch an.Stage {
		case "START":
			open[an.Name] = append(open[an.Name], an.TimeUS)
		case "END":
			st := open[an.Name]
			if len(st) == 0 {
				continue
			}
			open[an.Name] = st[:len(st)-1]
			add(an.Name, st[len(st)-1], an.TimeUS)
		}
	}
	names := make([]string, 0, len(open))
	for name := range open {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, t := range open[name] {
			add(name, t, 1<<63-1)
		}
	}
	slices.SortStableFunc(out, func(x, y mark) int { return compareInt64(x.start, y.start) })
	return out
}

// phaseSweep answers "which phase window holds time t" for nondecreasing t
// in amortised constant time: the innermost (latest-starting) open window,
// and its index.
type phaseSweep struct {
	ws     []mark // phase windows by start
	next   int
	active []int
}

func (w *phaseSweep) at(t int64) (phase, int) {
	if t == 0 || len(w.ws) == 0 {
		return phaseUnknown, -1
	}
	for w.next < len(w.ws) && w.ws[w.next].start <= t {
		w.active = append(w.active, w.next)
		w.next++
	}
	k := 0
	for _, j := range w.active {
		if w.ws[j].end >= t {
			w.active[k] = j
			k++
		}
	}
	w.active = w.active[:k]
	if k == 0 {
		return phaseUnknown, -1
	}
	j := w.active[k-1]
	return w.ws[j].ph, j
}

// stepper finds the steps and phases of one device.
type stepper struct {
	src source
	n   int
	// allocated[i] is the allocated memory after entry i; allocated[n] the
	// memory before the first entry (-1).
	allocated []int64
	marks     []mark
	// stacked: some allocation has frames; pythonOnly: none has a C++
	// frame, so the autograd thread's allocations are the stackless ones.
	stacked, pythonOnly bool
	runs                []run
	// firstWork is the first allocation that is not module construction;
	// lastInit the last one that is (-1: none).
	firstWork, lastInit int
	zeroGradStack       map[snapshot.StackID]bool
	// cursor walks the allocations once, in trace order, for evalPrefix.
	cursor int
}

// allocatedCurve returns the allocated memory after every entry (and, at
// index n, before the first), from the live ranges: one pass over the
// allocations and one over the entries.
func allocatedCurve(src source) []int64 {
	n := src.entries()
	cur := make([]int64, n+1)
	var initial int64
	for k := range src.numAllocs() {
		l := src.live(k)
		if l.start < 0 {
			initial += l.size
		} else {
			cur[l.start] += l.size
		}
		if int(l.end) < n {
			cur[l.end] -= l.size
		}
	}
	run := initial
	for i := 0; i < n; i++ {
		run += cur[i]
		cur[i] = run
	}
	cur[n] = initial
	return cur
}

// at returns the allocated memory after entry i (-1: before the first).
func (st *stepper) at(i int) int64 {
	if i < 0 {
		return st.allocated[st.n]
	}
	return st.allocated[i]
}

// recording looks at the allocations' stacks: whether any has frames and
// whether every frame is a Python one (stacks="python").
func (st *stepper) recording() {
	seen := make(map[snapshot.StackID]bool)
	cpp := false
	for i := 0; i < st.n && !cpp; i++ {
		if !st.src.isAlloc(i) {
			continue
		}
		id := st.src.stack(i)
		if seen[id] || st.src.stackLen(id) == 0 {
			continue
		}
		seen[id] = true
		st.stacked = true
		for _, f := range st.src.frames(id) {
			if !isPython(&f) {
				cpp = true
				break
			}
		}
	}
	st.pythonOnly = st.stacked && !cpp
}

// label is the phase of entry i and the annotation window that gave it
// (-1: none): a phase annotation holding its time wins; else its stack's
// phase. An allocation without frames is the autograd thread's when the
// recording has Python frames only. A free counts only for the optimizer
// (the tail of an optimizer step the trace window starts in), never
// zero_grad's: a delayed free_completed carries the stack of whatever
// allocation ran the stream events, not its own.
func (st *stepper) label(w *phaseSweep, i int) (phase, int) {
	alloc := st.src.isAlloc(i)
	if !alloc {
		switch st.src.action(i) {
		case snapshot.ActionFreeRequested, snapshot.ActionFreeCompleted, "free":
		default:
			return phaseUnknown, -1
		}
	}
	p, j := w.at(st.src.timeUS(i))
	if p == phaseUnknown {
		id := st.src.stack(i)
		switch {
		case st.src.stackLen(id) == 0:
			if alloc && st.pythonOnly {
				p = phaseBackward
			}
		case alloc || !st.isZeroGrad(id):
			p = st.src.stackPhase(id)
		}
	}
	if !alloc && p != phaseOptimizer {
		return phaseUnknown, -1
	}
	return p, j
}

// buildRuns labels the allocations and frees and groups them into runs.
func (st *stepper) buildRuns() {
	w := &phaseSweep{}
	for _, m := range st.marks {
		if m.kind == markPhase {
			w.ws = append(w.ws, m)
		}
	}
	st.firstWork, st.lastInit = -1, -1
	for i := 0; i < st.n; i++ {
		p, win := st.label(w, i)
		if st.src.isAlloc(i) {
			if p == phaseInit {
				st.lastInit = i
				continue
			}
			if st.firstWork < 0 {
				st.firstWork = i
			}
		}
		if p == phaseUnknown || p == phaseInit {
			continue
		}
		if k := len(st.runs) - 1; k >= 0 && st.runs[k].ph == p && (win < 0 || st.runs[k].window < 0 || win == st.runs[k].window) {
			st.runs[k].last = i
			if win >= 0 {
				st.runs[k].window = win
			}
			continue
		}
		lo := 0
		if k := len(st.runs) - 1; k >= 0 {
			lo = st.runs[k].last + 1
		}
		st.runs = append(st.runs, run{ph: p, first: st.backOverGrowth(i, lo), last: i, window: win})
	}
}

// backOverGrowth moves a boundary at entry i back over the segment growth
// (segment_alloc, segment_map) that made room for it, not below lo.
func (st *stepper) backOverGrowth(i, lo int) int {
	for i-1 >= lo && st.src.isSegmentGrowth(i-1) {
		i--
	}
	return i
}

// nextAlloc returns the first allocation after entry i, or n.
func (st *stepper) nextAlloc(i int) int {
	for j := i + 1; j < st.n; j++ {
		if st.src.isAlloc(j) {
			return j
		}
	}
	return st.n
}

// isZeroGrad reports whether a free's stack is inside Optimizer.zero_grad.
func (st *stepper) isZeroGrad(id snapshot.StackID) bool {
	if st.src.stackLen(id) == 0 {
		return false
	}
	v, ok := st.zeroGradStack[id]
	if !ok {
		for _, f := range st.src.frames(id) {
			if f.Name == "zero_grad" && strings.Contains(f.Filename, "torch/optim") {
				v = true
				break
			}
		}
		st.zeroGradStack[id] = v
	}
	return v
}

// zeroGradAt returns the first entry in (after, upto] that starts a
// zero_grad: the first entry at or after a zero_grad annotation's START
// (later than entry after's time), or a free whose stack is zero_grad; -1
// when none.
func (st *stepper) zeroGradAt(after, upto int) int {
	var starts []int64
	var t0 int64 = -1
	if after >= 0 {
		t0 = st.src.timeUS(after)
	}
	for _, m := range st.marks {
		if m.kind == markZeroGrad && m.start > t0 && t0 != 0 {
			starts = append(starts, m.start)
		}
	}
	for j := after + 1; j <= upto && j < st.n; j++ {
		t := st.src.timeUS(j)
		if len(starts) > 0 && t >= starts[0] && t != 0 {
			return j
		}
		if !st.src.isAlloc(j) && st.isZeroGrad(st.src.stack(j)) {
			return j
		}
	}
	return -1
}

// boundaryAfter is where the step whose last marker allocation is entry
// last ends: the next step starts at zero_grad if one comes before the
// next allocation, else at that allocation (with the segment growth before
// it), else the trace ends the step.
func (st *stepper) boundaryAfter(last int) int {
	j := st.nextAlloc(last)
	if z := st.zeroGradAt(last, j); z >= 0 {
		return z
	}
	if j == st.n {
		return st.n
	}
	return st.backOverGrowth(j, last+1)
}

// span is a step being built: its entries and whether it is cut.
type span struct {
	first, last int
	partial     bool
}

// steps cuts the trace into steps and returns them with the rule used.
func (st *stepper) steps() ([]span, string) {
	if st.n == 0 || st.firstWork < 0 {
		return nil, stepRuleEmpty
	}
	var prof []mark
	for _, m := range st.marks {
		if m.kind == markProfilerStep {
			prof = append(prof, m)
		}
	}
	if len(prof) >= 2 {
		return st.profilerSteps(prof), stepRuleProfiler
	}
	var ends []int // last marker allocation of each step
	rule := stepRuleOptimizer
	for _, r := range st.runs {
		if r.ph == phaseOptimizer {
			ends = append(ends, r.last)
		}
	}
	if len(ends) == 0 {
		rule = stepRuleBackward
		for _, r := range st.runs {
			if r.ph == phaseBackward {
				ends = append(ends, r.last)
			}
		}
	}
	if len(ends) == 0 {
		return []span{{first: st.start0(false), last: st.n - 1}}, stepRuleNone
	}
	partial := st.firstPartial(ends[0])
	var out []span
	start := st.start0(partial)
	for _, e := range ends {
		b := st.boundaryAfter(e)
		out = append(out, span{first: start, last: b - 1})
		start = b
	}
	out[0].partial = partial
	if start < st.n {
		if st.nextAlloc(start-1) < st.n {
			// The trace ends inside a step that never reached its
			// optimizer step (an OOM, or the dump).
			out = append(out, span{first: start, last: st.n - 1, partial: true})
		} else {
			out[len(out)-1].last = st.n - 1
		}
	}
	return out, rule
}

// start0 is where the first step starts: at the start of the trace when
// the window cuts it; else at zero_grad (when the allocations carry no
// stacks) or the first allocation that is not module construction.
func (st *stepper) start0(partial bool) int {
	if partial || st.firstWork < 0 {
		return 0
	}
	if !st.stacked {
		first := st.n
		if len(st.runs) > 0 {
			first = st.runs[0].first
		}
		if z := st.zeroGradAt(-1, first); z >= 0 {
			return z
		}
	}
	lo := st.lastInit + 1
	if z := st.zeroGradAt(st.lastInit, st.firstWork); z >= 0 {
		return z
	}
	return st.backOverGrowth(st.firstWork, lo)
}

// firstPartial reports whether the trace window starts inside the first
// step, whose last marker allocation is entry end: its first phase run is
// a backward pass, or an optimizer step in a recording that shows forward
// passes, or allocations made before the window were freed in its
// backward pass (saved activations of a forward the window missed).
func (st *stepper) firstPartial(end int) bool {
	seesPasses := false
	for _, r := range st.runs {
		if r.ph == phaseForward || r.ph == phaseBackward {
			seesPasses = true
			break
		}
	}
	if len(st.runs) > 0 {
		switch st.runs[0].ph {
		case phaseBackward:
			return true
		case phaseOptimizer:
			if seesPasses {
				return true
			}
		}
	}
	for k := range st.src.numAllocs() {
		if st.src.allocOrigin(k) != PreTraceFreed {
			continue
		}
		l := st.src.live(k)
		if int(l.end) > end {
			break // pre-trace allocations are listed at their free, in trace order
		}
		if l.rule == RulePreTraceFreedInBackward {
			return true
		}
		if r := st.runAt(int(l.end)); r >= 0 && st.runs[r].ph == phaseBackward {
			return true
		}
	}
	return false
}

// runAt returns the run holding entry i, -1 before the first.
func (st *stepper) runAt(i int) int {
	k := sort.Search(len(st.runs), func(j int) bool { return st.runs[j].first > i })
	return k - 1
}

// profilerSteps maps ProfilerStep#N windows to entries.
func (st *stepper) profilerSteps(prof []mark) []span {
	var out []span
	i := 0
	for k, m := range prof {
		for i < st.n && st.src.timeUS(i) < m.start {
			i++
		}
		first := i
		j := first
		for j < st.n && st.src.timeUS(j) <= m.end {
			j++
		}
		if j <= first {
			continue
		}
		partial := (k == 0 && first == 0 && st.src.timeUS(0) > m.start) || m.end == 1<<63-1
		out = append(out, span{first: first, last: j - 1, partial: partial})
		i = j
	}
	return out
}

// stepResult is what the stepper finds.
type stepResult struct {
	steps      []Step
	phasePeaks []PhasePeak
	peak       PeakPhase
	info       StepInfo
	// maxPhase holds, per phase, the index of its highest allocated memory
	// over all steps (-2: the phase never occurs).
	maxPhase map[string]int
	// spanOf tells the step of a trace entry.
	spans []span
}

// findSteps cuts the trace into steps and phases and measures them.
func findSteps(src source, allocated []int64, peakIndex int) stepResult {
	st := &stepper{src: src, n: src.entries(), allocated: allocated, marks: marks(src.annotations()),
		zeroGradStack: map[snapshot.StackID]bool{}}
	st.recording()
	st.buildRuns()
	spans, rule := st.steps()
	res := stepResult{spans: spans, peak: PeakPhase{Step: -1, Phase: PhaseOther}, maxPhase: map[string]int{},
		info: StepInfo{Rule: rule, Phases: st.phasesRule()}, steps: []Step{}, phasePeaks: []PhasePeak{}}
	r := 0
	for si, sp := range spans {
		s := Step{FirstEntry: sp.first, LastEntry: sp.last, Partial: sp.partial, PeakIndex: -1}
		peaks := map[string]*PhasePeak{}
		var order []string
		for r < len(st.runs) && st.runs[r].first < sp.first {
			r++
		}
		lo := r
		cur := -1 // run holding the entry (index into st.runs), -1: none yet
		for i := sp.first; i <= sp.last; i++ {
			for r < len(st.runs) && st.runs[r].first <= i && st.runs[r].first <= sp.last {
				cur, r = r, r+1
			}
			ph := PhaseOther
			if cur >= 0 {
				ph = phaseName(st.runs[cur].ph)
			}
			a := allocated[i]
			if i == sp.first || a > s.PeakAllocatedBytes {
				s.PeakAllocatedBytes, s.PeakIndex = a, i
			}
			pp, ok := peaks[ph]
			if !ok {
				pp = &PhasePeak{Step: si, Phase: ph, PeakAllocatedBytes: a, PeakIndex: i}
				peaks[ph] = pp
				order = append(order, ph)
			} else if a > pp.PeakAllocatedBytes {
				pp.PeakAllocatedBytes, pp.PeakIndex = a, i
			}
			if i == peakIndex {
				res.peak = PeakPhase{Step: si, Phase: ph}
			}
		}
		s.EndAllocatedBytes = allocated[sp.last]
		for _, ph := range order {
			pp := *peaks[ph]
			res.phasePeaks = append(res.phasePeaks, pp)
			if j, ok := res.maxPhase[ph]; !ok || pp.PeakAllocatedBytes > allocated[j] {
				res.maxPhase[ph] = pp.PeakIndex
			}
		}
		s.MicroBatches, s.EvalPasses = st.passes(lo, r)
		res.info.EvalPasses += s.EvalPasses
		res.steps = append(res.steps, s)
	}
	return res
}

// passes counts the backward passes of the runs [lo, hi) of one step, and
// the forward passes no backward follows (evaluation); a forward pass the
// trace ends in (an OOM) is neither.
func (st *stepper) passes(lo, hi int) (micro, eval int) {
	for k := lo; k < hi; k++ {
		switch st.runs[k].ph {
		case phaseBackward:
			micro++
		case phaseForward:
			if k+1 == len(st.runs) {
				continue
			}
			if k+1 >= hi || st.runs[k+1].ph != phaseBackward {
				eval++
			} else if st.evalPrefix(st.runs[k], st.runs[k+1]) {
				eval++
			}
		}
	}
	return micro, eval
}

// evalPrefix reports whether a forward run followed by a backward one
// starts with a pass whose allocations all died before the backward pass
// (an evaluation under no_grad merged into the next training forward):
// at least 8 forward allocations before the first one that lives into the
// backward pass, and at least a quarter as many as after it.
func (st *stepper) evalPrefix(fwd, bwd run) bool {
	pre, post, found := 0, 0, false
	for ; st.cursor < st.src.numAllocs(); st.cursor++ {
		k := st.cursor
		if st.src.allocOrigin(k) != FromTrace {
			continue
		}
		l := st.src.live(k)
		if int(l.start) < fwd.first {
			continue
		}
		if int(l.start) > fwd.last {
			break
		}
		if st.src.stackPhase(l.stack) != phaseForward {
			continue
		}
		switch {
		case found:
			post++
		case int(l.end) >= bwd.first:
			found = true
			post++
		default:
			pre++
		}
	}
	return found && pre >= 8 && 4*pre >= post
}

// phasesRule says what the phases rest on.
func (st *stepper) phasesRule() string {
	hasWindows := false
	for _, m := range st.marks {
		if m.kind == markPhase {
			hasWindows = true
		}
	}
	var s string
	switch {
	case st.pythonOnly:
		s = "Python frames (forward, torch/optim); allocations without frames are the autograd thread's (stacks=\"python\" records none for it), so they mark backward"
	case st.stacked:
		s = "stack frames: module forward calls, autograd engine and *Backward nodes, torch/optim"
	default:
		s = "no stacks recorded: forward and backward cannot be told apart"
	}
	if hasWindows {
		s = "record_function annotations (Optimizer.step and any forward/backward ranges) where present, else " + s
	}
	return s
}
