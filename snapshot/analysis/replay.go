package analysis

import (
	"fmt"
	"slices"

	"oomscope/bytesize"
	"oomscope/snapshot"
)

// Device is the replay of one device's trace against its segments.
type Device struct {
	// ID is the device ordinal.
	ID int
	// Trace is the device's trace, oldest entry first (read it by index:
	// Trace.Kind(i), Addr(i), Size(i), TimeUS(i), Frames(i), Entry(i)).
	Trace snapshot.Trace
	// Actions counts trace entries per action.
	Actions map[string]int
	// Warnings lists inconsistencies between the trace and the segments.
	Warnings []string

	a        *Analysis
	segments []int // indices of this device's segments in Snap.Segments
	// allocs holds every allocation's live range (NumAllocs, Allocation).
	allocs allocTable

	initialAllocated int64 // live requested bytes before the first entry
	preTrace         int   // allocations alive before the first entry
	peakRel          int64 // peak allocated minus initialAllocated
	peakIndex        int
	endRel           int64 // allocated after the last entry minus initialAllocated

	finalAllocated, finalPending, finalReserved int64
	initialReserved, resPeakRel                 int64
	resPeakIndex                                int

	badSizes  int     // negative or impossible sizes met by the replay
	segEvents []int32 // indices of segment_* entries
	ooms      []int32 // indices of oom entries
	buckets   buckets
	// timeline is the downsampled timeline (Timeline), made from buckets
	// once the replay is done.
	timeline []Point

	// traceStreams are the distinct streams of the trace's entries
	// (Trace.Streams); mapped: some entry is a segment_map or
	// segment_unmap (expandable segments).
	traceStreams []uint64
	mapped       bool

	initSegs *segSet // reserved ranges before the first entry, built lazily

	// early is the part of the diagnosis made beside classify (nil:
	// none, where there is one core).
	early *earlyDiag
	// scan is the steps' scan of the entries begun by the replay
	// pipeline (nil: none; see earlyScan), which startEarly takes.
	scan *earlyScan
	// pre is what the replay pipeline found ahead of classify.
	pre preSites
	// phaseRuns is the number of classify's phase runs (0: not classified
	// yet), a capacity hint for the steps' scan (stepper.scan).
	phaseRuns int
	// info is, where classify made them (classify's info), the
	// diagnosis's stack bytes (source.info) of the allocations' stacks,
	// 0 for the other stacks, until a source takes them (newSourceFree).
	info []stackInfo
}

// buckets fold the states after entries from … from+count-1 into
// len(b) slices for a downsampled timeline.
type buckets struct {
	b     []bucket
	from  int
	count int
	// first and last are the first and last states recorded, always drawn.
	first, last sample
	seen        bool
}

// sample is one state of a bucket.
type sample struct {
	i    int32
	a, r int64
}

func newBuckets(points, from, count int) buckets {
	if points <= 0 || count <= 0 {
		return buckets{}
	}
	return buckets{b: make([]bucket, max(1, min((points-2)/3, count))), from: from, count: count}
}

// bucket keeps the extreme states of one slice of the trace for the
// downsampled timeline.
type bucket struct {
	used               bool
	minI, maxI, resI   int32
	minA, maxA, resA   int64
	minAR, maxAR, resR int64
}

// freeMode says which action ends an allocation's live range.
type freeMode uint8

const (
	freeOnCompleted freeMode = iota // the normal case
	freeOnRequested                 // no free_completed recorded (skip_actions)
)

