package analysis

import (
	"slices"
	"sort"
	"strings"

	"oomscope/snapshot"
)

// phaseRun is a stretch of the trace whose allocations (with a known
// phase) all share one phase; it lasts until the next run starts.
type phaseRun struct {
	phase phase
	start int32 // index of its first allocation
	end   int32 // index where the next run starts, or the trace length
	last  int32 // index of its last allocation with its phase
	// bwdStart is, for a forward run, the first allocation without a stack
	// after its last forward allocation (-1: none): where backward began
	// when the recording has Python stacks only, which cannot see the
	// autograd thread.
	bwdStart int32
}

// window is a phase marked by record_function annotations
// (external_annotations), in time_us.
type window struct {
	phase      phase
	start, end int64
}

// annotationWindows pairs START/END annotations of this device by name and
// keeps those naming a phase: "Optimizer.step…" or names containing
// "optimizer", "backward" or "forward". A START without END lasts to the
// end of time.
func annotationWindows(s *snapshot.Snapshot, dev int) []window {
	var out []window
	pairAnnotations(s.ExternalAnnotations, dev, func(name string, start, end int64) {
		if p := annotationPhase(name); p != phaseUnknown {
			out = append(out, window{p, start, end})
		}
	})
	slices.SortStableFunc(out, func(x, y window) int { return compareInt64(x.start, y.start) })
	return out
}

// pairAnnotations pairs the START and END record_function annotations of
// device dev (every device when dev < 0) by name, the latest open START of
// a name closing first, and calls add with each range in the order the
// ENDs come; then each START without END, lasting to the end of time, by
// name.
func pairAnnotations(anns []snapshot.Annotation, dev int, add func(name string, start, end int64)) {
	open := map[string][]int64{}
	for _, an := range anns {
		if dev >= 0 && an.Device != dev {
			continue
		}
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
}

func annotationPhase(name string) phase {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "zero_grad"):
		return phaseUnknown
	case strings.Contains(n, "optimizer"):
		return phaseOptimizer
	case strings.Contains(n, "backward"):
		return phaseBackward
	case strings.Contains(n, "forward"):
		return phaseForward
	}
	return phaseUnknown
}

// windowPhase returns the phase of the latest-starting window holding time
// t (the innermost one when windows nest). maxEnd[j] is the largest end of
// ws[0..j], which bounds the backward scan.
func windowPhase(ws []window, maxEnd []int64, t int64) phase {
	if t == 0 {
		return phaseUnknown
	}
	k := sort.Search(len(ws), func(j int) bool { return ws[j].start > t }) - 1
	for j := k; j >= 0 && maxEnd[j] >= t; j-- {
		if t <= ws[j].end {
			return ws[j].phase
		}
	}
	return phaseUnknown
}

// classifier is the state of one device's classification: the phase
// runs and annotation windows, dropped once every allocation is labelled.
type classifier struct {
	d    *Device
	runs []phaseRun
	// runHint and endHint are the runs runAt found last for allocation
	// starts and for ends: each moves forward with the trace, so the two
	// kinds of query do not chase one hint back and forth.
	runHint, endHint int
	windows          []window
	// windowEnds[j] is the largest end among windows[0..j].
	windowEnds []int64
}

// allocPhase is the phase of an allocation from entry start whose stack
// has phase p: its stack's, unless an annotation window says optimizer or
// the stack says nothing.
func (c *classifier) allocPhase(start int32, p phase) (phase, bool) {
	if len(c.windows) == 0 || start < 0 {
		return p, false
	}
	wp := windowPhase(c.windows, c.windowEnds, c.d.Trace.TimeUS(int(start)))
	if wp != phaseUnknown && (p == phaseUnknown || wp == phaseOptimizer) && p != phaseInit {
		return wp, wp != p
	}
	return p, false
}

