package estimator

// fits computes the plan, usually a changed copy, and reports whether it
// fits its GPU. The searches copy the plan (q := *p) and change the copy in
// place rather than through a callback, so the copy stays on the stack.
func (p *plan) fits() bool { return p.probe().Fits }

// probe computes the plan without the formulas' words.
func (p *plan) probe() *Result {
	q := *p
	q.quiet = true
	return q.compute()
}

// largestFitting returns the largest n in [1, limit] with fits(n), assuming
// fits is monotonic (true up to some n, false after), or 0 if fits(1) is
// false. It doubles, then bisects: O(log limit) calls.
func largestFitting(limit int, fits func(int) bool) int {
	if limit < 1 || !fits(1) {
		return 0
	}
	lo := 1 // fits
	for lo < limit {
		next := min(lo*2, limit)
		if !fits(next) {
			return boundary(lo, next, fits)
		}
		lo = next
	}
	return lo
}

// boundary returns the largest n in [lo, hi) with ok(n), given that ok(lo)
// holds, ok(hi) does not (neither is asked) and ok is monotonic in between
// (true up to some n, false after). It bisects: O(log(hi-lo)) calls.
func boundary(lo, hi int, ok func(int) bool) int {
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// maxBatch is the largest micro-batch that fits the chosen GPU.
func (p *plan) maxBatch() int {
	return largestFitting(MaxBatch, func(b int) bool {
		q := *p
		q.r.Batch = b
		return q.fits()
	})
}

// maxSeq is the longest sequence that fits the chosen GPU at the chosen
// micro-batch. It is not capped at the model's context length.
func (p *plan) maxSeq() int {
	return largestFitting(MaxSeq, func(s int) bool {
		q := *p
		q.r.Seq = s
		return q.fits()
	})
}

// smallestGPU is the catalog GPU with the least capacity on which the
// request fits, or "" when none does.
func (p *plan) smallestGPU() string {
	for _, g := range GPUs() {
		q := *p
		q.g = g
		if q.fits() {
			return g.ID
		}
	}
	return ""
}

// gpusNeeded is the fewest GPUs of the chosen kind that fit the training
// request under ZeRO-3 (FSDP full shard), or 0 when even MaxGPUs do not
// (activations and logits are not sharded). Inference returns 1 or 0.
func (p *plan) gpusNeeded() int {
	if p.serve() {
		for tp := 1; tp <= 8; tp *= 2 {
			if p.m.Heads%tp != 0 {
				continue
			}
			q := *p
			q.r.TP = tp
			if q.fits() {
				return tp
			}
		}
		return 0
	}
	if !p.train() {
		if p.fits() {
			return 1
		}
		return 0
	}
	tp := max(1, p.r.TP)
	fits := func(n int) bool {
		q := *p
		q.r.GPUs, q.r.Shard = n*tp, ShardZero3
		return q.fits()
	}
	// NCCL's buffers differ for 2 and for more GPUs, so the first few
	// counts are tried one by one; beyond them the total only falls.
	const linear = 8
	for n := 1; n <= linear; n++ {
		if fits(n) {
			return n * tp
		}
	}
	top := MaxGPUs / tp
	if !fits(top) {
		return 0
	}
	// linear does not fit, top does: the answer is one more than the
	// most GPUs that do not fit.
	return (boundary(linear, top, func(n int) bool { return !fits(n) }) + 1) * tp
}

// maxModelLen is the longest max_model_len a serving engine starts with on
// the chosen GPU (0: none), up to the model's context.
func (p *plan) maxModelLen() int {
	limit := p.m.MaxPositions
	if limit == 0 {
		limit = MaxSeq
	}
	return largestFitting(limit, func(n int) bool {
		q := *p
		q.r.MaxModelLen = n
		return q.fits()
	})
}

// FeasiblePoint is one step of the feasible region's boundary: the largest
// micro-batch that fits at a sequence length (0: none).
type FeasiblePoint struct {
	Seq      int `json:"seq"`
	MaxBatch int `json:"max_batch"`
}

// FeasibleSeq is the longest sequence that fits at a micro-batch.
type FeasibleSeq struct {
	Batch  int `json:"batch"`
	MaxSeq int `json:"max_seq"`
}

// seqGrid is the sequence lengths the feasible region is evaluated at:
// powers of two from 256 up to the model's context (at least 8,192, at
// most 1,048,576), with the request's own length.
func (p *plan) seqGrid(own int) []int {
	top := min(max(p.m.MaxPositions, 8192), 1<<20)
	var g []int
	for s := 256; s <= top; s *= 2 {
		if own > s/2 && own < s && (len(g) == 0 || g[len(g)-1] != own) {
			g = append(g, own)
		}
		g = append(g, s)
	}
	if own > top {
		g = append(g, own)
	}
	return g
}

// feasible is the largest micro-batch at each sequence length of the grid
// (serving: the max_model_len requests the cache holds). The boundary only
// falls as sequences grow, so each search is bounded by the one before.
func (p *plan) feasible() []FeasiblePoint {
	if p.serve() {
		var out []FeasiblePoint
		for _, s := range p.seqGrid(p.probe().Serving.MaxModelLen) {
			if p.m.MaxPositions > 0 && s > p.m.MaxPositions {
				break
			}
			q := *p
			q.r.MaxModelLen = s
			res := q.probe()
			n := 0
			if res.Serving.Error == "" {
				n = int(res.Serving.MaxConcurrency)
			}
			out = append(out, FeasiblePoint{Seq: s, MaxBatch: n})
		}
		return out
	}
	limit := MaxBatch
	var out []FeasiblePoint
	for _, s := range p.seqGrid(p.r.Seq) {
		n := largestFitting(limit, func(b int) bool {
			q := *p
			q.r.Seq, q.r.Batch = s, b
			return q.fits()
		})
		out = append(out, FeasiblePoint{Seq: s, MaxBatch: n})
		if n == 0 {
			break
		}
		limit = n
	}
	return out
}

// feasibleByBatch is the longest sequence at micro-batch 1, 2, 4, … while
// it is at least the grid's shortest (256 tokens).
func (p *plan) feasibleByBatch() []FeasibleSeq {
	limit := MaxSeq
	var out []FeasibleSeq
	for b := 1; b <= MaxBatch; b *= 2 {
		n := largestFitting(limit, func(s int) bool {
			q := *p
			q.r.Seq, q.r.Batch = s, b
			return q.fits()
		})
		if n == 0 {
			break
		}
		out = append(out, FeasibleSeq{Batch: b, MaxSeq: n})
		if n < 256 {
			break
		}
		limit = n
	}
	return out
}
