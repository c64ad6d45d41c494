package analysis

import "oomscope/snapshot"

// pipelineMin is the fewest entries a trace has for the replay to run as
// a pipeline (replayer.pipeline) where there is a second core; a variable
// so that tests can run the pipeline on small traces.
var pipelineMin = 1 << 17

// pipelineScanSteps, where not -1, is how many steps of the steps' scan
// (earlyScan.step) the pipeline takes: all before its first chunk, none
// while it waits. Tests set it to have the scan begun, partly or wholly
// made during the replay, whatever the timing.
var pipelineScanSteps = -1

// pipelineDepth is how many matched chunks the pipeline's matcher may be
// ahead of the replay.
const pipelineDepth = 4

// matchedChunk is a chunk of the trace with what the matcher found for each
// of its entries (see replayer.match).
type matchedChunk struct {
	base int
	ch   snapshot.Chunk
	out  []openAlloc
}

// Values of openAlloc.k in a matched chunk besides an allocation's number.
const (
	// matchNone: the entry matched no open allocation.
	matchNone = -1
	// matchNext: a free_requested whose free_completed follows it at once
	// (chunk: reqBefore).
	matchNext = -2
)

// pipeline replays the trace as chunk does, on two goroutines: a matcher
// does the look-ups of the open allocations by address (the replay's
// biggest cost on big files, a cache miss each) and hands each chunk's
// results on to this goroutine, which does the rest (replayRest) and, when
// it has caught up with the matcher, a chunk of the steps' scan at a time
// rather than wait (r.scan: earlyScan). The matcher numbers the
// allocations as allocTable.add will: one per alloc entry and one per free
// that matches nothing. The result is chunk's, entry for entry; r.open is
// the matcher's map once both are done.
func (r *replayer) pipeline() {
	jobs := make(chan matchedChunk, pipelineDepth)
	bufs := make(chan []openAlloc, pipelineDepth+2)
	for range pipelineDepth + 2 {
		bufs <- nil
	}
	nextK := int32(r.d.allocs.len())
	join := goOrRun(func() {
		defer close(jobs)
		for base := 0; base < r.n; {
			ch := r.tr.Chunk(base)
			out := <-bufs
			if cap(out) < len(ch.Actions) {
				out = make([]openAlloc, len(ch.Actions))
			}
			out = out[:len(ch.Actions)]
			nextK = r.match(base, ch, out, nextK)
			jobs <- matchedChunk{base, ch, out}
			base += len(ch.Actions)
		}
	})
	idle := r.scan // what to do while the matcher is behind
	if pipelineScanSteps >= 0 && idle != nil {
		for i := 0; i < pipelineScanSteps && idle.step(); i++ {
		}
		idle = nil
	}
	for {
		var m matchedChunk
		var ok bool
		select {
		case m, ok = <-jobs:
		default:
			// The matcher is behind: a chunk of the steps' scan
			// meanwhile (earlyScan).
			if idle != nil && idle.step() {
				continue
			}
			m, ok = <-jobs
		}
		if !ok {
			break
		}
		r.replayRest(m.base, m.ch, m.out)
		bufs <- m.out
		r.presite()
	}
	join()
}

// preSites are the sites, stack phases and cuBLAS workspaces of the
// allocations 0 … len(site)-1, found by the pipeline while it waits for
// the matcher (the slower of its two goroutines), in the order classify
// would find them: classify starts after them. Its sites are interned in
// allocation order, as classify's are, so the site numbers are the same.
type preSites struct {
	site       []int32
	phase      []phase // the stack's phase (summaryPhase)
	workspaces []int32
	// stopped: an allocation whose stack matchSegments may replace (no
	// frames) was met; classify does it and all after it.
	stopped bool
}

// presite finds the preSites of the allocations added since it last ran.
func (r *replayer) presite() {
	p, t, a := &r.pre, &r.d.allocs, r.d.a
	if p.stopped {
		return
	}
	stacks := a.Snap.Stacks
	for k := len(p.site); k < t.len(); k++ {
		stack := t.stack(k)
		if stacks.Depth(stack) == 0 {
			p.stopped = true
			return
		}
		sum := stacks.Summary(stack)
		p.site = append(p.site, a.siteOfSummary(sum))
		p.phase = append(p.phase, summaryPhase(sum))
		if summaryWorkspace(sum) {
			p.workspaces = append(p.workspaces, int32(k))
		}
	}
}