// replay replays device dev, whose segments are segs (indices in
// Snap.Segments). Its allocations are not classified yet (classify), nor
// their ends split (allocTable.splitEnds, which classify and the early
// diagnosis need, the headline and the timeline not: AnalyzeSummary calls
// it after the summary where it can).
func (a *Analysis) replay(dev int, segs []int) *Device {
	s := a.Snap
	d := &Device{ID: dev, a: a, Actions: map[string]int{}, peakIndex: -1, resPeakIndex: -1, segments: segs}
	if dev >= 0 && dev < len(s.DeviceTraces) {
		d.Trace = s.DeviceTraces[dev]
	}
	tr := d.Trace
	n := tr.Len()
	r := &replayer{d: d, tr: tr, n: n, maxSize: a.maxSize, reqBefore: -2}
	// Kinds counted by chunk (see replayer).
	var kinds [snapshot.KindOther + 1]int
	for base := 0; base < n; {
		ch := tr.Chunk(base)
		countKinds(&kinds, ch.Actions)
		base += len(ch.Actions)
	}
	nAlloc, nComp, nReq := kinds[snapshot.KindAlloc], kinds[snapshot.KindFreeCompleted], kinds[snapshot.KindFreeRequested]
	nFree := 0 // torch 1.x "free" entries
	if kinds[snapshot.KindOther] > 0 {
		for i := range n {
			if r.isFreeName(i) {
				nFree++
			}
		}
	}
	nComp += nFree
	// Every alloc entry makes one allocation; unmatched frees and live
	// blocks add a few more.
	d.allocs = newAllocTable(a, tr, nAlloc+nAlloc/16+64)
	r.mode = freeOnCompleted
	if nComp == 0 && nReq > d.pendingBlocks() {
		r.mode = freeOnRequested
		d.warn("the trace has free_requested but no free_completed entries (skip_actions?): allocations end at free_requested")
	}

	d.buckets = newBuckets(a.opt.TimelinePoints, -1, n+1)
	r.open = newUintMap[openAlloc]()
	r.overAt = -1
	d.buckets.record(-1, 0, 0)
	r.peakRel, r.peakIndex, r.resPeakRel, r.resPeakIndex = d.peakRel, d.peakIndex, d.resPeakRel, d.resPeakIndex
	if concurrent() && n >= pipelineMin {
		// The action counts the scan reads are known: the replay's mode
		// is source.endsOnRequested's answer, nFree legacyFree's.
		r.scan = &earlyScan{d: d, onRequested: r.mode == freeOnRequested, legacyFree: nFree > 0}
		r.pre.site = make([]int32, 0, cap(d.allocs.start))
		r.pre.phase = make([]phase, 0, cap(d.allocs.start))
		r.pipeline()
		d.pre, d.scan = r.pre, r.scan
	} else {
		// chunk counts no kind but KindOther's actions.
		copy(r.counts[:], kinds[:snapshot.KindOther])
		for base := 0; base < n; {
			ch := tr.Chunk(base)
			r.chunk(base, ch)
			base += len(ch.Actions)
		}
	}
	d.traceStreams = tr.Streams()
	bs := &d.buckets
	cur, res, counts, open, over, overAt, doubleAlloc := r.cur, r.res, r.counts, r.open, r.over, r.overAt, r.doubleAlloc
	if n > 0 && len(bs.b) > 0 {
		bs.last = sample{int32(n - 1), cur, res}
	}
	d.peakRel, d.peakIndex, d.resPeakRel, d.resPeakIndex = r.peakRel, r.peakIndex, r.resPeakRel, r.resPeakIndex
	for k, c := range counts {
		if c > 0 {
			d.Actions[string(snapshot.ActionKind(k).Action())] = c
		}
	}
	d.endRel = cur
	if doubleAlloc > 0 {
		d.warn(fmt.Sprintf("%d alloc entries reused an address that was never freed; the earlier allocation was ended there", doubleAlloc))
	}
	d.matchSegments(open)
	d.finalReserved = 0
	for _, si := range d.segments {
		d.finalReserved += d.count(s.Segments[si].TotalSize)
	}
	if d.badSizes > 0 {
		d.warn(fmt.Sprintf("%d sizes in the trace and the segments are negative or impossible (over %s); they count as 0 B",
			d.badSizes, bytesize.FormatGiB(d.a.maxSize)))
	}
	d.initialReserved = d.finalReserved - res
	if d.initialReserved < 0 {
		d.warn(fmt.Sprintf("segment events add up to more than the final reserved memory (%d B); the trace and segments disagree", res))
	}
	if ex := d.initialAllocated + over - d.initialReserved; ex > 0 && (overAt >= 0 || d.initialAllocated > d.initialReserved) {
		d.warn(fmt.Sprintf("allocated memory exceeds reserved memory by up to %s (%s): the trace and the segments disagree; "+
			"free memory counts as 0 then", bytesize.FormatGiB(ex), When(overAt, 0, 0, n)))
	}
	// The timeline needs the replay alone: made here, once, it goes with
	// the summary (AnalyzeSummary) and into every report.
	if a.opt.TimelinePoints > 0 {
		d.timeline = d.points(d.buckets, d.initialAllocated, d.initialReserved)
	}
	return d
}

