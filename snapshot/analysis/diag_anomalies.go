package analysis

import (
	"math/bits"
	"slices"
	"sort"

	"oomscope/snapshot"
)

// Anomalies are allocations that hold memory for reasons other than the
// training step: frees waiting on other streams, and large allocations
// that outlive the steps they were made in without being model state or a
// leak.
type Anomalies struct {
	// PendingFrees are blocks whose free_requested never reached
	// free_completed: memory held by pending work on other streams (a
	// missing synchronize, or record_stream), grouped by site.
	PendingFrees []AnomalySite `json:"pending_frees"`
	// LongLived are large allocations (≥ max(1 MiB, 0.5 % of the peak))
	// made in one step and still alive after the next one ended, that are
	// neither parameters, gradients, optimizer state, workspaces nor a
	// leak's blocks, grouped by site.
	LongLived []AnomalySite `json:"long_lived"`
	// Rule states both rules.
	Rule Text `json:"rule"`
}

// AnomalySite is one site's anomalous blocks.
type AnomalySite struct {
	Site      string `json:"site"`
	SiteIndex int32  `json:"site_index"`
	// Bytes and Blocks sum the blocks; FirstEntry is the earliest alloc
	// (or free_requested, for pending frees) among them.
	Bytes      int64 `json:"bytes"`
	Blocks     int   `json:"blocks"`
	FirstEntry int   `json:"first_entry"`
	// Stack is the stack of the largest block.
	Stack []string `json:"stack"`
	// Why says what was found, with the numbers.
	Why Text `json:"why"`
}

// AnomalyRule explains the anomalies.
var AnomalyRule = textf("pending frees: free_requested with no free_completed by the end of the trace (the segments show them as "+
	"active_pending_free), memory another stream still uses; long-lived: allocations of at least max(%s, 0.5 %% of the "+
	"peak) made in a step and alive after the next step ended, that no category rule explains as model state or a "+
	"workspace and that are not a leak's blocks", sz(1<<20))

// ByteTime weighs the allocation stacks by bytes × lifetime: a flame graph
// (icicle) of what holds memory longest. Nodes are in pre-order; a node's
// Weight includes its children's.
type ByteTime struct {
	// Unit is "byte_seconds" when the trace has times (each lifetime read
	// from a clock sampled at most 4,096 times, see clock), else
	// "byte_entries" (lifetime counted in trace entries).
	Unit string `json:"unit"`
	// Total is the weight of every allocation.
	Total float64 `json:"total"`
	// Nodes are the frames, outermost first; the root is "all".
	Nodes []FlameNode `json:"nodes"`
}

// FlameNode is one frame of the byte-time tree.
type FlameNode struct {
	Name   string  `json:"name"`
	Parent int     `json:"parent"` // -1 for the root
	Depth  int     `json:"depth"`
	Weight float64 `json:"weight"`
}

// Bounds of the byte-time tree: the heaviest stacks, nodes of at least
// minShare of the total, at most maxNodes nodes and maxDepth levels.
const (
	flameStacks   = 120
	flameMinShare = 0.005
	flameMaxNodes = 400
	flameMaxDepth = 48
)

// anomalyCollector gathers the anomalies during the pass over the
// allocations.
type anomalyCollector struct {
	src     source
	n       int
	steps   []Step
	big     int64 // long-lived threshold
	pending map[int32]*anomalyAcc
	long    map[int32]*anomalyAcc
}

type anomalyAcc struct {
	bytes   int64
	blocks  int
	first   int
	largest int64
	stack   snapshot.StackID
}

func newAnomalyCollector(src source, steps []Step, peak int64) *anomalyCollector {
	return &anomalyCollector{src: src, n: src.entries(), steps: steps, big: max(1<<20, peak/200),
		pending: map[int32]*anomalyAcc{}, long: map[int32]*anomalyAcc{}}
}

// byteTimer weighs the allocation stacks by bytes × lifetime, in one pass
// over the allocations of its own, before the steps are cut: its weights
// are gone before the diagnosis's other passes hold theirs.
type byteTimer struct {
	src source
	n   int
	// clock tells entries' times (no samples: lifetimes count entries).
	clock clock
	// stacks holds the allocations' stacks by id+1 (0: NoStack, for
	// allocations without a stack), and weight the byte-time of each
	// member, by its rank in stacks.
	stacks rankSet
	weight []float64
}

