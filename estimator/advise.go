package estimator

// Advice is an estimate with the answers built on it: the smallest GPU
// that fits, the GPUs ZeRO-3 (or tensor parallelism, serving) needs, the
// largest micro-batch and sequence, the feasible region, the error band and
// the fix ladder. Its JSON is what `oomscope estimate --json` prints.
type Advice struct {
	*Result
	// SmallestGPU is the catalog GPU with the least capacity that fits the
	// request as given, "" if none does.
	SmallestGPU string `json:"smallest_gpu"`
	// GPUsNeeded is the fewest GPUs of the chosen kind that fit: under
	// ZeRO-3 for training, as the tensor-parallel size for serving; 0 if
	// none up to the limit do.
	GPUsNeeded int `json:"gpus_needed"`
	// MaxBatch is the largest micro-batch that fits the chosen GPU (0:
	// none); serving, the requests of max_model_len the cache holds at once.
	MaxBatch int `json:"max_batch"`
	// MaxSeq is the longest sequence that fits at the chosen micro-batch
	// (0: none); it may exceed the model's context length. Serving, the
	// longest max_model_len the engine starts with.
	MaxSeq int `json:"max_seq"`
	// Feasible is the feasible region: the largest micro-batch at each
	// sequence length (serving: requests at each max_model_len), and
	// FeasibleByBatch the longest sequence at each micro-batch.
	Feasible        []FeasiblePoint `json:"feasible"`
	FeasibleByBatch []FeasibleSeq   `json:"feasible_by_batch,omitempty"`
	// ErrorBand is the spread of error on the nearest measured setups; nil
	// when none is of this kind (plain inference).
	ErrorBand *ErrorBand `json:"error_band,omitempty"`
	// CapacityMargin is how far below the measured longest sequences the
	// shown ones were (the bound allows at most 5 % above).
	CapacityMargin CapacityMargin `json:"capacity_margin"`
	// Fixes is the fix ladder, cheapest first, applied cumulatively, up to
	// the first rung that fits; empty when the request fits as it is.
	Fixes []Rung `json:"fixes"`
}

// Advise estimates a request and answers the questions around it.
func Advise(r Request) (*Advice, error) {
	p, err := newPlan(r)
	if err != nil {
		return nil, err
	}
	res := p.compute()
	rep := &Advice{
		Result:         res,
		SmallestGPU:    p.smallestGPU(),
		GPUsNeeded:     p.gpusNeeded(),
		Feasible:       p.feasible(),
		ErrorBand:      p.errorBand(),
		CapacityMargin: capacityMargin(),
		Fixes:          p.fixes(res),
	}
	if s := res.Serving; s != nil {
		rep.MaxBatch, rep.MaxSeq = int(s.MaxConcurrency), p.maxModelLen()
	} else {
		rep.MaxBatch, rep.MaxSeq = p.maxBatch(), p.maxSeq()
		rep.FeasibleByBatch = p.feasibleByBatch()
	}
	return rep, nil
}