// replayer is the replay's state between chunks of the trace. The loop
// over the entries is a method called once per chunk (16 Ki entries), not
// one loop over the whole trace: a WebAssembly engine compiles a function
// with its optimizing tier once it has run a while, and uses that code
// from the function's next call on, never inside a call already running
// (V8: the replay of a 200 MiB file ran 3× slower in its baseline code).
type replayer struct {
	d    *Device
	tr   snapshot.Trace
	n    int
	mode freeMode
	open *uintMap[openAlloc]
	// counts counts the entries per kind (KindOther in d.Actions): chunk
	// takes them from replay's countKinds, replayRest counts them.
	counts   [snapshot.KindOther]int
	cur, res int64
	// over is the most allocated exceeded reserved (relative to the
	// starting state), overAt where.
	over                    int64
	overAt                  int
	doubleAlloc             int
	peakRel, resPeakRel     int64
	peakIndex, resPeakIndex int
	maxSize                 int64
	// The timeline's bucket of the current entry (see buckets.record,
	// inlined): bk, until entry bEnd.
	bk   *bucket
	bEnd int
	// reqBefore is the last free_requested whose free_completed follows it
	// (its allocation is found there).
	reqBefore int
	// pre is the pipeline's head start on classify (replayer.presite).
	pre preSites
	// scan is the steps' scan the pipeline does while it waits for the
	// matcher (nil: none).
	scan *earlyScan
	// delta and segRes are chunk's buffers (see allocsOf).
	delta, segRes []int64
	// addrs holds the addresses of the chunk that chunk (or the
	// pipeline's match) replays, decoded once (snapshot.Values.Plain):
	// touch and the look-ups read each. In the pipeline only its matcher
	// (match) uses it.
	addrs []uint64
}

// countKinds adds the entries of each kind among actions to kinds
// (KindOther for every other action). It is not inlined: the replay calls
// it per chunk (see replayer). It counts into four tables by action code,
// an entry in each in turn: in WebAssembly a count is a load and a store
// in memory, and an entry's count waited for the store of the last entry
// of its kind, most often the entry before (distinct 1 GiB file, 8 M
// entries: 20 ms with one table, in Node).
//
//go:noinline
func countKinds(kinds *[snapshot.KindOther + 1]int, actions []uint8) {
	var c [4][256]int32 // a chunk has at most 2^31 entries
	j := 0
	for ; j+4 <= len(actions); j += 4 {
		a := actions[j : j+4 : j+4]
		c[0][a[0]]++
		c[1][a[1]]++
		c[2][a[2]]++
		c[3][a[3]]++
	}
	for _, a := range actions[j:] {
		c[0][a]++
	}
	for code := range 256 {
		if n := c[0][code] + c[1][code] + c[2][code] + c[3][code]; n > 0 {
			kinds[min(snapshot.ActionKind(code), snapshot.KindOther)] += int(n)
		}
	}
}

// isFreeName reports whether entry i is a "free", an action of some old
// files: a free_completed.
func (r *replayer) isFreeName(i int) bool {
	return r.tr.Kind(i) == snapshot.KindOther && r.tr.Action(i) == "free"
}

// touchRun is how many entries' slots of the open allocations the replay
// reads ahead (uintMap.touch): the 1 GiB distinct-stacks file's replay
// loop ran as fast with 16, 32 or 64.
const touchRun = 32

// chunk replays entries base, base+1, … of chunk ch in two loops: what
// the entries do to the allocations (allocsOf), then what that makes of
// the allocated and reserved memory after each entry (track). Each loop
// holds fewer variables than one loop doing both would, and track's makes
// no call: in WebAssembly a loop's variables that do not fit the
// registers, or live across a call, are kept in memory.
func (r *replayer) chunk(base int, ch snapshot.Chunk) {
	if cap(r.delta) < len(ch.Actions) {
		r.delta = make([]int64, len(ch.Actions))
	}
	delta := r.delta[:len(ch.Actions)]
	segFrom := len(r.d.segEvents)
	r.segRes = r.segRes[:0]
	r.allocsOf(base, ch, delta)
	r.track(base, delta, r.d.segEvents[segFrom:], r.segRes)
}

