package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"oomscope/snapshot"
)

// Phase is the phase of a step that a stretch of the trace belongs to
// (PhasePeak, PhaseSpan, PeakPhase). It is a number, so that the hundreds
// of thousands of phase peaks and spans of a trace of many short steps hold
// no pointers (the page's garbage collector, which runs its whole mark
// phase in one task of the page's thread, then skips them), and it is
// written by its name (MarshalText): "forward", "backward", "optimizer" or
// "other".
type Phase uint8

// The phases. The zero Phase is PhaseOther.
const (
	PhaseOther Phase = iota
	PhaseForward
	PhaseBackward
	PhaseOptimizer
	numPhases
)

// Phases are the phases, each once, in the order of their numbers.
var Phases = [numPhases]Phase{PhaseOther, PhaseForward, PhaseBackward, PhaseOptimizer}

// phaseNames are the phases' names, by Phase.
var phaseNames = [numPhases]string{"other", "forward", "backward", "optimizer"}

// String returns the phase's name.
func (p Phase) String() string {
	if p < numPhases {
		return phaseNames[p]
	}
	return "Phase(" + strconv.Itoa(int(p)) + ")"
}

// MarshalText returns the phase's name; a Phase that is none of the
// phases is an error.
func (p Phase) MarshalText() ([]byte, error) {
	if p >= numPhases {
		return nil, fmt.Errorf("analysis: no phase %d", p)
	}
	return []byte(phaseNames[p]), nil
}

// UnmarshalText sets p to the phase named b: "forward", "backward",
// "optimizer" or "other".
func (p *Phase) UnmarshalText(b []byte) error {
	for k, n := range phaseNames {
		if string(b) == n {
			*p = Phase(k)
			return nil
		}
	}
	return fmt.Errorf("analysis: unknown phase %q (want forward, backward, optimizer or other)", b)
}

// reportPhase maps a stack phase to the report's phase.
func reportPhase(p phase) Phase { return phaseSlots[phaseSlot(p)] }

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
	Phase Phase `json:"phase"`
	// PeakAllocatedBytes is the phase's highest allocated memory, first
	// reached after entry PeakIndex.
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes"`
	PeakIndex          int   `json:"peak_index"`
}

// PhaseSpan is a stretch of one phase in one step: what a timeline shades.
type PhaseSpan struct {
	Step       int   `json:"step"`
	Phase      Phase `json:"phase"`
	FirstEntry int   `json:"first_entry"`
	LastEntry  int   `json:"last_entry"`
}

