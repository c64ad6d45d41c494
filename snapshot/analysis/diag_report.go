package analysis

import (
	"slices"
	"sync"
	"sync/atomic"

	"oomscope/snapshot"
)

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
	return d.startDiagnosis(stepsHead(d, r), nil).finish(r)
}

// diagnosisRun is a diagnosis under way: its source, steps and byte-time
// flame graph, found on goroutines (goOrRun) while the rest of the report
// is made, or at finish where there is one core.
type diagnosisRun struct {
	d    *Device
	head DeviceReport
	// sizes are the allocations' sizes (nil: newSource finds them).
	sizes []int64
	// early is the device's early diagnosis when the run started (the
	// device lets go of it in its report: Device.reportFirst).
	early *earlyDiag
	src   source
	sr    stepResult
	bt    *ByteTime
	// joinSteps waits for src and sr; joinByteTime, set by then, for bt.
	joinSteps, joinByteTime func()
}

// stepsHead is what findSteps reads of a device's report r: the initial
// and peak allocated bytes, the peak's entry and the last OOM event's
// entry (d's last oom entry: r.OOMEvents may not be filled yet).
func stepsHead(d *Device, r *DeviceReport) DeviceReport {
	h := DeviceReport{InitialAllocatedBytes: r.InitialAllocatedBytes, PeakAllocatedBytes: r.PeakAllocatedBytes, PeakIndex: r.PeakIndex}
	if n := len(d.ooms); n > 0 {
		h.OOMEvents = []OOMEvent{{Index: int(d.ooms[n-1])}}
	}
	return h
}

// startDiagnosis starts the parts of the diagnosis that need only head
// (see stepsHead): the source, the steps and phases, and the byte-time
// flame graph (which reads only the allocations and stacks). Where there
// is a second core they run on two goroutines beside the caller, which
// makes the rest of the report meanwhile; elsewhere they run at finish, as
// they always did. sizes are the allocations' sizes (allocTable.sizes),
// or nil.
func (d *Device) startDiagnosis(head DeviceReport, sizes []int64) *diagnosisRun {
	g := &diagnosisRun{d: d, head: head, sizes: sizes, early: d.early}
	if concurrent() {
		g.joinSteps = goOrRun(g.steps)
	}
	return g
}

// steps makes the source, starts the flame graph and finds the steps; the
// source and the flame graph are the device's early ones where it has
// them.
func (g *diagnosisRun) steps() {
	if e := g.early; e != nil {
		g.src = e.source()
		g.joinByteTime = func() { g.bt = e.byteTime() }
		if st := e.stepper(&g.head); st != nil {
			g.sr = st.result(&g.head)
			return
		}
	} else {
		g.src = newSourceSized(g.d, g.sizes)
		src := g.src
		g.joinByteTime = goOrRun(func() { g.bt = byteTime(src) })
	}
	g.sr = findSteps(g.src, &g.head)
}

// earlyDiag is what the diagnosis needs of a device that is known once
// the replay has ended, before classify (which none of it reads): the
// allocations' sizes, the source, the byte-time flame graph and the
// steps' scan of the entries (scanSteps). Where there is a second core
// they are made on goroutines while classify runs on the caller's (0.09 s
// of the 1 GiB distinct-stacks file that had one core busy), not in the
// report, where the steps were its longest part (0.13 s there). The
// replay pipeline may have begun the steps' scan (earlyScan): it is
// finished here.
type earlyDiag struct {
	// ready is closed once sizes and src are set (ok), or the goroutine
	// failed (join raises its panic again).
	ready chan struct{}
	ok    bool
	sizes []int64
	src   source
	bt    *ByteTime
	// head is the report head the steps were scanned for (stepsHead),
	// st the scan.
	head DeviceReport
	st   *stepper
	join func()
	// replayScanned is how many entries the replay pipeline had scanned
	// (earlyScan; -1: it did not begin the scan), for tests.
	replayScanned int
}

// startEarly starts making the device's early diagnosis on a goroutine.
func (d *Device) startEarly() *earlyDiag {
	h := d.Headline()
	e := &earlyDiag{ready: make(chan struct{}), head: stepsHead(d, &DeviceReport{InitialAllocatedBytes: d.initialAllocated,
		PeakAllocatedBytes: h.PeakAllocatedBytes, PeakIndex: h.PeakIndex})}
	// The steps' scan, where the replay pipeline began it (earlyScan):
	// finished below, with the source it made.
	sc := d.scan
	d.scan = nil
	e.replayScanned = -1
	if sc != nil && sc.l != nil {
		e.replayScanned = sc.l.base
	} else {
		sc = nil // not begun
	}
	// Joined once, whatever the number of reports (and raising a panic
	// again at each).
	e.join = sync.OnceFunc(goOrRun(func() {
		func() {
			defer close(e.ready)
			e.sizes = d.allocs.takeSizes()
			if sc != nil {
				e.src = sc.src
				e.src.sizes = e.sizes
			} else {
				e.src = newSourceSized(d, e.sizes)
			}
			e.ok = true
		}()
		joinByteTime := goOrRun(func() { e.bt = byteTime(e.src) })
		if sc != nil {
			e.st = sc.stepper(&e.head, e.sizes)
		} else {
			e.st = scanSteps(e.src, &e.head, 0) // classify runs meanwhile
		}
		joinByteTime()
	}))
	return e
}

