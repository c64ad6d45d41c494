package load

// The memory bound of the overview of ranks: the page analyses the files
// of a job in a pool of workers, each holding one analysis at a time, which
// peaks at about its file's size (issue #9: a worker's peak ≤ 1× the file).
// RankPool starts a file only while the files being analysed sum to at
// most a budget, so many big ranks never run all at once; a file over the
// budget runs alone. The CLI takes the same rule.

// RankBudget is the most bytes of rank files analysed at once (the sum of
// the sizes of the files in the pool's workers).
const RankBudget = 2 << 30

// RankRecycleBytes: a worker that analysed a file larger than this is
// ended and a fresh one takes the next file, since a WebAssembly worker
// never gives its memory back (below it, starting a worker costs more than
// the memory it keeps).
const RankRecycleBytes = 256 << 20

// RankPool decides when the next file of the overview may start. Files
// start in their order: one that does not fit waits for running ones to
// finish, and none after it is started before it. The zero value runs
// nothing; set Workers and Budget.
type RankPool struct {
	// Workers is the most files analysed at once.
	Workers int
	// Budget is the most bytes of files analysed at once.
	Budget int64

	running int
	bytes   int64
}

// CanStart reports whether a file of size bytes may start now: a worker is
// free, and with it the running files sum to at most Budget, or none runs
// (a file over the budget then runs alone). An unknown size (< 0) counts
// as 0.
func (p *RankPool) CanStart(size int64) bool {
	if p.running >= p.Workers {
		return false
	}
	return p.running == 0 || p.bytes+max(size, 0) <= p.Budget
}

// Start records a file of size bytes as started.
func (p *RankPool) Start(size int64) {
	p.running++
	p.bytes += max(size, 0)
}

// Done records a file of size bytes (as given to Start) as finished.
func (p *RankPool) Done(size int64) {
	p.running = max(0, p.running-1)
	p.bytes = max(0, p.bytes-max(size, 0))
}

// Running returns the number of files being analysed and their bytes.
func (p *RankPool) Running() (files int, bytes int64) { return p.running, p.bytes }
