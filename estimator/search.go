package estimator

// fits computes the plan, usually a changed copy, and reports whether it
// fits its GPU. The searches copy the plan (q := *p) and change the copy in
// place rather than through a callback, so the copy stays on the stack.
func (p *plan) fits() bool { return p.compute().Fits }

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
	if !p.train() {
		if p.fits() {
			return 1
		}
		return 0
	}
	fits := func(n int) bool {
		q := *p
		q.r.GPUs, q.r.Shard = n, ShardZero3
		return q.fits()
	}
	// NCCL's buffers differ for 2 and for more GPUs, so the first few
	// counts are tried one by one; beyond them the total only falls.
	const linear = 8
	for n := 1; n <= linear; n++ {
		if fits(n) {
			return n
		}
	}
	if !fits(MaxGPUs) {
		return 0
	}
	// linear does not fit, MaxGPUs does: the answer is one more than the
	// most GPUs that do not fit.
	return boundary(linear, MaxGPUs, func(n int) bool { return !fits(n) }) + 1
}