// allocsOf replays what entries base, base+1, … of chunk ch do to the
// allocations and sets delta[j] to what entry base+j adds to the allocated
// bytes (cur); a segment event's change to the reserved bytes is appended
// to r.segRes as the event is to d.segEvents. The entries' kinds are
// counted already (r.counts, from replay's countKinds) but for the
// actions torch did not write when this was written (d.Actions).
//
// It goes by runs of touchRun entries: the run's slots of the open
// allocations read ahead (uintMap.touch), then allocsRun, a loop without
// a call, over the entries of the common cases, and entry for each of the
// others. In WebAssembly a call costs its caller the store and reload of
// every variable it holds (Go keeps them in memory across calls, where a
// goroutine may switch), and one loop holding both the common and the
// rare cases kept its variables in memory around their calls at every
// entry.
func (r *replayer) allocsOf(base int, ch snapshot.Chunk, delta []int64) {
	addrs := ch.Addrs.Plain(&r.addrs)
	delta = delta[:len(ch.Actions)]
	fast := r.mode == freeOnCompleted
	for j0 := 0; j0 < len(ch.Actions); j0 += touchRun {
		j1 := min(j0+touchRun, len(ch.Actions))
		r.open.touch(addrs[j0:j1])
		for j := j0; j < j1; j++ {
			if fast {
				r.reserve(j1 - j)
				if j = r.allocsRun(base, j, j1, &ch, addrs, delta); j == j1 {
					break
				}
			}
			r.entry(base, j, &ch, addrs, delta)
		}
	}
}

// reserve makes room for m more open allocations in r.open and m more
// allocations in the table's columns, which allocsRun fills without a
// call (it neither grows the map nor appends).
func (r *replayer) reserve(m int) {
	if open := r.open; 2*(open.n+m) > len(open.slots) {
		for 2*(open.n+m) > len(open.slots) {
			open.grow()
		}
	}
	t := &r.d.allocs
	if l := len(t.start); cap(t.start)-l < m || cap(t.end)-l < m || cap(t.freeReq)-l < m || cap(t.stacks)-l < m || cap(t.sizeCol)-l < m {
		// Room for this run and, amortized, many more (append's growth).
		g := max(m, l/4)
		t.start, t.end, t.freeReq = slices.Grow(t.start, g), slices.Grow(t.end, g), slices.Grow(t.freeReq, g)
		t.stacks, t.sizeCol = slices.Grow(t.stacks, g), slices.Grow(t.sizeCol, g)
	}
}