// classify labels every allocation with a category and the rule that chose
// it (docs/snapshot.md#classification), and assigns sites. Each pass over
// the allocations goes by blocks (inBlocks). With info set (where the
// diagnosis's source is made after classify, on the same goroutine), its
// first pass, which reads each allocation's stack summary, also makes the
// source's byte of each allocation's stack (Device.info) where the source
// would make them when read (lazyInfo): the steps' scan would otherwise
// make them one by one (source.fillInfo), a call and the summary read
// again per allocation of a file whose every allocation has its stack.
func (d *Device) classify(info bool) {
	c := &classifier{d: d, windows: annotationWindows(d.a.Snap, d.ID)}
	c.windowEnds = make([]int64, len(c.windows))
	for j, w := range c.windows {
		c.windowEnds[j] = w.end
		if j > 0 {
			c.windowEnds[j] = max(w.end, c.windowEnds[j-1])
		}
	}
	t := &d.allocs
	n, na := int32(d.Trace.Len()), t.len()
	// The replay pipeline found the sites, stack phases and workspaces
	// of the allocations before pre (d.pre); this loop finds the rest.
	pre := len(d.pre.site)
	t.site, t.cat, t.rule = slices.Grow(d.pre.site, na-pre)[:na], make([]Category, na), make([]Rule, na)
	// Phase runs over the allocations with a known phase, in trace order.
	phases := slices.Grow(d.pre.phase, na-pre)[:na]
	// workspaces are the allocations of a cuBLAS workspace (few), in
	// order; the stack's summary, read once here, says which.
	workspaces := d.pre.workspaces
	d.pre = preSites{}
	stacks := &d.a.Snap.Stacks
	var infos []stackInfo
	if info && lazyInfo(d.a.Snap.Frames, stacks.Len()) {
		infos = make([]stackInfo, stacks.Len())
		d.info = infos
	}
	// The loops below keep what they change (the runs, the workspaces,
	// the flags) and the columns in locals for each block, written back at
	// its end: a variable a closure changes lives in memory, and a field
	// is loaded again after every store.
	inBlocksOf(na, passBlock, func(blo, bhi int) {
		runs, ws := c.runs, workspaces
		starts, stks, sites, phs := t.start[:na], t.stacks[:na], t.site[:na], phases[:na]
		windowed := len(c.windows) > 0
		for k := blo; k < bhi; k++ {
			stack, start := stks[k], starts[k]
			sp := phs[k]
			if k >= pre {
				sum := stacks.Summary(stack)
				if uint(stack) < uint(len(infos)) {
					// A stack with a phase has frames (the phase is
					// its frames'): its depth is read only without.
					depth := 1
					if summaryPhase(sum) == phaseUnknown {
						depth = stacks.Depth(stack)
					}
					infos[stack] = infoOf(sum, depth)
				}
				// siteOfSummary, its common case inlined: a call per
				// allocation costs more in WebAssembly.
				site, ok := d.a.siteBySum.get(uint64(sum &^ 15))
				if !ok {
					site = d.a.siteOfSummary(sum)
				}
				sites[k] = site
				if summaryWorkspace(sum) {
					ws = append(ws, int32(k))
				}
				sp = summaryPhase(sum)
			}
			if start < 0 {
				phs[k] = sp
				continue
			}
			p := sp
			if windowed {
				p, _ = c.allocPhase(start, sp)
			}
			phs[k] = p
			if p == phaseUnknown || p == phaseInit {
				continue
			}
			if len(runs) == 0 || runs[len(runs)-1].phase != p {
				if len(runs) > 0 {
					runs[len(runs)-1].end = start
				}
				runs = append(doubled(runs), phaseRun{phase: p, start: start, end: n, bwdStart: -1})
			}
			runs[len(runs)-1].last = start
		}
		c.runs, workspaces = runs, ws
	})
	d.phaseRuns = len(c.runs)
	inBlocksOf(na, passBlock, func(blo, bhi int) {
		for k := blo; k < bhi; k++ {
			start := t.start[k]
			if start < 0 || phases[k] != phaseUnknown || d.a.Snap.Stacks.Depth(t.stack(k)) != 0 {
				continue
			}
			if j := c.runAt(start); j >= 0 {
				r := &c.runs[j]
				if r.phase == phaseForward && start > r.last && r.bwdStart < 0 {
					r.bwdStart = start
				}
			}
		}
	})
	// The last pass gives every allocation its rule and category. The
	// rules of the blocks alive before the trace with no phase depend on
	// what all the others showed (stateInTrace, optimizerInTrace); those
	// blocks (PreTraceLive) come last, as matchSegments adds them after
	// the replay, so the flags are complete when the pass reaches them at
	// live: one pass, not one for the flags and one for the labels.
	live := na
	for live > 0 && t.origin(live-1) == PreTraceLive {
		live--
	}
	stateInTrace, optimizerInTrace := false, false
	// The entries with a label (labelled) are few: nextLab is the first at
	// or after entry asked (Trace.LabelledFrom), asked again only past it.
	asked, nextLab := 0, d.Trace.LabelledFrom(0)
	inBlocksOf(na, passBlock, func(blo, bhi int) {
		ws, stateIn, optimizerIn, askedAt, labAt := workspaces, stateInTrace, optimizerInTrace, asked, nextLab
		starts, ends, cats, rls, phs := t.start[:na], t.end[:na], t.cat[:na], t.rule[:na], phases[:na]
		runs := c.runs
		for k := blo; k < bhi; k++ {
			if k == live {
				// Optimizer state recognised by its stack among the blocks
				// alive before the trace also tells the stackless ones apart.
				for _, p := range phs[live:] {
					stateIn = stateIn || p == phaseOptimizer
				}
			}
			start, end := starts[k], ends[k]
			var rule Rule
			// t.origin(k), inlined.
			switch {
			case start >= 0:
				if p := phs[k]; p >= phaseForward && p <= phaseOptimizer {
					// phaseRule, inlined.
					j := c.runHint
					if !(j < len(runs) && runs[j].start <= start && (j+1 == len(runs) || start < runs[j+1].start)) {
						j = c.runAtHint(start, &c.runHint)
					}
					rule = survivalRule(runs, j, end, p)
				} else {
					rule = c.traceRule(start, end, t.stack(k), p)
				}
				switch rule {
				case RuleOptimizerSurvives:
					stateIn, optimizerIn = true, true
				case RuleOptimizerDies:
					optimizerIn = true
				}
			case end < t.n: // PreTraceFreed
				rule = RulePreTraceFreed
				if phs[k] == phaseBackward {
					rule = RulePreTraceFreedInBackward
				}
			default: // PreTraceLive
				switch phs[k] {
				case phaseInit:
					rule = RuleParamInit
				case phaseForward:
					rule = RuleForwardSurvives
				case phaseBackward:
					rule = RuleBackwardSurvives
				case phaseOptimizer:
					rule = RuleOptimizerSurvives
				default:
					switch {
					case stateIn:
						rule = RulePreTraceLiveStateKnown
					case optimizerIn:
						rule = RulePreTraceLiveUnknown
					default:
						rule = RulePreTraceLiveNoOptimizer
					}
				}
			}
			if len(ws) > 0 && ws[0] == int32(k) {
				rule = RuleWorkspace
				ws = ws[1:]
			}
			cat := rules[rule].category
			if s := int(start); s >= 0 && (s >= labAt || s < askedAt) {
				askedAt, labAt = s, d.Trace.LabelledFrom(s)
				if c, r, ok := d.labelled(s); ok && !(c == OptimizerState && rule == RuleOptimizerDies) {
					cat, rule = c, r
				}
			}
			cats[k], rls[k] = cat, rule
		}
		workspaces, stateInTrace, optimizerInTrace = ws, stateIn, optimizerIn
		asked, nextLab = askedAt, labAt
	})
}