// earlyScan is the steps' scan of a device's entries (stepper.scan) begun
// during the replay, by the replay pipeline's second goroutine while it
// waits for the matcher (replayer.pipeline), a chunk at a time; the early
// diagnosis scans the rest. The scan reads the entries, the stacks and the
// action counts, not what the replay finds, but for the allocated memory
// before the first entry, which it takes as 0 (stepper.shift adds it).
type earlyScan struct {
	d *Device
	// onRequested and legacyFree are source.endsOnRequested's and
	// legacyFree's answers from the action counts, which the replay
	// writes meanwhile.
	onRequested, legacyFree bool
	src                     source // without sizes
	st                      *stepper
	l                       *scanLoop // nil: not begun
}

// step does a little of the scan: the source and the scan's start, then a
// chunk of entries. It returns false when the scan has nothing left to do
// before finish.
func (s *earlyScan) step() bool {
	if s.l == nil {
		s.src = newSourceFree(s.d, nil, s.legacyFree)
		s.st = newStepperFrom(s.src, 0, s.onRequested)
		s.l = s.st.scanStart()
		return true
	}
	return s.l.next()
}

// stepper finishes the scan for the report head (stepsHead) and gives
// its source the allocations' sizes: it returns the stepper that
// scanSteps(src, head, 0) makes, src being s.src with those sizes.
func (s *earlyScan) stepper(head *DeviceReport, sizes []int64) *stepper {
	for s.l.next() {
	}
	peak, at := s.l.finish()
	st := s.st
	st.src.sizes = sizes
	st.check(st.shift(head.InitialAllocatedBytes, peak), at, head)
	return st
}

// stepper returns the steps' scan once made, if it was made for head (a
// report's stepsHead), else nil.
func (e *earlyDiag) stepper(head *DeviceReport) *stepper {
	e.join()
	h := &e.head
	if h.InitialAllocatedBytes != head.InitialAllocatedBytes || h.PeakAllocatedBytes != head.PeakAllocatedBytes ||
		h.PeakIndex != head.PeakIndex || !slices.EqualFunc(h.OOMEvents, head.OOMEvents, func(a, b OOMEvent) bool { return a.Index == b.Index }) {
		return nil
	}
	return e.st
}

// wait waits for the sizes and the source; a panic of the goroutine
// meanwhile is raised again.
func (e *earlyDiag) wait() {
	<-e.ready
	if !e.ok {
		e.join()
	}
}

// allocSizes returns the allocations' sizes (allocTable.sizes).
func (e *earlyDiag) allocSizes() []int64 {
	e.wait()
	return e.sizes
}

// source returns the device's source, made with allocSizes.
func (e *earlyDiag) source() source {
	e.wait()
	return e.src
}

// byteTime returns the byte-time flame graph (byteTime).
func (e *earlyDiag) byteTime() *ByteTime {
	e.join()
	return e.bt
}

// finish completes the diagnosis of a device whose report r is otherwise
// complete.
func (g *diagnosisRun) finish(r *DeviceReport) DiagnosisReport {
	if g.joinSteps != nil {
		g.joinSteps()
	} else {
		g.steps()
	}
	src, sr := g.src, g.sr
	dr := DiagnosisReport{Steps: sr.steps, StepInfo: sr.info, PeakPhase: sr.peak, PhasePeaks: sr.phasePeaks, PhaseSpans: sr.spansOut}

	// The live memory at the peak, at each phase's own peak and at the
	// last OOM: what the cause and the fixes' savings are read from.
	idx, phases := []int{r.PeakIndex}, []Phase{sr.peak.Phase}
	for _, ph := range []Phase{PhaseForward, PhaseBackward, PhaseOptimizer, PhaseOther} {
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
	g.joinByteTime()
	dr.Anomalies, dr.ByteTime = col.result(lr.sites), g.bt
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
	if !concurrent() {
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

// concurrent reports whether goOrRun runs its function on a goroutine.
func concurrent() bool {
	return snapshot.Concurrent() && !sequentialOnly.Load()
}

// sequentialOnly makes goOrRun run everything at once (tests compare). It
// is atomic: a test sets it while goroutines of an analysis made before
// (an early diagnosis no report waited for) may still ask concurrent.
var sequentialOnly atomic.Bool