// allocsRun is allocsOf for entries base+j0 … base+j1-1 (mode
// freeOnCompleted, room made by reserve) as long as they are of the common
// cases, which it does without a call; it returns the first entry it
// left, j1 when none: an alloc of a sane size at an address not open, a
// free_completed of an open allocation whose size is below bigOpen, a
// free_requested not at the chunk's end, at a non-zero address. Where
// it stops, it has changed nothing for that entry: entry does it.
func (r *replayer) allocsRun(base, j0, j1 int, ch *snapshot.Chunk, addrs []uint64, delta []int64) int {
	open, t := r.open, &r.d.allocs
	slots, shift, nOpen := open.slots, open.shift, open.n
	mask := len(slots) - 1
	if mask < 0 {
		return j0
	}
	k := len(t.start)
	// One length for the five columns (room) and one for the chunk's
	// slices (m): a test of k (j) against it stands for the bounds checks
	// of every store at k (load at j), and the loop holds two lengths, not
	// nine (in WebAssembly the values beyond 16 live in memory).
	room := min(cap(t.start), cap(t.end), cap(t.freeReq), cap(t.stacks), cap(t.sizeCol))
	start, end, freeReq, stacks, sizes := t.start[:room], t.end[:room], t.freeReq[:room], t.stacks[:room], t.sizeCol[:room]
	m := min(len(ch.Actions), len(ch.Stacks), len(addrs), len(delta))
	actions, stacksIn := ch.Actions[:m], ch.Stacks[:m]
	addrs, delta = addrs[:m], delta[:m]
	maxSize, reqBefore, n := r.maxSize, r.reqBefore, int32(r.n)
	j := max(j0, 0)
	j1 = min(j1, m)
loop:
	for ; j < j1; j++ {
		i, addr := base+j, addrs[j]
		if addr == 0 {
			break
		}
		h := int((addr*fibonacci)>>shift) & mask // uintMap.home (the mask for prove)
		var dc int64
		switch actions[j] {
		case uint8(snapshot.KindAlloc):
			size := ch.Sizes.At(j)
			if size < 0 || size > maxSize || k >= room {
				break loop
			}
			// Each probe tests the home slot before its loop: in
			// WebAssembly entering and leaving a loop are jumps through
			// the function's dispatch, which most look-ups (the key or
			// an empty slot at home) skip. Where the slot's store is
			// written in both branches (here and the removal's end),
			// the common branch runs on into what follows, where one
			// store after both jumped (Go lays the loop out next):
			// 4 % and 2 % fewer instructions (cachegrind of Node).
			if slots[h].key == 0 {
				slots[h] = uintSlot[openAlloc]{addr, opened(int32(k), size)}
			} else {
				for {
					if slots[h].key == addr {
						break loop // an alloc at an open address
					}
					if h = (h + 1) & mask; slots[h].key == 0 {
						break
					}
				}
				slots[h] = uintSlot[openAlloc]{addr, opened(int32(k), size)}
			}
			nOpen++
			start[k], end[k], freeReq[k], stacks[k], sizes[k] = int32(i), n, -1, stacksIn[j], size
			k++
			dc = size
		case uint8(snapshot.KindFreeCompleted):
			if slots[h].key != addr {
				for {
					if slots[h].key == 0 {
						break loop // a free of an allocation before the trace
					}
					if h = (h + 1) & mask; slots[h].key == addr {
						break
					}
				}
			}
			o := slots[h].v
			if o.size == bigOpen {
				break loop
			}
			// uintMap.take's removal.
			if g := (h + 1) & mask; slots[g].key == 0 {
				slots[h] = uintSlot[openAlloc]{}
			} else {
				for ; slots[g].key != 0; g = (g + 1) & mask {
					if hg := int((slots[g].key * fibonacci) >> shift); (g-hg)&mask >= (g-h)&mask {
						slots[h] = slots[g]
						h = g
					}
				}
				slots[h] = uintSlot[openAlloc]{}
			}
			nOpen--
			e := int32(i)
			if reqBefore == i-1 {
				e = ^e
			}
			end[o.k] = e
			dc = -int64(o.size)
		case uint8(snapshot.KindFreeRequested):
			if j+1 >= m {
				break loop
			}
			if actions[j+1] == uint8(snapshot.KindFreeCompleted) && addrs[j+1] == addr {
				reqBefore = i
				break
			}
			for ; slots[h].key != 0; h = (h + 1) & mask {
				if slots[h].key == addr {
					freeReq[slots[h].v.k] = int32(i)
					break
				}
			}
		default:
			break loop
		}
		delta[j] = dc
	}
	open.n = nOpen
	t.start, t.end, t.freeReq, t.stacks, t.sizeCol = start[:k], end[:k], freeReq[:k], stacks[:k], sizes[:k]
	r.reqBefore = reqBefore
	return j
}