// traceRule picks the stack and lifetime rule for an allocation whose alloc
// is in the trace: live from entry start to entry end, with stack stack and
// phase p.
func (c *classifier) traceRule(start, end int32, stack snapshot.StackID, p phase) Rule {
	k := c.runAt(start)
	survives := func() bool {
		if k < 0 {
			return true
		}
		runEnd := c.runs[k].end
		if p == phaseForward && c.runs[k].bwdStart >= 0 {
			runEnd = c.runs[k].bwdStart
		}
		return end >= runEnd
	}
	switch p {
	case phaseInit:
		return RuleParamInit
	case phaseForward:
		if survives() {
			return RuleForwardSurvives
		}
		return RuleForwardDies
	case phaseBackward:
		if survives() {
			return RuleBackwardSurvives
		}
		return RuleBackwardDies
	case phaseOptimizer:
		if survives() {
			return RuleOptimizerSurvives
		}
		return RuleOptimizerDies
	}
	stackless := c.d.a.Snap.Stacks.Depth(stack) == 0
	if stackless && k >= 0 {
		r := &c.runs[k]
		if r.phase == phaseBackward || (r.phase == phaseForward && r.bwdStart >= 0 && start >= r.bwdStart) {
			if end >= r.end {
				return RuleNoStackBackwardSurvives
			}
			return RuleNoStackBackwardDies
		}
	}
	if e := c.runAtHint(end, &c.endHint); e >= 0 {
		r := &c.runs[e]
		if r.phase == phaseBackward && start < r.start && end < r.end {
			return RuleFreedInBackward
		}
		if r.phase == phaseForward && r.bwdStart >= 0 && start < r.bwdStart && end >= r.bwdStart && end < r.end {
			return RuleFreedInBackward
		}
	}
	if stackless {
		return RuleNoStack
	}
	return RuleNoPhase
}

// phaseRule is traceRule for an allocation of phase p, forward, backward
// or optimizer (most allocations). Classify's pass does the same inlined
// (holds, then survivalRule): a call per allocation costs more in
// WebAssembly.
func (c *classifier) phaseRule(start, end int32, p phase) Rule {
	j := c.runHint
	if !c.holds(j, start) {
		j = c.runAtHint(start, &c.runHint)
	}
	return survivalRule(c.runs, j, end, p)
}

// holds reports whether run j exists and holds trace index i (what runAt
// would return for i).
func (c *classifier) holds(j int, i int32) bool {
	return j < len(c.runs) && c.runs[j].start <= i && (j+1 == len(c.runs) || i < c.runs[j+1].start)
}