// byteTime weighs every allocation's stack and returns the byte-time tree.
func byteTime(src source) *ByteTime {
	c := newByteTimer(src)
	inBlocks(src.numAllocs(), c.weighAll)
	return c.flame()
}

// newByteTimer returns the byte timer of src's allocations, their weights
// at zero.
func newByteTimer(src source) *byteTimer {
	c := &byteTimer{src: src, n: src.entries(), clock: traceClock(src), stacks: newRankSet(src.numStacks() + 1)}
	_, _, _, ids, _ := src.allocColumns()
	inBlocks(src.numAllocs(), func(blo, bhi int) {
		// c.stacks.add, written out with the set in locals.
		members, n := c.stacks.bits, c.stacks.n
		for _, id := range ids[blo:bhi] {
			if i := int(id) + 1; uint(i) < uint(n) {
				members[i>>6] |= 1 << (i & 63)
			}
		}
	})
	c.weight = make([]float64, c.stacks.seal())
	faultIn(c.weight, 8)
	return c
}

// stackWeight is a stack's byte-time weight.
type stackWeight struct {
	id snapshot.StackID
	w  float64
}

// heavier orders stacks heaviest first, then by ID: a total order, so the
// flameStacks heaviest are the same whichever way they are picked.
func (x stackWeight) heavier(y stackWeight) bool { return x.w > y.w || x.w == y.w && x.id < y.id }

// heaviest returns the flameStacks heaviest stacks (in no order) and the
// sum of all weights, added in stack order. They are picked with a
// min-heap of the heaviest so far (the lightest kept at its root), not by
// sorting every stack: a file of distinct stacks has millions. The members
// go by blocks of words (pickHeaviest): a long loop in one call would run
// in WebAssembly's baseline code to its end (see inBlocks).
func (c *byteTimer) heaviest() ([]stackWeight, float64) {
	h := &heaviestHeap{top: make([]stackWeight, 0, flameStacks)}
	r := 0 // the rank of the first member of the block
	for lo, n := 0, len(c.stacks.bits); lo < n; lo += heaviestWords {
		r = c.pickHeaviest(h, lo, min(lo+heaviestWords, n), r)
	}
	return h.top, h.total
}

// heaviestWords is the number of words of the stack set per block of
// heaviest (16 Ki possible stacks).
const heaviestWords = 256

// heaviestHeap is heaviest's min-heap and sum.
type heaviestHeap struct {
	top   []stackWeight
	total float64
}

// pickHeaviest adds the members of the stack set's words lo to hi-1, the
// first of rank r, to h, and returns the rank after them.
//
//go:noinline
func (c *byteTimer) pickHeaviest(h *heaviestHeap, lo, hi, r int) int {
	words, weight := c.stacks.bits, c.weight
	for wi := lo; wi < hi; wi++ {
		for b := words[wi]; b != 0; b &= b - 1 {
			w := weight[r]
			r++
			if w <= 0 {
				continue
			}
			h.total += w
			x := stackWeight{snapshot.StackID(wi<<6 + bits.TrailingZeros64(b) - 1), w}
			switch top := h.top; {
			case len(top) < flameStacks:
				top = append(top, x)
				for j := len(top) - 1; j > 0; {
					p := (j - 1) / 2
					if !top[p].heavier(top[j]) {
						break
					}
					top[p], top[j] = top[j], top[p]
					j = p
				}
				h.top = top
			case x.heavier(top[0]):
				top[0] = x
				for i := 0; ; {
					l := 2*i + 1
					if l >= len(top) {
						break
					}
					if rc := l + 1; rc < len(top) && top[l].heavier(top[rc]) {
						l = rc
					}
					if !top[i].heavier(top[l]) {
						break
					}
					top[i], top[l] = top[l], top[i]
					i = l
				}
			}
		}
	}
	return r
}