// match does chunk's look-ups of r.open for entries base, base+1, … of ch:
// out[j] is the open allocation entry base+j ends (an alloc: the one it
// replaces; a free: the one it frees; a free_requested: the one it
// requests to free, or matchNext), k matchNone where none. nextK is the
// number the next allocation gets; match returns it after ch.
func (r *replayer) match(base int, ch snapshot.Chunk, out []openAlloc, nextK int32) int32 {
	tr, n, open, maxSize, mode := r.tr, r.n, r.open, r.maxSize, r.mode
	addrs := ch.Addrs.Plain(&r.addrs)
	for j, code := range ch.Actions {
		i := base + j
		if j%touchRun == 0 {
			open.touch(addrs[j:min(j+touchRun, len(addrs))])
		}
		k := min(snapshot.ActionKind(code), snapshot.KindOther)
		isFree := k == snapshot.KindFreeCompleted || (k == snapshot.KindOther && r.isFreeName(i))
		if mode == freeOnRequested {
			isFree = k == snapshot.KindFreeRequested
		}
		o := openAlloc{k: matchNone}
		switch {
		case k == snapshot.KindAlloc:
			size := ch.Sizes.At(j)
			if size < 0 || size > maxSize {
				size = 0
			}
			if prev, had := open.swap(addrs[j], opened(nextK, size)); had {
				o = prev
			}
			nextK++
		case isFree:
			if prev, ok := open.take(addrs[j]); ok {
				o = prev
			} else {
				nextK++
			}
		case k == snapshot.KindFreeRequested:
			if nextFreed(tr, n, ch.Actions, addrs, j, i) {
				o.k = matchNext
			} else if prev, ok := open.get(addrs[j]); ok {
				o = prev
			}
		}
		out[j] = o
	}
	return nextK
}

// replayRest is chunk with the look-ups of r.open done by match (out). It
// repeats chunk's bookkeeping on purpose: chunk written as match into a
// buffer then replayRest (one copy of the loop) made the analysis slower
// in WebAssembly, where chunk runs alone (Diagnosis/analyze under node,
// best of 6, two rounds: distinct 200 MiB 271-277 -> 287-303 ms, real
// 200 MiB 117-130 -> 134-138 ms). A change to one loop is a change to
// both; TestReplayPipelineSame compares them.
func (r *replayer) replayRest(base int, ch snapshot.Chunk, out []openAlloc) {
	d, tr, n := r.d, r.tr, r.n
	cur, res, over, overAt := r.cur, r.res, r.over, r.overAt
	peakRel, peakIndex, resPeakRel, resPeakIndex := r.peakRel, r.peakIndex, r.resPeakRel, r.resPeakIndex
	maxSize, mode, reqBefore := r.maxSize, r.mode, r.reqBefore
	bs, bk, bEnd := &d.buckets, r.bk, r.bEnd
	out = out[:len(ch.Actions)]
	for j, code := range ch.Actions {
		i := base + j
		k := min(snapshot.ActionKind(code), snapshot.KindOther)
		if k == snapshot.KindOther {
			d.Actions[string(tr.Action(i))]++
		} else {
			r.counts[k]++
		}
		isFree := k == snapshot.KindFreeCompleted || (k == snapshot.KindOther && r.isFreeName(i))
		if mode == freeOnRequested {
			isFree = k == snapshot.KindFreeRequested
		}
		o := out[j]
		switch {
		case k == snapshot.KindAlloc:
			size := ch.Sizes.At(j)
			if size < 0 || size > maxSize {
				size = 0
				d.badSizes++
			}
			d.allocs.add(int32(i), int32(n), ch.Stacks[j], size)
			if o.k >= 0 {
				d.allocs.end[o.k] = int32(i)
				cur -= o.bytes(&d.allocs)
				r.doubleAlloc++
			}
			cur += size
		case isFree:
			if o.k >= 0 {
				e := int32(i)
				if reqBefore == i-1 {
					e = ^e
				}
				d.allocs.end[o.k] = e
				cur -= o.bytes(&d.allocs)
			} else {
				size := d.count(ch.Sizes.At(j))
				d.allocs.add(-1, int32(i), ch.Stacks[j], size)
				d.initialAllocated += size
				d.preTrace++
				cur -= size
			}
		case k == snapshot.KindFreeRequested:
			if o.k == matchNext {
				reqBefore = i
			} else if o.k >= 0 {
				d.allocs.freeReq[o.k] = int32(i)
			}
		case k == snapshot.KindSegmentAlloc || k == snapshot.KindSegmentMap:
			res += d.count(ch.Sizes.At(j))
			d.segEvents = append(d.segEvents, int32(i))
			d.mapped = d.mapped || k == snapshot.KindSegmentMap
		case k == snapshot.KindSegmentFree || k == snapshot.KindSegmentUnmap:
			res -= d.count(ch.Sizes.At(j))
			d.segEvents = append(d.segEvents, int32(i))
			d.mapped = d.mapped || k == snapshot.KindSegmentUnmap
		case k == snapshot.KindOOM:
			d.ooms = append(d.ooms, int32(i))
		}
		if cur > peakRel {
			peakRel, peakIndex = cur, i
		}
		if cur-res > over {
			over, overAt = cur-res, i
		}
		if res > resPeakRel {
			resPeakRel, resPeakIndex = res, i
		}
		if len(bs.b) == 0 {
			continue
		}
		if i >= bEnd {
			bk, bEnd = bs.at(i)
		}
		bk.add(int32(i), cur, res)
	}
	r.cur, r.res, r.over, r.overAt = cur, res, over, overAt
	r.peakRel, r.peakIndex, r.resPeakRel, r.resPeakIndex = peakRel, peakIndex, resPeakRel, resPeakIndex
	r.reqBefore, r.bk, r.bEnd = reqBefore, bk, bEnd
}