// survivalRule is the rule of an allocation of phase p (forward, backward
// or optimizer) ending at entry end, made in run j of runs (-1: before
// the first run): p's Survives rule when it ends at or after the run's end
// (for a forward run with backward allocations, where backward began) or
// when there is no run, else p's Dies rule.
func survivalRule(runs []phaseRun, j int, end int32, p phase) Rule {
	rule := RuleForwardSurvives + 2*Rule(p-phaseForward) // Dies is next
	if j >= 0 {
		runEnd := runs[j].end
		if p == phaseForward && runs[j].bwdStart >= 0 {
			runEnd = runs[j].bwdStart
		}
		if end < runEnd {
			rule++
		}
	}
	return rule
}

// runAt returns the index of the phase run holding trace index i, -1 if
// none has started yet.
func (c *classifier) runAt(i int32) int { return c.runAtHint(i, &c.runHint) }

// runAtHint is runAt trying first the run *hint, then the one after it
// (most calls come in trace order), and setting *hint to the run found.
func (c *classifier) runAtHint(i int32, hint *int) int {
	runs := c.runs
	for k := *hint; k < len(runs) && k <= *hint+1; k++ {
		if runs[k].start > i {
			break
		}
		if k+1 == len(runs) || i < runs[k+1].start {
			*hint = k
			return k
		}
	}
	// The last run starting at or before i, by bisection.
	lo, hi := 0, len(runs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if runs[m].start <= i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo > 0 {
		*hint = lo - 1
	}
	return lo - 1
}

// labelled returns an explicit label carried by alloc entry i: a profiler
// `category` or a user_metadata naming a component.
func (d *Device) labelled(i int) (Category, Rule, bool) {
	if x := d.Trace.Extra(i); x != nil && x.Category != "" {
		return profilerCategory(x.Category), RuleProfilerCategory, true
	}
	if m := d.Trace.UserMetadata(i); m != "" {
		if c, ok := metadataCategory(m); ok {
			return c, RuleUserMetadata, true
		}
	}
	return 0, 0, false
}

// profilerCategory maps torch.profiler's memory categories to ours.
func profilerCategory(c string) Category {
	switch strings.ToLower(c) {
	case "parameter":
		return Parameter
	case "gradient":
		return Gradient
	case "optimizer_state":
		return OptimizerState
	case "activation":
		return Activation
	case "temporary":
		return Temporary
	}
	return Other
}

// metadataCategory reads a component name out of user_metadata (plain text
// or compact JSON): the component tracker writes "optimizer" for optimizer
// allocations; users may write the category names themselves.
func metadataCategory(m string) (Category, bool) {
	n := strings.ToLower(m)
	switch {
	case strings.Contains(n, "optimizer"):
		return OptimizerState, true
	case strings.Contains(n, "gradient") || strings.Contains(n, "\"grad\""):
		return Gradient, true
	case strings.Contains(n, "parameter") || strings.Contains(n, "\"param\""):
		return Parameter, true
	case strings.Contains(n, "activation"):
		return Activation, true
	case strings.Contains(n, "temporary") || strings.Contains(n, "\"temp\""):
		return Temporary, true
	}
	return 0, false
}

func compareInt64(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// blockSize is the number of allocations or entries of a block (inBlocks).
const blockSize = 1 << 14

// inBlocks calls f(lo, hi) for the consecutive blocks [lo, hi) of [0, n),
// blockSize long. A long pass written as one loop would run, in
// WebAssembly, in the baseline code its function started in to its end:
// V8 compiles a function with its optimizing tier once it has run a while
// and uses that code from its next call on, never inside a running call
// (passes over the allocations of a 200 MiB file ran 3× slower). Passes
// that go by blocks run optimized from their first blocks on. It is not
// inlined: f would be, and its blocks would be one loop again.
//
//go:noinline
func inBlocks(n int, f func(lo, hi int)) {
	for lo := 0; lo < n; lo += blockSize {
		f(lo, min(lo+blockSize, n))
	}
}

// inBlocksOf is inBlocks in blocks of size.
//
//go:noinline
func inBlocksOf(n, size int, f func(lo, hi int)) {
	for lo := 0; lo < n; lo += size {
		f(lo, min(lo+size, n))
	}
}

// passBlock is the block of the passes that carry what they change from
// one block to the next in locals (classify's, liveAt): blockSize, which
// tests make small, so that the carrying is tested on small files.
var passBlock = blockSize

// smallBlockSize is the block of inSmallBlocks.
const smallBlockSize = 1 << 11

// inSmallBlocks is inBlocks for passes over tens of thousands of items
// (a trace's step intervals, the survivors), in blocks of smallBlockSize:
// enough blocks for their later ones to run optimized.
//
//go:noinline
func inSmallBlocks(n int, f func(lo, hi int)) {
	for lo := 0; lo < n; lo += smallBlockSize {
		f(lo, min(lo+smallBlockSize, n))
	}
}