// weighAll adds allocations lo to hi-1's bytes × lifetime to their
// stacks' weights, in a loop without a call per allocation (a call costs
// more than its work in WebAssembly). The clock's and the stack set's
// fields are held in locals (clock.at and rankSet.rank written out, the
// same arithmetic): loaded through c, they would be loaded again after
// each weight's store.
func (c *byteTimer) weighAll(lo, hi int) {
	s, shift, mask, inv := c.clock.s, c.clock.shift, c.clock.mask, c.clock.inv
	members, before, nst := c.stacks.bits, c.stacks.before, c.stacks.n
	weight := c.weight
	starts, ends, _, ids, sizes := c.src.allocColumns()
	on, n := c.clock.on(), c.n
	last := n - 1
	if n == 0 {
		return // every life is 0
	}
	for k := lo; k < hi; k++ {
		a, b := max(int(starts[k]), 0), min(int(ends[k]), last)
		var life float64
		if on {
			// clock.at(b) - clock.at(a)
			kb, ka := b>>shift, a>>shift
			lb, la := s[kb], s[ka]
			life = (lb + float64(b&mask)*inv*(s[kb+1]-lb)) - (la + float64(a&mask)*inv*(s[ka+1]-la))
		} else {
			life = float64(b - a)
		}
		if !(life > 0) {
			continue
		}
		// r := stacks.rank(i)
		i := int(ids[k]) + 1
		if uint(i) >= uint(nst) {
			continue
		}
		w, bit := members[i>>6], uint(i&63)
		if w&(1<<bit) == 0 {
			continue
		}
		r := int(before[i>>6]) + bits.OnesCount64(w&(1<<bit-1))
		weight[r] += float64(sizes[k]) * life
	}
}

// candidate reports whether an allocation may be an anomaly (add must see
// it): a pending free, or a large block.
func (c *anomalyCollector) candidate(end, freeReq int32, size int64) bool {
	return freeReq >= 0 && int(end) >= c.n || size >= c.big
}

// add takes a candidate allocation with its live range l.
func (c *anomalyCollector) add(l *liveRange) {
	if l.freeReq >= 0 && int(l.end) >= c.n {
		accumulate(c.pending, l, int(l.freeReq))
	}
	if l.size >= c.big && l.origin == FromTrace && !explainedByStep(l) {
		if s := stepOf(c.steps, int(l.start)); s >= 0 && s+1 < len(c.steps) && int(l.end) > c.steps[s+1].LastEntry {
			accumulate(c.long, l, int(l.start))
		}
	}
}

// explainedByStep reports whether a category rule accounts for a
// long-lived allocation: model state or a workspace.
func explainedByStep(l *liveRange) bool {
	switch l.cat {
	case Parameter, Gradient, OptimizerState:
		return true
	}
	return l.rule == RuleWorkspace
}

func accumulate(m map[int32]*anomalyAcc, l *liveRange, at int) {
	a, ok := m[l.site]
	if !ok {
		a = &anomalyAcc{first: at, stack: l.stack}
		m[l.site] = a
	}
	a.bytes += l.size
	a.blocks++
	a.first = min(a.first, at)
	if l.size > a.largest {
		a.largest, a.stack = l.size, l.stack
	}
}

// stepOf returns the step holding entry i, -1 for none.
func stepOf(steps []Step, i int) int {
	k := sort.Search(len(steps), func(j int) bool { return steps[j].FirstEntry > i }) - 1
	if k < 0 || i > steps[k].LastEntry {
		return -1
	}
	return k
}

// result turns the collected numbers into the anomalies (leak sites left
// out of the long-lived ones).
func (c *anomalyCollector) result(leakSites map[int32]bool) Anomalies {
	an := Anomalies{PendingFrees: c.sites(c.pending, nil, func(a *anomalyAcc) Text {
		return textf("%d block(s) holding %s were freed by the program (free_requested from entry %d on) but never returned to the cache: another stream still uses them", a.blocks, sz(a.bytes), a.first)
	}), LongLived: c.sites(c.long, leakSites, func(a *anomalyAcc) Text {
		return textf("%d block(s) holding %s, made in a step (first at entry %d), outlive the next step and are not model state", a.blocks, sz(a.bytes), a.first)
	}), Rule: AnomalyRule}
	return an
}

