package analysis

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
	// Leak is memory that grows step after step; nil when none is found.
	Leak *Leak `json:"leak"`
}

// diagnose fills the diagnosis of a device whose report r is otherwise
// complete.
func (d *Device) diagnose(r *DeviceReport) DiagnosisReport {
	src := source{d}
	allocated := allocatedCurve(src)
	sr := findSteps(src, allocated, r.PeakIndex)
	lr := findLeak(src, sr.steps)
	return DiagnosisReport{Steps: sr.steps, StepInfo: sr.info, PeakPhase: sr.peak, PhasePeaks: sr.phasePeaks, Leak: lr.leak}
}