// entry replays entry base+j of chunk ch for allocsOf, any entry.
func (r *replayer) entry(base, j int, ch *snapshot.Chunk, addrs []uint64, delta []int64) {
	d, tr, n, open := r.d, r.tr, r.n, r.open
	i := base + j
	k := min(snapshot.ActionKind(ch.Actions[j]), snapshot.KindOther)
	if k == snapshot.KindOther {
		d.Actions[string(tr.Action(i))]++
	}
	isFree := k == snapshot.KindFreeCompleted || (k == snapshot.KindOther && r.isFreeName(i))
	if r.mode == freeOnRequested {
		isFree = k == snapshot.KindFreeRequested
	}
	var dc int64
	switch {
	case k == snapshot.KindAlloc:
		size := ch.Sizes.At(j)
		if size < 0 || size > r.maxSize {
			size = 0
			d.badSizes++
		}
		if o, had := open.swap(addrs[j], opened(d.allocs.add(int32(i), int32(n), ch.Stacks[j], size), size)); had {
			d.allocs.end[o.k] = int32(i)
			dc -= o.bytes(&d.allocs)
			r.doubleAlloc++
		}
		dc += size
	case isFree:
		if o, ok := open.take(addrs[j]); ok {
			// Freed right after its free_requested: end ^i, for
			// splitEnds to set both, one random write fewer here.
			e := int32(i)
			if r.reqBefore == i-1 {
				e = ^e
			}
			d.allocs.end[o.k] = e
			dc = -o.bytes(&d.allocs)
		} else {
			size := d.count(ch.Sizes.At(j))
			d.allocs.add(-1, int32(i), ch.Stacks[j], size)
			d.initialAllocated += size
			d.preTrace++
			dc = -size
		}
	case k == snapshot.KindFreeRequested:
		// torch writes the free_completed right after its
		// free_requested when no other stream holds the block: its
		// take (above) then finds what a look-up here would, and the
		// address is looked up once (a cache miss each, the replay's
		// biggest cost on big files).
		if nextFreed(tr, n, ch.Actions, addrs, j, i) {
			r.reqBefore = i
		} else if o, ok := open.get(addrs[j]); ok {
			d.allocs.freeReq[o.k] = int32(i)
		}
	case k == snapshot.KindSegmentAlloc || k == snapshot.KindSegmentMap:
		r.segRes = append(r.segRes, d.count(ch.Sizes.At(j)))
		d.segEvents = append(d.segEvents, int32(i))
		d.mapped = d.mapped || k == snapshot.KindSegmentMap
	case k == snapshot.KindSegmentFree || k == snapshot.KindSegmentUnmap:
		r.segRes = append(r.segRes, -d.count(ch.Sizes.At(j)))
		d.segEvents = append(d.segEvents, int32(i))
		d.mapped = d.mapped || k == snapshot.KindSegmentUnmap
	case k == snapshot.KindOOM:
		d.ooms = append(d.ooms, int32(i))
	}
	delta[j] = dc
}

// track folds the state after each entry base+j of a chunk, the allocated
// bytes changed by delta[j] and the reserved bytes by segRes[m] at entry
// segAt[m], into the peaks and the timeline's buckets, as one
// bucket.add per entry would. It goes by stretches of entries with the
// same reserved bytes in one bucket: a stretch's lowest and highest
// allocated bytes (the first of equals) are all that the peaks and the
// bucket take of it.
func (r *replayer) track(base int, delta []int64, segAt []int32, segRes []int64) {
	cur, res, over, overAt := r.cur, r.res, r.over, r.overAt
	peakRel, peakIndex, resPeakRel, resPeakIndex := r.peakRel, r.peakIndex, r.resPeakRel, r.resPeakIndex
	bs, bk, bEnd := &r.d.buckets, r.bk, r.bEnd
	timeline := len(bs.b) > 0
	m := 0 // the next segment event
	for j0 := 0; j0 < len(delta); {
		i0 := base + j0
		if m < len(segAt) && int(segAt[m]) == i0 {
			res += segRes[m]
			m++
		}
		cur += delta[j0]
		// The stretch j0 … j1-1: up to the next segment event and the
		// end of the bucket.
		j1 := len(delta)
		if m < len(segAt) {
			j1 = min(j1, int(segAt[m])-base)
		}
		if timeline {
			if i0 >= bEnd {
				bk, bEnd = bs.at(i0)
			}
			j1 = min(j1, bEnd-base)
		}
		cur0 := cur
		var lo, hi int64
		var loJ, hiJ int
		cur, lo, loJ, hi, hiJ = extremes(delta[j0+1:j1], cur, j0)
		if hi > peakRel {
			peakRel, peakIndex = hi, base+hiJ
		}
		if hi-res > over {
			over, overAt = hi-res, base+hiJ
		}
		if res > resPeakRel {
			resPeakRel, resPeakIndex = res, i0
		}
		if timeline {
			bk.addStretch(int32(i0), cur0, int32(base+loJ), lo, int32(base+hiJ), hi, res)
		}
		j0 = j1
	}
	r.cur, r.res, r.over, r.overAt = cur, res, over, overAt
	r.peakRel, r.peakIndex, r.resPeakRel, r.resPeakIndex = peakRel, peakIndex, resPeakRel, resPeakIndex
	r.bk, r.bEnd = bk, bEnd
}

