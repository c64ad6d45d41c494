package gen

// StepTruth is one training iteration (one optimizer step) as the kept
// trace shows it. An iteration starts with its first event: the evaluation
// or logging pass when it has one, else zero_grad, else its first
// allocation.
type StepTruth struct {
	// First and Last are its first and last entries in the kept trace.
	First, Last int
	// Partial is true when the ring buffer dropped its beginning.
	Partial bool
	// PeakAllocated is the highest live bytes after any of its entries;
	// EndAllocated the live bytes after its last entry.
	PeakAllocated, EndAllocated int64
	// PhasePeaks is the highest live bytes per phase within it, by phase
	// name ("other", "forward", "backward", "optimizer"), for the phases it
	// has.
	PhasePeaks map[string]int64
}

// LeakTruth is what a leaking loop (Loop.Leak) keeps per step.
type LeakTruth struct {
	// BytesPerStep and Blocks are the requested bytes and allocations kept
	// per step.
	BytesPerStep int64
	Blocks       int
	// Site is the allocation site of the kept blocks (LeakHistorySite or
	// LeakLossGraphSite).
	Site string
}

// stepTruth fills the steps, the peak's step and phase, and the leak of t
// from the tagged deltas of one device. cut is the number of entries the
// ring buffer dropped.
func stepTruth(t *DeviceTruth, r devRun, cut int, opt Options) {
	t.PeakStep, t.PeakPhase = -1, phaseNames[phaseOther]
	// Live bytes before the first kept entry are InitialAllocated; replay
	// the kept entries and attribute each to its step.
	live := t.InitialAllocated
	idx := map[int32]int{}
	dropped := map[int32]bool{} // steps with entries the ring buffer dropped
	leakBytes := map[int32]int64{}
	leakBlocks := map[int32]int{}
	for _, dl := range r.deltas {
		if dl.leak && dl.step >= 0 {
			leakBytes[dl.step] += dl.live
			leakBlocks[dl.step]++
		}
		if dl.trace >= 0 && dl.trace < cut {
			dropped[dl.step] = true
		}
		if dl.trace < cut {
			continue
		}
		live += dl.live
		i := dl.trace - cut
		if dl.step < 0 {
			continue
		}
		k, ok := idx[dl.step]
		if !ok {
			k = len(t.Steps)
			idx[dl.step] = k
			t.Steps = append(t.Steps, StepTruth{First: i, Partial: dropped[dl.step], PhasePeaks: map[string]int64{}})
		}
		st := &t.Steps[k]
		st.Last, st.EndAllocated = i, live
		st.PeakAllocated = max(st.PeakAllocated, live)
		name := phaseNames[dl.phase]
		st.PhasePeaks[name] = max(st.PhasePeaks[name], live)
		if i == t.PeakIndex {
			t.PeakStep, t.PeakPhase = k, name
		}
	}
	if opt.Loop.Leak != "" {
		// Every step keeps the same: report the first full step's.
		for s := int32(0); ; s++ {
			if b, ok := leakBytes[s]; ok {
				site := LeakHistorySite
				if opt.Loop.Leak == LeakLossGraph {
					site = LeakLossGraphSite
				}
				t.Leak = &LeakTruth{BytesPerStep: b, Blocks: leakBlocks[s], Site: site}
				break
			}
			if int(s) > opt.Steps {
				break
			}
		}
	}
}
