package load

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"testing"

	"oomscope/snapshot/analysis"
)

// TestStepsBufferCut reads every cut-short prefix, and a few corrupted
// copies, of a device's packed steps: each is an error, never a panic or
// a silently shorter list.
func TestStepsBufferCut(t *testing.T) {
	f := loadGenerated(t, "everything")
	d := &f.Report.Devices[f.Report.Busiest()]
	if len(d.Steps) == 0 || len(d.PhasePeaks) == 0 || len(d.PhaseSpans) == 0 {
		t.Fatalf("%d steps, %d phase peaks, %d spans: the test does not test", len(d.Steps), len(d.PhasePeaks), len(d.PhaseSpans))
	}
	b := packSteps(d)
	var whole analysis.DeviceReport
	if err := unpackSteps(b, &whole, nil); err != nil || len(whole.PhaseSpans) != len(d.PhaseSpans) {
		t.Fatalf("the whole buffer: %v, %d spans", err, len(whole.PhaseSpans))
	}
	for n := range len(b) {
		var got analysis.DeviceReport
		if err := unpackSteps(b[:n], &got, nil); err == nil {
			t.Fatalf("a buffer cut to %d of %d bytes reads without an error", n, len(b))
		}
	}
	if err := unpackSteps(append(b[:len(b):len(b)], 0), new(analysis.DeviceReport), nil); err == nil {
		t.Errorf("a trailing byte reads without an error")
	}
	// No steps, one phase peak (step 0, phase p, 0 bytes at entry 0), no
	// spans: phase 3 (the optimizer) reads, 4 is no phase.
	one := func(p byte) []byte { return []byte{1, 2, 0, p, 0, 0, 0} }
	var ok analysis.DeviceReport
	if err := unpackSteps(one(3), &ok, nil); err != nil || len(ok.PhasePeaks) != 1 || ok.PhasePeaks[0].Phase != analysis.PhaseOptimizer {
		t.Errorf("% x: %v, %+v, want the optimizer's peak", one(3), err, ok.PhasePeaks)
	}
	// A huge count and an unknown phase.
	for _, bad := range [][]byte{{0xff, 0xff, 0xff, 0xff, 0x0f}, one(4)} {
		if err := unpackSteps(bad, new(analysis.DeviceReport), nil); err == nil {
			t.Errorf("% x reads without an error", bad)
		}
	}
}

// TestStepsReaderVarints reads varints written by encoding/binary, edge
// values and overflowing ones, and compares with binary.Uvarint/Varint.
func TestStepsReaderVarints(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, 1 << 40, -(1 << 40), math.MaxInt64, math.MinInt64} {
		r := &stepsReader{b: binary.AppendVarint(nil, v)}
		if got := r.varint(); got != v || r.err != nil || len(r.rest()) != 0 {
			t.Errorf("varint %d read as %d (%v, %d bytes left)", v, got, r.err, len(r.rest()))
		}
		u := uint64(v)
		r = &stepsReader{b: binary.AppendUvarint(nil, u)}
		if got := r.uvarint(); got != u || r.err != nil || len(r.rest()) != 0 {
			t.Errorf("uvarint %d read as %d (%v)", u, got, r.err)
		}
	}
	for _, bad := range [][]byte{
		{0x80},                         // cut short
		bytes.Repeat([]byte{0x80}, 10), // ten continuation bytes
		append(bytes.Repeat([]byte{0xff}, 9), 0x02),  // 2^64 and more
		append(bytes.Repeat([]byte{0x80}, 10), 0x01), // eleven bytes
	} {
		if _, n := binary.Uvarint(bad); n > 0 {
			t.Fatalf("% x: binary.Uvarint reads it: the case does not test", bad)
		}
		r := &stepsReader{b: bad}
		if r.uvarint(); r.err == nil {
			t.Errorf("% x read without an error", bad)
		}
	}
}

// BenchmarkUnpackSteps reads the packed steps of a device of many steps.
func BenchmarkUnpackSteps(b *testing.B) {
	d := &analysis.DeviceReport{}
	for k := range 20000 {
		d.Steps = append(d.Steps, analysis.Step{FirstEntry: k * 80, LastEntry: k*80 + 79, PeakAllocatedBytes: int64(k) << 20, PeakIndex: k*80 + 40, EndAllocatedBytes: 1 << 30, MicroBatches: 1})
		for _, ph := range []analysis.Phase{analysis.PhaseForward, analysis.PhaseBackward} {
			d.PhasePeaks = append(d.PhasePeaks, analysis.PhasePeak{Step: k, Phase: ph, PeakAllocatedBytes: int64(k) << 20, PeakIndex: k * 80})
			d.PhaseSpans = append(d.PhaseSpans, analysis.PhaseSpan{Step: k, Phase: ph, FirstEntry: k * 80, LastEntry: k*80 + 39})
		}
	}
	buf := packSteps(d)
	for b.Loop() {
		var got analysis.DeviceReport
		if err := unpackSteps(buf, &got, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestUnpackStepsPaced unpacks a device whose step lists are longer than
// a slice with a pause: the rows equal those read without one, and the
// pause is called once per whole slice of rows of the three lists
// together (a list shorter than a slice still counts towards one).
func TestUnpackStepsPaced(t *testing.T) {
	n := [3]int{2*stepsSlice + 5, stepsSlice, stepsSlice - 1}
	d := &analysis.DeviceReport{}
	d.Steps, d.PhasePeaks, d.PhaseSpans = make([]analysis.Step, n[0]), make([]analysis.PhasePeak, n[1]), make([]analysis.PhaseSpan, n[2])
	for i := range d.Steps {
		d.Steps[i] = analysis.Step{FirstEntry: 3 * i, LastEntry: 3*i + 2, PeakAllocatedBytes: int64(i) << 20, PeakIndex: 3*i + 1, MicroBatches: i % 4, Partial: i == 0}
	}
	for i := range d.PhasePeaks {
		d.PhasePeaks[i] = analysis.PhasePeak{Step: i / 3, Phase: analysis.PhaseBackward, PeakAllocatedBytes: int64(i), PeakIndex: i}
	}
	for i := range d.PhaseSpans {
		d.PhaseSpans[i] = analysis.PhaseSpan{Step: i / 3, Phase: analysis.Phases[i%len(analysis.Phases)], FirstEntry: i, LastEntry: i + 1}
	}
	b := packSteps(d)
	var plain, paced analysis.DeviceReport
	if err := unpackSteps(b, &plain, nil); err != nil {
		t.Fatal(err)
	}
	pauses := 0
	if err := unpackSteps(b, &paced, func() { pauses++ }); err != nil {
		t.Fatal(err)
	}
	if want := (n[0] + n[1] + n[2]) / stepsSlice; pauses != want {
		t.Errorf("%d pauses for lists of %v rows, want %d", pauses, n, want)
	}
	if !reflect.DeepEqual(plain, paced) || !reflect.DeepEqual(paced.Steps, d.Steps) ||
		!reflect.DeepEqual(paced.PhasePeaks, d.PhasePeaks) || !reflect.DeepEqual(paced.PhaseSpans, d.PhaseSpans) {
		t.Errorf("the paced unpack differs from the packed device or from the plain unpack")
	}
}