// extremes returns the allocated bytes after the entries j0+1, j0+2, …
// that change them by ds[0], ds[1], … from cur after entry j0, and the
// lowest and highest of cur and those, each with the entry where it was
// first reached. It is track's loop over a stretch, a function of its own
// so that its few variables stay in registers (in WebAssembly track holds
// more than there are), two entries a round (each round ends in a jump
// through the function's dispatch in WebAssembly).
//
//go:noinline
func extremes(ds []int64, cur int64, j0 int) (end, lo int64, loJ int, hi int64, hiJ int) {
	lo, loJ, hi, hiJ = cur, j0, cur, j0
	x := 0
	for ; x+2 <= len(ds); x += 2 {
		d := ds[x : x+2 : x+2]
		c1 := cur + d[0]
		c2 := c1 + d[1]
		if c1 < lo {
			lo, loJ = c1, j0+1+x
		}
		if c1 > hi {
			hi, hiJ = c1, j0+1+x
		}
		if c2 < lo {
			lo, loJ = c2, j0+2+x
		}
		if c2 > hi {
			hi, hiJ = c2, j0+2+x
		}
		cur = c2
	}
	if x < len(ds) {
		cur += ds[x]
		if cur < lo {
			lo, loJ = cur, j0+1+x
		}
		if cur > hi {
			hi, hiJ = cur, j0+1+x
		}
	}
	return cur, lo, loJ, hi, hiJ
}

// pendingBlocks counts the device's active_pending_free blocks: frees
// requested but not completed when the snapshot was taken.
func (d *Device) pendingBlocks() int {
	n := 0
	for _, si := range d.segments {
		for _, b := range d.a.Snap.Segments[si].Blocks {
			if b.State == snapshot.StateActivePendingFree {
				n++
			}
		}
	}
	return n
}

// openAlloc is an allocation the replay has not seen freed yet: its
// number and its size (bytes) in 32 bits, so that the slots of its map
// (uintMap) are 16 bytes, not 24. The open allocations of a big file are
// hundreds of thousands (208 k at the end of the 1 GiB distinct-stacks
// file: 512 Ki slots, 12 MB of them at 24 bytes), most look-ups miss the
// caches, and fewer do in smaller slots. A size of bigOpen or more, rare,
// is read again from the trace (allocTable.bigSize).
type openAlloc struct {
	k    int32
	size uint32
}

// bigOpen is openAlloc.size for 4 GiB − 1 bytes or more.
const bigOpen = 1<<32 - 1

// opened returns allocation k of size bytes (0 ≤ size ≤ maxSize) as the
// replay holds it.
func opened(k int32, size int64) openAlloc {
	return openAlloc{k, uint32(min(size, bigOpen))}
}

// bytes returns o's size; t is the allocation table, which holds o.
func (o openAlloc) bytes(t *allocTable) int64 {
	if o.size == bigOpen {
		return t.bigSize(o.k)
	}
	return int64(o.size)
}