// PeakPhase says where the device's peak fell.
type PeakPhase struct {
	// Step indexes Steps; -1 when the peak is outside every step (before
	// the first entry, or during set-up).
	Step int `json:"step"`
	// Phase is forward, backward, optimizer or other.
	Phase Phase `json:"phase"`
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
	// Entry indices are int32 (the decoder keeps fewer than 2^31 - 1
	// entries): a run is 24 bytes, not 64, and a trace cut into many
	// short phases has hundreds of thousands of runs. Entries of another
	// annotation window start a new run (the scan's lastWin).
	first, last int32
	// next is the first allocation after its last entry, nextCut where
	// the scan cut before it, and zeroGrad a zero_grad between the two (-1:
	// none): where a step it ends stops.
	next, nextCut, zeroGrad int32
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
	pairAnnotations(anns, -1, add)
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

// interval is a stretch of entries in one step and one phase: the pass
// keeps, per interval, the highest allocated memory and the memory at its
// end, so steps and phases are measured without storing a value per entry.
//
// Entry indices are int32, as run's: an interval is 24 bytes, not 32.
type interval struct {
	// start is its first entry.
	start int32
	// arg is the entry after which max, the highest allocated memory after
	// any of its entries, is first reached; end the memory after its last
	// entry.
	arg      int32
	max, end int64
}

// stepper finds the steps and phases of one device in one pass over the
// trace.
type stepper struct {
	src source
	n   int
	// marks are the device's record_function windows; zgStarts the
	// zero_grad STARTs and profTimes the ProfilerStep starts and ends + 1,
	// sorted, where the pass must cut an interval.
	marks     []mark
	zgStarts  []int64
	profTimes []int64
	// stacked: some allocation has frames; pythonOnly: none has a C++
	// frame, so the autograd thread's allocations are the stackless ones.
	stacked, pythonOnly bool
	onRequested         bool
	initial             int64
	runs                []run
	ivs                 []interval
	// runsHint is the capacity scan gives runs and ivs (scanSteps).
	runsHint int
	// firstWork is the first allocation that is not module construction;
	// lastInit the last one that is (-1: none); zgBeforeWork a zero_grad
	// between them; zgBeforeRuns the first zero_grad before any run.
	firstWork, lastInit        int
	zgBeforeWork, zgBeforeRuns int
	workCut                    int // where the scan cut before firstWork
	// cursor walks the allocations once, in trace order, for evalPrefix.
	cursor int
}

// gapCut marks, for a run, where a step it ends would stop: the first
// allocation after its last entry, where the scan cut before it (back over
// the segment growth that made room for it), and a zero_grad before that.
type gapCut struct{ alloc, cut, zeroGrad int32 }

// recording looks at what the recording kept of the stacks: whether any
// allocation has frames, and whether the snapshot holds any C++ frame
// (none: stacks="python").
func (st *stepper) recording() {
	for i := 0; i < st.n; i++ {
		if st.src.kindAt(i) == kindAlloc && st.src.hasFrames(st.src.stack(i)) {
			st.stacked = true
			break
		}
	}
	st.pythonOnly = st.stacked && !st.src.anyCppFrame()
}

// label is the phase of an allocation or free and the annotation window
// that gave it (-1: none): a phase annotation holding its time wins; else
// its stack's phase. An allocation without frames is the autograd
// thread's when the recording has Python frames only. A free counts only
// for the optimizer and only before the first allocation (the tail of an
// optimizer step the trace window starts in), never zero_grad's.
func (st *stepper) label(w *phaseSweep, alloc bool, t int64, id snapshot.StackID) (phase, int) {
	p, j := phaseUnknown, -1
	if len(w.ws) > 0 {
		p, j = w.at(t)
	}
	if p == phaseUnknown && alloc {
		// The stack alone decides.
		if !st.src.hasFrames(id) {
			if st.pythonOnly {
				return phaseBackward, -1
			}
			return phaseUnknown, -1
		}
		return st.src.stackPhase(id), -1
	}
	if p == phaseUnknown {
		switch {
		case !st.src.hasFrames(id):
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

// scanState is the state of one scan: the interval being measured and
// the segment growth right before the current entry.
type scanState struct {
	st  *stepper
	cur int64
	// ivStart, ivMax and ivArg describe the open interval.
	ivStart, ivArg int
	ivMax          int64
	// streak is the first of the segment_alloc/segment_map entries right
	// before the current one (-1: none): a cut before an allocation moves
	// back over the growth that made room for it. Growth leaves allocated
	// memory unchanged, so the streak's values are cur.
	streak int
}

// cut closes the open interval before entry i.
func (sc *scanState) cut(i int) {
	if i == sc.ivStart {
		return
	}
	sc.st.ivs = append(doubled(sc.st.ivs), interval{start: int32(sc.ivStart), max: sc.ivMax, arg: int32(sc.ivArg), end: sc.cur})
	sc.ivStart, sc.ivMax, sc.ivArg = i, math.MinInt64, -1
}

// The scan keeps cur, ivMax, ivArg and streak in locals (registers) and
// hands them to cut and cutBefore through cutAt and cutBeforeAt, which
// return the interval's new ivMax and ivArg.
func (sc *scanState) cutAt(i int, cur, ivMax int64, ivArg, streak int) (int64, int) {
	sc.cur, sc.ivMax, sc.ivArg, sc.streak = cur, ivMax, ivArg, streak
	sc.cut(i)
	return sc.ivMax, sc.ivArg
}

func (sc *scanState) cutBeforeAt(i int, cur, ivMax int64, ivArg, streak int) (int, int64, int) {
	sc.cur, sc.ivMax, sc.ivArg, sc.streak = cur, ivMax, ivArg, streak
	first := sc.cutBefore(i)
	return first, sc.ivMax, sc.ivArg
}

// cutBefore closes the open interval before the allocation at entry i and
// the segment growth before it, and returns where the new one starts.
func (sc *scanState) cutBefore(i int) int {
	switch {
	case sc.streak < 0:
		sc.cut(i)
		return i
	case sc.streak <= sc.ivStart:
		return sc.ivStart // the interval starts inside the streak
	}
	sc.st.ivs = append(doubled(sc.st.ivs), interval{start: int32(sc.ivStart), max: sc.ivMax, arg: int32(sc.ivArg), end: sc.cur})
	sc.ivStart, sc.ivMax, sc.ivArg = sc.streak, sc.cur, sc.streak
	return sc.streak
}

// scan is the one pass over the trace: it labels allocations, groups them
// into runs, notes where steps may start (the first allocation after a
// run, zero_grad, the first allocation after module construction, profiler
// step edges) and measures allocated memory per interval between those
// points, summed from the entries' sizes. It returns the highest allocated
// memory and the entry where it was first reached (-1: before the first).
// Where the trace does not pair cleanly, remeasure corrects the memory
// (the runs and interval bounds do not depend on it).
func (st *stepper) scan() (int64, int) {
	l := st.scanStart()
	for l.next() {
	}
	return l.finish()
}

// scanStart starts scan: the entries are then scanned a chunk at a time
// (scanLoop.next), and scanLoop.finish ends the scan.
func (st *stepper) scanStart() *scanLoop {
	st.runs, st.ivs = st.runs[:0], st.ivs[:0]
	var cuts []gapCut
	if h := st.runsHint; h > 0 && cap(st.runs) == 0 {
		// The scan's runs, their cuts and its intervals are about as many
		// as classify's phase runs: made at that size once, not grown by
		// doubling, each growth a copy into memory touched fresh.
		h += h/8 + 64
		st.runs, st.ivs, cuts = make([]run, 0, h), make([]interval, 0, h), make([]gapCut, 0, h)
	}
	st.firstWork, st.lastInit, st.zgBeforeWork, st.zgBeforeRuns = -1, -1, -1, -1
	w := &phaseSweep{}
	for _, m := range st.marks {
		if m.kind == markPhase {
			w.ws = append(w.ws, m)
		}
	}
	timed := len(st.zgStarts)+len(st.profTimes) > 0
	// Without zero_grad annotations, zero_grad shows in the frees' stacks.
	stackZeroGrad := len(st.zgStarts) == 0 && st.stacked && st.src.anyZeroGrad()
	sc := &scanState{st: st, cur: st.initial, ivMax: math.MinInt64, ivArg: -1, streak: -1}
	cur, ivMax, ivArg, streak := sc.cur, sc.ivMax, sc.ivArg, sc.streak
	gap := -1 // the last run, until its first allocation after it
	zg, pt := 0, 0
	seenAlloc := false
	// Time is read per entry only when markers or phase windows use it.
	needTime := timed || len(w.ws) > 0
	noWindows := len(w.ws) == 0
	// delta is what an entry of each kind adds to allocated memory, per
	// byte of its size.
	var delta [8]int64
	delta[kindAlloc] = 1
	if st.onRequested {
		delta[kindFreeReq] = -1
	} else {
		delta[kindFreeDone] = -1
	}
	// Loop invariants in locals: the loop stores to memory, after which
	// the compiler would load fields again.
	legacyFree, pythonOnly, info := st.src.legacyFree, st.pythonOnly, st.src.info
	// The last run's phase and window, as st.runs holds them.
	lastPh, lastWin := phase(255), -1
	// fast: the entries to come may take the fast path (see below);
	// zgWatch: frees are watched for zero_grad.
	fast, zgWatch := false, false
	clean := gapCut{-1, -1, -1}
	l := &scanLoop{st: st, sc: sc, w: w, cur: cur, ivMax: ivMax, ivArg: ivArg, streak: streak, gap: gap, cuts: cuts,
		zg: zg, pt: pt, seenAlloc: seenAlloc, lastPh: lastPh, lastWin: lastWin, fast: fast, zgWatch: zgWatch,
		timed: timed, stackZeroGrad: stackZeroGrad, needTime: needTime, noWindows: noWindows, delta: delta,
		legacyFree: legacyFree, pythonOnly: pythonOnly, info: info, clean: clean}
	for c := range l.deltaOf {
		l.deltaOf[c] = delta[kindOfCode[c]]
	}
	for v := range l.phaseOf {
		inf, p := stackInfo(v), phaseUnknown
		switch {
		case inf&infoFrames != 0:
			p = phase(inf & 15)
		case pythonOnly:
			p = phaseBackward
		}
		l.phaseOf[v] = p
	}
	return l
}

// next scans the next chunk of entries (see inBlocks); it returns false
// when none was left.
func (l *scanLoop) next() bool {
	if l.base >= l.st.n {
		return false
	}
	ch := l.st.src.chunk(l.base, &l.sizes)
	l.chunk(l.base, ch)
	l.base += len(ch.codes)
	return true
}

// finish ends the scan once next has scanned every entry; it returns
// scan's result.
func (l *scanLoop) finish() (int64, int) {
	st, sc := l.st, l.sc
	cur, ivMax, ivArg, streak, cuts := l.cur, l.ivMax, l.ivArg, l.streak, l.cuts
	sc.cur, sc.ivMax, sc.ivArg, sc.streak = cur, ivMax, ivArg, streak
	// The highest memory: before the first entry, or an interval's.
	peak, peakIdx := st.initial, -1
	if st.n > 0 {
		st.ivs = append(st.ivs, interval{start: int32(sc.ivStart), max: sc.ivMax, arg: int32(sc.ivArg), end: sc.cur})
	}
	// The intervals cover every entry: the peak is the first highest.
	for _, iv := range st.ivs {
		if iv.max > peak {
			peak, peakIdx = iv.max, int(iv.arg)
		}
	}
	for r := range st.runs {
		st.runs[r].next, st.runs[r].nextCut, st.runs[r].zeroGrad = cuts[r].alloc, cuts[r].cut, cuts[r].zeroGrad
	}
	return peak, peakIdx
}

// scanLoop is scan's state between chunks of the trace: the loop over one
// chunk is a method called per chunk, so that a WebAssembly engine runs it
// optimized from its first chunks on (see inBlocks).
type scanLoop struct {
	st *stepper
	sc *scanState
	// base is the next chunk's first entry; sizes the chunks' buffer
	// (source.chunk).
	base  int
	sizes []int64
	w     *phaseSweep
	// The scan's state, as scan describes it.
	cur, ivMax                 int64
	ivArg, streak, gap, zg, pt int
	cuts                       []gapCut
	seenAlloc, fast, zgWatch   bool
	lastPh                     phase
	lastWin                    int
	// Invariants.
	timed, stackZeroGrad, needTime, noWindows, legacyFree, pythonOnly bool
	delta                                                             [8]int64
	info                                                              []stackInfo
	clean                                                             gapCut
	// phaseOf is an allocation's phase by its stack's info byte (the
	// stack alone decides: see label), deltaOf what an entry adds to
	// allocated memory per byte of its size, by action code: the fast
	// path's tables.
	phaseOf [256]phase
	deltaOf [256]int64
}

// chunk scans entries base, base+1, … of chunk ch.
func (l *scanLoop) chunk(base int, ch entryChunk) {
	st, sc, w := l.st, l.sc, l.w
	cur, ivMax, ivArg, streak, gap, zg, pt, cuts := l.cur, l.ivMax, l.ivArg, l.streak, l.gap, l.zg, l.pt, l.cuts
	seenAlloc, fast, zgWatch, lastPh, lastWin := l.seenAlloc, l.fast, l.zgWatch, l.lastPh, l.lastWin
	timed, stackZeroGrad, needTime, noWindows := l.timed, l.stackZeroGrad, l.needTime, l.noWindows
	legacyFree, pythonOnly, info, clean, delta := l.legacyFree, l.pythonOnly, l.info, l.clean, &l.delta
	for j := 0; j < len(ch.codes); j++ {
		if fast {
			// The fast path takes the entries that change nothing but
			// the memory, and the allocations that continue the last
			// run, exactly as the general path below would; it stops
			// at any other entry, which the general path takes.
			var lastAlloc int
			j, lastAlloc, cur, ivMax, ivArg, streak = l.fastRun(ch, base, j, cur, ivMax, ivArg, streak, lastPh, zgWatch)
			if lastAlloc >= 0 {
				st.runs[len(st.runs)-1].last = int32(lastAlloc)
			}
			if j == len(ch.codes) {
				break
			}
		}
		code := ch.codes[j]
		i := base + j
		k := kindOfCode[code]
		if k == kindOther && legacyFree {
			k = st.src.otherKind(i)
		}
		var t int64
		if needTime {
			t = st.src.timeUS(i)
		}
		if timed && t != 0 {
			marker := false
			for zg < len(st.zgStarts) && st.zgStarts[zg] <= t {
				marker = true
				zg++
			}
			for pt < len(st.profTimes) && st.profTimes[pt] <= t {
				ivMax, ivArg = sc.cutAt(i, cur, ivMax, ivArg, streak)
				pt++
			}
			if marker {
				switch {
				case gap >= 0 && cuts[gap].zeroGrad < 0:
					cuts[gap].zeroGrad = int32(i)
					ivMax, ivArg = sc.cutAt(i, cur, ivMax, ivArg, streak)
				case len(st.runs) == 0 && st.zgBeforeRuns < 0:
					st.zgBeforeRuns = i
					ivMax, ivArg = sc.cutAt(i, cur, ivMax, ivArg, streak)
				}
				if st.firstWork < 0 && st.zgBeforeWork < 0 {
					st.zgBeforeWork = i
					ivMax, ivArg = sc.cutAt(i, cur, ivMax, ivArg, streak)
				}
			}
		}
		switch {
		case k == kindAlloc || !seenAlloc && (k == kindFreeReq || k == kindFreeDone):
			alloc := k == kindAlloc
			var p phase
			win := -1
			if alloc && noWindows {
				// label's rule for an allocation without phase
				// windows, inline: the stack alone decides.
				var inf stackInfo
				if id := ch.stacks[j]; uint(id) < uint(len(info)) {
					if inf = info[id]; inf&infoKnown == 0 {
						inf = st.src.fillInfo(id)
					}
				}
				switch {
				case inf&infoFrames != 0:
					p = phase(inf & 15)
				case pythonOnly:
					p = phaseBackward
				}
			} else {
				p, win = st.label(w, alloc, t, ch.stacks[j])
			}
			if alloc {
				seenAlloc = true
				if p == phaseInit {
					st.lastInit, st.zgBeforeWork = i, -1
				} else if st.firstWork < 0 {
					st.firstWork = i
					st.workCut, ivMax, ivArg = sc.cutBeforeAt(i, cur, ivMax, ivArg, streak)
				}
			}
			last := len(st.runs) - 1
			switch {
			case p == phaseUnknown || p == phaseInit:
				if alloc && gap >= 0 && cuts[gap].alloc < 0 {
					var cut int
					cut, ivMax, ivArg = sc.cutBeforeAt(i, cur, ivMax, ivArg, streak)
					cuts[gap].alloc, cuts[gap].cut = int32(i), int32(cut)
					gap = -1
				}
			case last >= 0 && lastPh == p && (win < 0 || lastWin < 0 || win == lastWin):
				r := &st.runs[last]
				r.last = int32(i)
				if win >= 0 {
					lastWin = win
				}
				if gap != last {
					cuts[last], gap = gapCut{-1, -1, -1}, last
				} else if c := &cuts[last]; c.alloc >= 0 || c.cut >= 0 || c.zeroGrad >= 0 {
					*c = gapCut{-1, -1, -1}
				}
			default:
				var first int
				first, ivMax, ivArg = sc.cutBeforeAt(i, cur, ivMax, ivArg, streak)
				if gap >= 0 && cuts[gap].alloc < 0 {
					cuts[gap].alloc, cuts[gap].cut = int32(i), int32(first)
				}
				st.runs = append(doubled(st.runs), run{ph: p, first: int32(first), last: int32(i)})
				lastPh, lastWin = p, win
				cuts = append(doubled(cuts), gapCut{-1, -1, -1})
				gap = len(cuts) - 1
			}
		case stackZeroGrad && (k == kindFreeReq || k == kindFreeDone) && gap >= 0 && cuts[gap].zeroGrad < 0 &&
			st.runs[gap].ph == phaseOptimizer && st.isZeroGrad(ch.stacks[j]):
			cuts[gap].zeroGrad = int32(i)
			ivMax, ivArg = sc.cutAt(i, cur, ivMax, ivArg, streak)
		}
		if k != kindGrowth {
			streak = -1
		} else if streak < 0 {
			streak = i
		}
		cur += delta[k] * ch.sizes[j]
		if cur > ivMax {
			ivMax, ivArg = cur, i
		}
		// The fast path needs: no times to read, the work started,
		// a run whose gap has nothing noted yet.
		last := len(st.runs) - 1
		fast = !scanNoFast && !needTime && seenAlloc && st.firstWork >= 0 && last >= 0 && gap == last && cuts[last] == clean
		zgWatch = stackZeroGrad && lastPh == phaseOptimizer
	}
	l.cur, l.ivMax, l.ivArg, l.streak, l.gap, l.zg, l.pt, l.cuts = cur, ivMax, ivArg, streak, gap, zg, pt, cuts
	l.seenAlloc, l.fast, l.zgWatch, l.lastPh, l.lastWin = seenAlloc, fast, zgWatch, lastPh, lastWin
}

// fastRun is the scan's fast path (see chunk) over entries j, j+1, … of
// chunk ch: it returns the entry it stopped at (len(ch.codes): none), the
// last allocation it added to the last run (-1: none) and the scan's
// memory state. It is a function of its own, with its tables read from
// l: a loop over few variables, which the WebAssembly compiler keeps in
// locals.
func (l *scanLoop) fastRun(ch entryChunk, base, j int, cur, ivMax int64, ivArg, streak int, lastPh phase, zgWatch bool) (int, int, int64, int64, int, int) {
	codes := ch.codes
	stacks, sizes := ch.stacks[:len(codes)], ch.sizes[:len(codes)]
	info, phaseOf, deltaOf := l.info, &l.phaseOf, &l.deltaOf
	legacyFree := l.legacyFree
	lastAlloc := -1
	for ; j < len(codes); j++ {
		c := codes[j]
		switch kindOfCode[c] {
		case kindAlloc:
			var inf stackInfo
			if id := stacks[j]; uint(id) < uint(len(info)) {
				if inf = info[id]; inf&infoKnown == 0 {
					inf = l.st.src.fillInfo(id)
				}
			}
			if phaseOf[inf] != lastPh {
				return j, lastAlloc, cur, ivMax, ivArg, streak
			}
			lastAlloc = base + j
			streak = -1
		case kindFreeReq, kindFreeDone:
			if zgWatch {
				if id := stacks[j]; uint(id) < uint(len(info)) {
					inf := info[id]
					if inf&infoKnown == 0 {
						inf = l.st.src.fillInfo(id)
					}
					if inf&infoZeroGrad != 0 {
						return j, lastAlloc, cur, ivMax, ivArg, streak
					}
				}
			}
			streak = -1
		case kindGrowth:
			if streak < 0 {
				streak = base + j
			}
		default:
			if legacyFree {
				return j, lastAlloc, cur, ivMax, ivArg, streak
			}
			streak = -1
		}
		cur += deltaOf[c] * sizes[j]
		if cur > ivMax {
			ivMax, ivArg = cur, base+j
		}
	}
	return j, lastAlloc, cur, ivMax, ivArg, streak
}

// clockSamples bounds the clock's samples: 4 Ki float64s stay in a CPU's
// first-level cache however long the trace.
const clockSamples = 4096

// clock tells the time of any entry from every step-th entry's time_us
// (step = 2^shift, 1 for traces of up to clockSamples entries),
// interpolating between samples: a table small enough to stay in the CPU's
// cache, where reading each allocation's end entry from the trace would
// miss it once per allocation. The error is at most the time spread of
// step consecutive entries: under 0.1 % of the byte-time integral on the
// tested traces.
type clock struct {
	t []int64 // time_us of entries 0, step, 2·step, …, then of the last (while scanning)
	// s is t in seconds since the first entry (seal), its last sample
	// moved so that every entry, the last stretch's too, interpolates
	// between s[i>>shift] and the next sample.
	s     []float64
	n     int
	shift uint
	mask  int
	inv   float64 // 1 / step
}

// traceClock returns the clock of the trace's entries, sampled apart: a
// few thousand reads. Lifetimes count entries (no clock: on() is false)
// when the times do not advance.
func traceClock(src source) clock {
	n := src.entries()
	if n == 0 {
		return clock{}
	}
	if first, last := src.timeUS(0), src.timeUS(n-1); first <= 0 || last <= first {
		return clock{}
	}
	c := newClock(n)
	for i := 0; i < n; i += c.mask + 1 {
		c.t = append(c.t, src.timeUS(i))
	}
	c.t = append(c.t, src.timeUS(n-1))
	c.seal()
	return c
}

// newClock returns a clock for n entries, to be fed with samples.
func newClock(n int) clock {
	var shift uint
	for n>>shift > clockSamples {
		shift++
	}
	return clock{t: make([]int64, 0, n>>shift+2), n: n, shift: shift, mask: 1<<shift - 1, inv: 1 / float64(int(1)<<shift)}
}

// on reports whether the trace had times to sample.
func (c *clock) on() bool { return c.s != nil }

// seal turns the samples into s.
func (c *clock) seal() {
	if len(c.t) < 2 {
		c.t = nil
		return
	}
	t0, m := c.t[0], len(c.t)
	c.s = make([]float64, m)
	for k, v := range c.t {
		c.s[k] = float64(v-t0) * 1e-6
	}
	// The last sample is the last entry's, span entries after the one
	// before it: stretch it to a full step.
	if span := c.n - 1 - (m-2)<<c.shift; span > 0 {
		c.s[m-1] = c.s[m-2] + (c.s[m-1]-c.s[m-2])*float64(c.mask+1)/float64(span)
	} else {
		c.s[m-1] = c.s[m-2]
	}
	c.t = nil
}

// at returns the time of entry i in seconds since the first entry.
func (c *clock) at(i int) float64 {
	k := i >> c.shift
	lo := c.s[k]
	return lo + float64(i&c.mask)*c.inv*(c.s[k+1]-lo)
}

// end is the allocated memory after the last entry, as the scan summed it.
func (st *stepper) end() int64 {
	if len(st.ivs) == 0 {
		return st.initial
	}
	return st.ivs[len(st.ivs)-1].end
}

// remeasure sets every interval's memory from exact, the allocated memory
// after each entry, keeping the intervals' bounds (an interval that starts
// at a segment growth streak starts with the memory before the streak,
// which the growth leaves unchanged: exact's at its first entry).
func (st *stepper) remeasure(exact []int64) {
	for j := range st.ivs {
		iv := &st.ivs[j]
		hi := len(exact)
		if j+1 < len(st.ivs) {
			hi = int(st.ivs[j+1].start)
		}
		iv.max, iv.arg = math.MinInt64, -1
		for i := int(iv.start); i < hi; i++ {
			if exact[i] > iv.max {
				iv.max, iv.arg = exact[i], int32(i)
			}
		}
		if hi > int(iv.start) {
			iv.end = exact[hi-1]
		}
	}
}

// allocatedCurve returns the allocated memory after every entry from the
// live ranges (one pass over the allocations, one over the entries): the
// exact fallback of scan for traces whose entries do not pair cleanly.
func allocatedCurve(src source) []int64 {
	n := src.entries()
	cur := make([]int64, n)
	var initial int64
	for k := range src.numAllocs() {
		start, end, _ := src.allocSpan(k)
		size := src.allocSize(k)
		if start < 0 {
			initial += size
		} else {
			cur[start] += size
		}
		if int(end) < n {
			cur[end] -= size
		}
	}
	run := initial
	for i := range cur {
		run += cur[i]
		cur[i] = run
	}
	return cur
}

// isZeroGrad reports whether a free's stack is inside Optimizer.zero_grad.
func (st *stepper) isZeroGrad(id snapshot.StackID) bool { return st.src.stackZeroGrad(id) }

// boundaryAfter is where the step ending with run r stops: the next step
// starts at zero_grad if one comes before the next allocation, else at
// that allocation (with the segment growth before it), else the trace ends
// the step.
func (st *stepper) boundaryAfter(r run) int {
	switch {
	case r.zeroGrad >= 0 && (r.next < 0 || r.zeroGrad <= r.next):
		return int(r.zeroGrad)
	case r.next < 0:
		return st.n
	}
	return int(r.nextCut)
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
	// ends are the runs that end each step.
	ends := st.runsOf(phaseOptimizer)
	rule := stepRuleOptimizer
	if len(ends) == 0 {
		rule = stepRuleBackward
		ends = st.runsOf(phaseBackward)
	}
	if len(ends) == 0 {
		return []span{{first: st.start0(false), last: st.n - 1}}, stepRuleNone
	}
	partial := st.firstPartial(int(ends[0].last))
	out := make([]span, 0, len(ends)+1)
	start := st.start0(partial)
	for _, e := range ends {
		b := st.boundaryAfter(e)
		if b <= start {
			continue // the marker lies before where the steps start: no step
		}
		out = append(out, span{first: start, last: b - 1})
		start = b
	}
	if len(out) == 0 {
		return []span{{first: start, last: st.n - 1, partial: true}}, rule
	}
	out[0].partial = out[0].partial || partial
	if start < st.n {
		if last := ends[len(ends)-1]; last.next >= 0 {
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
	switch {
	case partial || st.firstWork < 0:
		return 0
	case !st.stacked && st.zgBeforeRuns >= 0:
		return st.zgBeforeRuns
	case st.zgBeforeWork >= 0:
		return st.zgBeforeWork
	}
	return st.workCut
}

// firstPartial reports whether the trace window starts inside the first
// step, whose last marker entry is end: its first phase run is a backward
// pass, or an optimizer step in a recording that shows forward passes, or
// allocations made before the window were freed in its backward pass
// (saved activations of a forward the window missed).
func (st *stepper) firstPartial(end int) bool {
	seesPasses, backwardRun := false, false
	for _, r := range st.runs {
		switch r.ph {
		case phaseBackward:
			seesPasses, backwardRun = true, true
		case phaseForward:
			seesPasses = true
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
	// A block from before the window was freed in a backward pass when
	// its stack says backward (RulePreTraceFreedInBackward) or its free
	// falls in a backward run: with neither a backward stack nor a run,
	// no block can be, and the allocations need not be read.
	if !backwardRun && !st.src.anyBackwardStack() {
		return false
	}
	// The allocations are listed in trace order: those from the trace at
	// their alloc, the ones from before it at their free.
	for k := range st.src.numAllocs() {
		start, stop, _ := st.src.allocSpan(k)
		if start >= 0 {
			if int(start) > end {
				break
			}
			continue
		}
		if int(stop) > end || st.src.allocOrigin(k) != PreTraceFreed {
			break // past the step, or the blocks alive at the end (listed last)
		}
		l := st.src.live(k)
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
	k := sort.Search(len(st.runs), func(j int) bool { return int(st.runs[j].first) > i })
	return k - 1
}

// profilerSteps maps ProfilerStep#N windows to entries: from the first
// entry at or after its START to the last at or before its END.
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
	spansOut   []PhaseSpan
	peak       PeakPhase
	info       StepInfo
	// maxPhase holds, per phase, the entry of its highest allocated memory
	// over all steps.
	maxPhase map[Phase]int
	// oomPhase is the phase of the last OOM event's entry (PhaseOther
	// when there is none).
	oomPhase Phase
}

// findSteps cuts the trace into steps and phases and measures them, in one
// pass over the entries and (with stacks) one over the allocations. r is
// the device's report: its peak checks the pass's sums.
func findSteps(src source, r *DeviceReport) stepResult {
	return scanSteps(src, r, src.d.phaseRuns).result(r)
}

// scanSteps is findSteps's pass over the entries (and the live ranges
// where the sizes do not follow the replay): it reads the replay's
// results, not the classification, so it can run beside classify.
// runsHint is classify's number of phase runs where classify has run (0:
// unknown), a capacity hint.
func scanSteps(src source, r *DeviceReport, runsHint int) *stepper {
	st := newStepper(src, r)
	st.runsHint = runsHint
	peak, at := st.scan()
	st.check(peak, at, r)
	return st
}

// check makes sure that the memory the scan summed (its peak and the entry
// where it was first reached) follows the replay, whose report r is; where
// it does not (an address allocated twice, a free whose size differs from
// its alloc's, an impossible size), it reads the allocated memory from the
// live ranges instead.
func (st *stepper) check(peak int64, at int, r *DeviceReport) {
	if peak != r.PeakAllocatedBytes || at != r.PeakIndex || st.end() != st.src.replayEnd() || st.src.replayBadSizes() > 0 {
		st.remeasure(allocatedCurve(st.src))
	}
}

// shift adds initial, the allocated memory before the first entry, to the
// memory of a scan made from 0 (earlyScan) and to its peak, as if it
// had started from initial: the scan only adds the entries' sizes to it
// and compares sums, so the result is the same. An interval's max of
// math.MinInt64 (no entry in it) stays.
func (st *stepper) shift(initial, peak int64) int64 {
	st.initial = initial
	for i := range st.ivs {
		iv := &st.ivs[i]
		if iv.max != math.MinInt64 {
			iv.max += initial
		}
		iv.end += initial
	}
	return peak + initial
}

// result is the rest of findSteps after scanSteps: the steps, phases and
// their peaks (it reads the allocations' rules: firstPartial).
func (st *stepper) result(r *DeviceReport) stepResult {
	spans, rule := st.steps()
	oom := -1 // the last OOM event's entry
	if n := len(r.OOMEvents); n > 0 {
		oom = r.OOMEvents[n-1].Index
	}
	res := stepResult{peak: PeakPhase{Step: -1, Phase: PhaseOther}, oomPhase: PhaseOther, maxPhase: map[Phase]int{},
		info: StepInfo{Rule: rule, Phases: st.phasesRule()}, steps: make([]Step, 0, len(spans)),
		// At most one phase peak and one span per interval.
		phasePeaks: make([]PhasePeak, 0, len(st.ivs)), spansOut: make([]PhaseSpan, 0, len(st.ivs))}
	measureSteps(st, &res, spans, r.PeakIndex, oom)
	// The report keeps them: the room left over is given back.
	res.phasePeaks, res.spansOut = trimmed(res.phasePeaks), trimmed(res.spansOut)
	return res
}

// scanNoFast turns the scan's fast path off, and measureSteps is the
// pass findSteps measures the steps with: tests compare them with the
// general path and the straightforward pass.
var (
	scanNoFast   = false
	measureSteps = (*stepper).measure
)

// phaseSlots are the report's phase names by slot (see phaseSlot): the
// measure pass keys its per-phase numbers by slot, not by name.
var phaseSlots = [4]Phase{PhaseForward, PhaseBackward, PhaseOptimizer, PhaseOther}

// phaseSlot is the slot of reportPhase(p) in phaseSlots.
func phaseSlot(p phase) int {
	switch p {
	case phaseForward:
		return 0
	case phaseBackward:
		return 1
	case phaseOptimizer:
		return 2
	}
	return 3
}

// measure fills res's steps, phase peaks and spans, the peak's and the
// OOM's phase (peakIndex, oom: the entries; -1 for none) and each phase's
// highest entry from the intervals, in one pass over them in trace order:
// the run holding an interval's start and the run ending each step are
// found by cursors that only move forward, and a step's phases by slot,
// so that the work per interval and per step is a few comparisons, with
// no map, string comparison or search.
func (st *stepper) measure(res *stepResult, spans []span, peakIndex, oom int) {
	k, runLo := -1, 0
	// rc is the run holding the current interval's start (runAt), re the
	// run holding the current step's last entry.
	rc, re := -1, -1
	// stepPeaks are step k's phase peaks in the order its phases first
	// appear, slotAt[s] the place of slot s among them (-1: none yet).
	var stepPeaks []PhasePeak
	slotAt := [4]int{-1, -1, -1, -1}
	var maxBytes [4]int64
	var maxAt [4]int
	var maxSeen [4]bool
	flush := func() {
		if k < 0 {
			return
		}
		res.phasePeaks = append(res.phasePeaks, stepPeaks...)
		for sl, at := range slotAt {
			if at < 0 {
				continue
			}
			if pp := &stepPeaks[at]; !maxSeen[sl] || pp.PeakAllocatedBytes > maxBytes[sl] {
				maxSeen[sl], maxBytes[sl], maxAt[sl] = true, pp.PeakAllocatedBytes, pp.PeakIndex
			}
		}
		s := &res.steps[k]
		last := spans[k].last
		for re+1 < len(st.runs) && int(st.runs[re+1].first) <= last {
			re++
		}
		hi := re + 1
		s.MicroBatches, s.EvalPasses = st.passes(runLo, hi)
		res.info.EvalPasses += s.EvalPasses
		runLo = hi
	}
	inSmallBlocks(len(st.ivs), func(blo, bhi int) {
		for j := blo; j < bhi; j++ {
			iv := st.ivs[j]
			ivStart, ivArg := int(iv.start), int(iv.arg)
			for k+1 < len(spans) && ivStart >= spans[k+1].first {
				flush()
				k++
				sp := spans[k]
				res.steps = append(res.steps, Step{FirstEntry: sp.first, LastEntry: sp.last, Partial: sp.partial, PeakIndex: -1})
				stepPeaks = stepPeaks[:0]
				slotAt = [4]int{-1, -1, -1, -1}
				for runLo < len(st.runs) && int(st.runs[runLo].first) < sp.first {
					runLo++
				}
			}
			step := k
			if k >= 0 && ivStart > spans[k].last {
				step = -1 // after the last step (cannot happen: the last step ends the trace)
			}
			for rc+1 < len(st.runs) && int(st.runs[rc+1].first) <= ivStart {
				rc++
			}
			sl := 3 // PhaseOther
			if rc >= 0 && step >= 0 && int(st.runs[rc].first) >= spans[step].first {
				sl = phaseSlot(st.runs[rc].ph)
			}
			ph := phaseSlots[sl]
			// next is the start of the next interval (the trace length
			// after the last).
			next := st.n
			if j+1 < len(st.ivs) {
				next = int(st.ivs[j+1].start)
			}
			if step >= 0 {
				last := min(next-1, spans[step].last)
				first := max(ivStart, spans[step].first)
				if n := len(res.spansOut); n > 0 && res.spansOut[n-1].Step == step && res.spansOut[n-1].Phase == ph {
					res.spansOut[n-1].LastEntry = last
				} else {
					res.spansOut = append(res.spansOut, PhaseSpan{Step: step, Phase: ph, FirstEntry: first, LastEntry: last})
				}
			}
			// The last interval holds every entry from its start on.
			lastIv := j+1 == len(st.ivs)
			if peakIndex >= ivStart && (lastIv || peakIndex < next) && peakIndex >= 0 {
				res.peak = PeakPhase{Step: step, Phase: ph}
			}
			if oom >= ivStart && (lastIv || oom < next) {
				res.oomPhase = ph
			}
			if step < 0 {
				continue
			}
			s := &res.steps[step]
			if s.PeakIndex < 0 || iv.max > s.PeakAllocatedBytes {
				s.PeakAllocatedBytes, s.PeakIndex = iv.max, ivArg
			}
			s.EndAllocatedBytes = iv.end
			switch p := slotAt[sl]; {
			case p < 0:
				slotAt[sl] = len(stepPeaks)
				stepPeaks = append(stepPeaks, PhasePeak{Step: step, Phase: ph, PeakAllocatedBytes: iv.max, PeakIndex: ivArg})
			case iv.max > stepPeaks[p].PeakAllocatedBytes:
				stepPeaks[p].PeakAllocatedBytes, stepPeaks[p].PeakIndex = iv.max, ivArg
			}
		}
	})
	flush()
	for sl, ok := range maxSeen {
		if ok {
			res.maxPhase[phaseSlots[sl]] = maxAt[sl]
		}
	}
}

// newStepper returns the stepper of src, whose report r gives the
// allocated memory before the first entry, ready to scan.
func newStepper(src source, r *DeviceReport) *stepper {
	return newStepperFrom(src, r.InitialAllocatedBytes, src.endsOnRequested())
}

// newStepperFrom is newStepper given the allocated memory before the first
// entry and whether live ranges end at free_requested.
func newStepperFrom(src source, initial int64, onRequested bool) *stepper {
	st := &stepper{src: src, n: src.entries(), marks: marks(src.annotations()), initial: initial,
		onRequested: onRequested}
	for _, m := range st.marks {
		switch m.kind {
		case markZeroGrad:
			st.zgStarts = append(st.zgStarts, m.start)
		case markProfilerStep:
			st.profTimes = append(st.profTimes, m.start)
			if m.end < 1<<63-1 {
				st.profTimes = append(st.profTimes, m.end+1)
			}
		}
	}
	slices.Sort(st.zgStarts)
	slices.Sort(st.profTimes)
	st.recording()
	return st
}

// runsOf returns the runs of phase p.
func (st *stepper) runsOf(p phase) []run {
	n := 0
	for _, r := range st.runs {
		if r.ph == p {
			n++
		}
	}
	out := make([]run, 0, n)
	for _, r := range st.runs {
		if r.ph == p {
			out = append(out, r)
		}
	}
	return out
}

// doubled returns s, or when it is full a copy with twice the room:
// append grows a big slice by a quarter, so that one grown to n elements
// cost about 5n elements of allocation and copying, 2n by doubling.
func doubled[T any](s []T) []T {
	if len(s) < cap(s) {
		return s
	}
	g := make([]T, len(s), max(64, 2*cap(s)))
	copy(g, s)
	return g
}

// trimmed returns s, or a copy without the spare room when that is more
// than a quarter of it.
func trimmed[T any](s []T) []T {
	if cap(s)-len(s) <= len(s)/4 {
		return s
	}
	return append(make([]T, 0, len(s)), s...)
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
		start, end, _ := st.src.allocSpan(k)
		if int(start) < int(fwd.first) {
			continue // before the run, or made before the trace
		}
		if int(start) > int(fwd.last) {
			break
		}
		if st.src.stackPhase(st.src.allocStack(k)) != phaseForward {
			continue
		}
		switch {
		case found:
			post++
		case int(end) >= int(bwd.first):
			if pre < 8 {
				return false // the common case: the training forward starts the run
			}
			found = true
			post++
		default:
			pre++
		}
	}
	return found && 4*pre >= post
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
