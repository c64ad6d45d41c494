package analysis

import "runtime"

// DiagnosisReport answers why a device's memory peaked: the training steps
// and phases, a leak across steps, the cause in triage's vocabulary with
// the numbers and rule behind it, and the fixes with the bytes each would
// save of this measured memory. It is part of DeviceReport; its JSON keys
// (steps, peak_phase, phase_peaks, leak, diagnosis, fixes) are fixed.
type DiagnosisReport struct {
	// Steps are the training iterations, oldest first.
	Steps []Step `json:"steps"`
	// StepInfo says how steps and phases were found.
	StepInfo StepInfo `json:"step_info"`
	// PeakPhase is the step and phase of the peak.
	PeakPhase PeakPhase `json:"peak_phase"`
	// PhasePeaks is the peak of each phase in each step.
	PhasePeaks []PhasePeak `json:"phase_peaks"`
	// PhaseSpans cut the steps into their phases, in trace order: the
	// bands a timeline shades.
	PhaseSpans []PhaseSpan `json:"phase_spans"`
	// Leak is memory that grows step after step; nil when none is found.
	Leak *Leak `json:"leak"`
	// Diagnosis is the cause with its numbers and rule.
	Diagnosis Diagnosis `json:"diagnosis"`
	// Fixes are the fixes with the bytes each saves here, cheapest first.
	Fixes []Saving `json:"fixes"`
	// OOMCard is the card at the last OOM event, as triage draws it.
	OOMCard *OOMCard `json:"oom_card,omitempty"`
	// Setup is the training setup the model state implies, for the
	// estimator.
	Setup *Setup `json:"setup,omitempty"`
	// Anomalies are pending frees and long-lived large allocations.
	Anomalies Anomalies `json:"anomalies"`
	// ByteTime weighs the allocation stacks by bytes × lifetime.
	ByteTime *ByteTime `json:"byte_time,omitempty"`
}

// diagnose fills the diagnosis of a device whose report r is otherwise
// complete.
func (d *Device) diagnose(r *DeviceReport) DiagnosisReport {
	src := newSource(d)
	// The byte-time flame graph reads only the allocations and stacks: it
	// runs beside the rest where there is a second core.
	var bt *ByteTime
	joinByteTime := goOrRun(func() { bt = byteTime(src) })
	sr := findSteps(src, r)
	dr := DiagnosisReport{Steps: sr.steps, StepInfo: sr.info, PeakPhase: sr.peak, PhasePeaks: sr.phasePeaks, PhaseSpans: sr.spansOut}

	// The live memory at the peak, at each phase's own peak and at the
	// last OOM: what the cause and the fixes' savings are read from.
	idx, phases := []int{r.PeakIndex}, []string{sr.peak.Phase}
	for _, ph := range []string{PhaseForward, PhaseBackward, PhaseOptimizer, PhaseOther} {
		if j, ok := sr.maxPhase[ph]; ok && j != r.PeakIndex {
			idx, phases = append(idx, j), append(phases, ph)
		}
	}
	var ev *OOMEvent
	if n := len(r.OOMEvents); n > 0 {
		ev = &r.OOMEvents[n-1]
		idx, phases = append(idx, ev.Index), append(phases, sr.oomPhase)
	}
	col := newAnomalyCollector(src, sr.steps, r.PeakAllocatedBytes)
	ms, surv := measureMoments(src, idx, phases, col, len(leakSteps(sr.steps)) >= 2)
	lr := findLeak(src, sr.steps, surv)
	ms.addLeaked(src, surv, lr.sites)
	dr.Leak = lr.leak
	joinByteTime()
	dr.Anomalies, dr.ByteTime = col.result(lr.sites), bt
	gpu := ""
	if ev != nil {
		dr.OOMCard = oomCard(ev)
		gpu = dr.OOMCard.GPU
	}
	dr.Setup = inferSetup(ms, ms.maxOf(func(m *moment) int64 { return m.cats.Activation }), gpu)
	var oomLeaked int64
	if ev != nil {
		oomLeaked = ms[len(ms)-1].leaked
	}
	r.DiagnosisReport = dr
	dr.Diagnosis = diagnoseCause(r, lr.leak, ms[0], dr.OOMCard, oomLeaked)
	dr.Fixes = chooseFixes(fixInput{r: r, ms: ms, setup: dr.Setup, leak: lr.leak, steps: sr.steps, exp: src.expandable(r), card: dr.OOMCard,
		cause: dr.Diagnosis.Cause})
	return dr
}

// goOrRun runs f on a goroutine where there is a second core (not in
// WebAssembly, GOMAXPROCS > 1) and returns a function that waits for it
// and raises again a panic of f; elsewhere it runs f at once.
func goOrRun(f func()) (join func()) {
	if runtime.GOARCH == "wasm" || runtime.GOMAXPROCS(0) < 2 || sequentialOnly {
		f()
		return func() {}
	}
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	return func() {
		if p := <-done; p != nil {
			panic(p)
		}
	}
}

// sequentialOnly makes goOrRun run everything at once (tests compare).
var sequentialOnly = false