// matchSegments joins the allocations still open at the end of the trace
// with the live blocks of the segments, and adds the live blocks that have
// no alloc in the trace as allocations alive for the whole window.
func (d *Device) matchSegments(open *uintMap[openAlloc]) {
	s := d.a.Snap
	n := int32(d.Trace.Len())
	var sizeMismatch, freeInSegments int
	for _, si := range d.segments {
		seg := &s.Segments[si]
		for bi := range seg.Blocks {
			b := &seg.Blocks[bi]
			switch b.State {
			case snapshot.StateActiveAllocated, snapshot.StateActivePendingFree:
			default:
				if _, ok := open.get(b.Address); ok {
					freeInSegments++
				}
				continue
			}
			pending := b.State == snapshot.StateActivePendingFree
			req, size := d.count(b.RequestedSize), d.count(b.Size)
			if pending {
				d.finalPending += req
			} else {
				d.finalAllocated += req
			}
			if o, ok := open.get(b.Address); ok {
				stack := d.Trace.Frames(int(d.allocs.start[o.k]))
				if s.Stacks.Depth(stack) == 0 {
					// torch 2.0 traces carry no frames; the block's history does.
					stack = b.AllocStack()
				}
				d.allocs.atEnd[o.k] = endBlock{addr: b.Address, size: size, req: req, pending: pending}
				d.allocs.stacks[o.k] = stack
				if o.bytes(&d.allocs) != req {
					sizeMismatch++
				}
				open.del(b.Address)
				continue
			}
			k := d.allocs.add(-1, n, b.AllocStack(), req)
			d.allocs.atEnd[k] = endBlock{addr: b.Address, size: size, req: req, pending: pending}
			d.initialAllocated += req
			d.preTrace++
		}
	}
	if open.len() > 0 {
		d.warn(fmt.Sprintf("%d allocations still open at the end of the trace are not live blocks in the segments", open.len()))
	}
	if freeInSegments > 0 {
		d.warn(fmt.Sprintf("%d of them are inactive (free) blocks in the segments", freeInSegments))
	}
	if sizeMismatch > 0 {
		d.warn(fmt.Sprintf("%d live blocks have a requested_size different from their alloc entry", sizeMismatch))
	}
}

// at returns the bucket of entry i and the first entry of the next
// bucket: record's bucket for every entry from i to that one.
func (bs *buckets) at(i int) (*bucket, int) {
	idx := int64(i-bs.from) * int64(len(bs.b)) / int64(bs.count)
	// The first entry e of bucket idx+1: (e − from)·len ≥ (idx+1)·count.
	next := (int64(bs.count)*(idx+1) + int64(len(bs.b)) - 1) / int64(len(bs.b))
	return &bs.b[idx], bs.from + int(next)
}

// record folds the state after entry i into its bucket.
func (bs *buckets) record(i int, cur, res int64) {
	if len(bs.b) == 0 {
		return
	}
	bs.last = sample{int32(i), cur, res}
	if !bs.seen {
		bs.first, bs.seen = bs.last, true
	}
	bs.b[int64(i-bs.from)*int64(len(bs.b))/int64(bs.count)].add(int32(i), cur, res)
}

// addStretch is add for each moment of a stretch of entries with reserved
// bytes res, from entry i0 (allocated cur0 after it), whose lowest
// allocated bytes lo were first reached at entry loI and highest hi at
// hiI.
func (b *bucket) addStretch(i0 int32, cur0 int64, loI int32, lo int64, hiI int32, hi int64, res int64) {
	if !b.used {
		*b = bucket{used: true, minI: loI, maxI: hiI, resI: i0, minA: lo, maxA: hi, resA: cur0,
			minAR: res, maxAR: res, resR: res}
		return
	}
	if lo < b.minA {
		b.minI, b.minA, b.minAR = loI, lo, res
	}
	if hi > b.maxA {
		b.maxI, b.maxA, b.maxAR = hiI, hi, res
	}
	if res > b.resR {
		b.resI, b.resA, b.resR = i0, cur0, res
	}
}

// add takes the moment i (allocated cur, reserved res) into the bucket:
// its lowest and highest allocated and its highest reserved moment, the
// first of equals.
func (b *bucket) add(i int32, cur, res int64) { b.addStretch(i, cur, i, cur, i, cur, res) }

func (d *Device) warn(s string) { d.Warnings = append(d.Warnings, s) }

// count returns a size as the replay counts it, counting the impossible
// ones (see Analysis.sane).
func (d *Device) count(n int64) int64 {
	v, ok := d.a.sane(n)
	if !ok {
		d.badSizes++
	}
	return v
}

// nextFreed reports whether the entry after the free_requested at index j
// of a chunk (its actions and addrs; entry i of the trace tr, of n
// entries) is that block's free_completed: read from the chunk (not
// through the trace's pages), or from the trace at the chunk's last entry.
func nextFreed(tr snapshot.Trace, n int, actions []uint8, addrs []uint64, j, i int) bool {
	addr := addrs[j]
	if j+1 >= len(actions) || j+1 >= len(addrs) {
		return i+1 < n && tr.Kind(i+1) == snapshot.KindFreeCompleted && tr.Addr(i+1) == addr
	}
	return actions[j+1] == uint8(snapshot.KindFreeCompleted) && addrs[j+1] == addr
}