func (c *anomalyCollector) sites(m map[int32]*anomalyAcc, skip map[int32]bool, why func(*anomalyAcc) Text) []AnomalySite {
	var ids []int32
	for si := range m {
		if !skip[si] {
			ids = append(ids, si)
		}
	}
	slices.SortFunc(ids, func(x, y int32) int {
		if m[x].bytes != m[y].bytes {
			return compareInt64(m[y].bytes, m[x].bytes)
		}
		return compareInt64(int64(x), int64(y))
	})
	if len(ids) > 10 {
		ids = ids[:10]
	}
	out := make([]AnomalySite, 0, len(ids))
	for _, si := range ids {
		a := m[si]
		out = append(out, AnomalySite{Site: c.src.site(si).Label, SiteIndex: si, Bytes: a.bytes, Blocks: a.blocks, FirstEntry: a.first,
			Stack: c.src.displayStack(a.stack), Why: why(a)})
	}
	return out
}

// flame builds the byte-time tree from the heaviest stacks: a trie of
// their frames, outermost first, with the unwinder, allocator and
// interpreter frames left out as in displayed stacks; only the nodes kept
// are formatted.
func (c *byteTimer) flame() *ByteTime {
	bt := &ByteTime{Unit: "byte_entries", Nodes: []FlameNode{}}
	if c.clock.on() {
		bt.Unit = "byte_seconds"
	}
	top, total := c.heaviest()
	bt.Total = total
	if bt.Total == 0 {
		return bt
	}
	slices.SortFunc(top, func(x, y stackWeight) int {
		switch {
		case x.heavier(y):
			return -1
		case y.heavier(x):
			return 1
		}
		return 0
	})
	// shown caches, per frame, whether displayed stacks keep it.
	shown := make([]int8, c.src.numFrames())
	keep := func(fid snapshot.FrameID) bool {
		if int(fid) < 0 || int(fid) >= len(shown) {
			return false
		}
		if shown[fid] == 0 {
			f := c.src.frame(fid)
			shown[fid] = -1
			if !isNoise(f) && !isPlumbing(f) {
				shown[fid] = 1
			}
		}
		return shown[fid] > 0
	}
	// The trie: node 0 is the root; frame -1 is "no stack recorded".
	type node struct {
		frame    snapshot.FrameID
		w        float64
		children []int32
	}
	nodes := []node{{frame: -2, w: bt.Total}}
	child := map[[2]int32]int32{}
	descend := func(cur int32, fid snapshot.FrameID, w float64) int32 {
		key := [2]int32{cur, int32(fid)}
		j, ok := child[key]
		if !ok {
			j = int32(len(nodes))
			nodes = append(nodes, node{frame: fid})
			child[key] = j
			nodes[cur].children = append(nodes[cur].children, j)
		}
		nodes[j].w += w
		return j
	}
	for _, s := range top {
		st := c.src.stackFrames(s.id)
		cur, depth := int32(0), 0
		prev := snapshot.FrameID(-3)
		for d := len(st) - 1; d >= 0 && depth < flameMaxDepth; d-- {
			if fid := st[d]; fid != prev && keep(fid) {
				cur, prev = descend(cur, fid, s.w), fid
				depth++
			}
		}
		if depth == 0 {
			descend(0, -1, s.w)
		}
	}
	// Pre-order, heaviest child first, pruned.
	var walk func(i int32, parent, depth int)
	walk = func(i int32, parent, depth int) {
		if len(bt.Nodes) >= flameMaxNodes || nodes[i].w < flameMinShare*bt.Total {
			return
		}
		name := "all"
		switch f := nodes[i].frame; {
		case f == -1:
			name = noSite.Label
		case f >= 0:
			name = FormatFrame(c.src.frame(f))
		}
		me := len(bt.Nodes)
		bt.Nodes = append(bt.Nodes, FlameNode{Name: name, Parent: parent, Depth: depth, Weight: nodes[i].w})
		kids := nodes[i].children
		slices.SortStableFunc(kids, func(x, y int32) int {
			switch {
			case nodes[x].w > nodes[y].w:
				return -1
			case nodes[x].w < nodes[y].w:
				return 1
			}
			return 0
		})
		for _, k := range kids {
			walk(k, me, depth+1)
		}
	}
	walk(0, -1, 0)
	return bt
}
