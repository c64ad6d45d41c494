package estimator

// Report is an estimate with the answers built on it: the smallest GPU
// that fits, the GPUs ZeRO-3 needs, the largest micro-batch and sequence,
// and the fix ladder. Its JSON is what `oomscope estimate --json` prints.
type Report struct {
	*Result
	// SmallestGPU is the catalog GPU with the least capacity that fits the
	// request as given, "" if none does.
	SmallestGPU string `json:"smallest_gpu"`
	// GPUsNeeded is the fewest GPUs of the chosen kind that fit under ZeRO-3
	// (training), 0 if none up to MaxGPUs do.
	GPUsNeeded int `json:"gpus_needed"`
	// MaxBatch is the largest micro-batch that fits the chosen GPU (0: none).
	MaxBatch int `json:"max_batch"`
	// MaxSeq is the longest sequence that fits at the chosen micro-batch
	// (0: none); it may exceed the model's context length.
	MaxSeq int `json:"max_seq"`
	// Fixes is the fix ladder, cheapest first, applied cumulatively, up to
	// the first rung that fits; empty when the request fits as it is.
	Fixes []Fix `json:"fixes"`
}

// Analyze estimates a request and answers the questions around it.
func Analyze(r Request) (*Report, error) {
	p, err := newPlan(r)
	if err != nil {
		return nil, err
	}
	res := p.compute()
	return &Report{
		Result:      res,
		SmallestGPU: p.smallestGPU(),
		GPUsNeeded:  p.gpusNeeded(),
		MaxBatch:    p.maxBatch(),
		MaxSeq:      p.maxSeq(),
		Fixes:       p.fixes(res),
	}, nil
}
