package load

import (
	"encoding/binary"
	"errors"

	"oomscope/snapshot/analysis"
)

// The steps, phase peaks and phase spans of a device travel to the page in a
// buffer of their own, as the timeline does: a trace of many short steps has
// tens of thousands of each, and reading them from JSON in the page's
// WebAssembly took most of a second on the main thread (18,726 steps: 9.2 MB
// of JSON, 0.6 s to read; packed: a few hundred kB, milliseconds).
//
// The buffer holds varints: each list as its length + 1 (0 for a nil list,
// so that null and [] survive the trip) and its rows field by field, a
// phase as its number (analysis.Phase). A field
// added to analysis.Step, PhasePeak or PhaseSpan must be added here too:
// TestResponsesRoundTrip fails until it is.

// packSteps writes d's steps, phase peaks and phase spans into a buffer.
// It runs in the worker between the analysis and the answer (18,726 steps:
// 1.4 MB), so it writes into one buffer sized beforehand, without growing
// it.
func packSteps(d *analysis.DeviceReport) []byte {
	size := binary.MaxVarintLen64 * (3 + 8*len(d.Steps) + 4*len(d.PhasePeaks) + 4*len(d.PhaseSpans))
	b := make([]byte, 0, size)
	count := func(n int, isNil bool) {
		if isNil {
			b = binary.AppendUvarint(b, 0)
			return
		}
		b = binary.AppendUvarint(b, uint64(n)+1)
	}
	count(len(d.Steps), d.Steps == nil)
	for _, s := range d.Steps {
		b = binary.AppendVarint(b, int64(s.FirstEntry))
		b = binary.AppendVarint(b, int64(s.LastEntry))
		b = binary.AppendVarint(b, s.PeakAllocatedBytes)
		b = binary.AppendVarint(b, int64(s.PeakIndex))
		b = binary.AppendVarint(b, s.EndAllocatedBytes)
		b = binary.AppendVarint(b, int64(s.MicroBatches))
		b = binary.AppendVarint(b, int64(s.EvalPasses))
		partial := uint64(0)
		if s.Partial {
			partial = 1
		}
		b = binary.AppendUvarint(b, partial)
	}
	count(len(d.PhasePeaks), d.PhasePeaks == nil)
	for _, p := range d.PhasePeaks {
		b = binary.AppendVarint(b, int64(p.Step))
		b = binary.AppendUvarint(b, uint64(p.Phase))
		b = binary.AppendVarint(b, p.PeakAllocatedBytes)
		b = binary.AppendVarint(b, int64(p.PeakIndex))
	}
	count(len(d.PhaseSpans), d.PhaseSpans == nil)
	for _, p := range d.PhaseSpans {
		b = binary.AppendVarint(b, int64(p.Step))
		b = binary.AppendUvarint(b, uint64(p.Phase))
		b = binary.AppendVarint(b, int64(p.FirstEntry))
		b = binary.AppendVarint(b, int64(p.LastEntry))
	}
	return b
}

var errStepsBuffer = errors.New("the steps buffer of the worker's answer is cut short or malformed")

// stepsReader reads the varints of a steps buffer; the first error sticks.
// It keeps its place as an offset into b, never reslicing b: the reader is
// on the heap, and storing a slice's pointer in it on each of the hundreds
// of thousands of varints went through the garbage collector's write
// barrier whenever a collection was marking, which the big allocations of
// a result start (18,726 steps: two thirds of the main thread's 33 ms of
// unpackSteps in Chromium's profile were write barriers).
type stepsReader struct {
	b   []byte
	off int
	err error
}

// rest is the part of the buffer not read yet.
func (r *stepsReader) rest() []byte { return r.b[r.off:] }

// fail records a malformed buffer and leaves nothing to read.
func (r *stepsReader) fail() {
	r.err, r.off = errStepsBuffer, len(r.b)
}

// uvarint reads an unsigned varint as binary.Uvarint does, without a call
// per byte: the page's WebAssembly is built without inlining, and a trace
// of many steps has hundreds of thousands of these (18,726 steps: 47 ms of
// the main thread through binary.Uvarint).
func (r *stepsReader) uvarint() uint64 {
	var x uint64
	var s uint
	for i, c := range r.b[r.off:] {
		if i == binary.MaxVarintLen64 {
			break // overflow
		}
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break // overflow
			}
			r.off += i + 1
			return x | uint64(c)<<s
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	r.fail()
	return 0
}

// varint reads a signed (zig-zag) varint as binary.Varint does.
func (r *stepsReader) varint() int64 {
	ux := r.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

// length reads a list's length + 1; a length that the rest of the buffer
// cannot hold (each row takes at least minRow bytes) is an error.
func (r *stepsReader) length(minRow int) (n int, isNil bool) {
	v := r.uvarint()
	if v == 0 {
		return 0, true
	}
	if v-1 > uint64(len(r.rest())/minRow) {
		r.fail()
		return 0, false
	}
	return int(v - 1), false
}

// stepsSlice is how many rows of a steps buffer unpackSteps reads between
// calls of its pause, counted over its three lists together: about 2-3 ms
// of the page's WebAssembly. A 1 GB file's 485,000 rows took one 90 ms
// task; a pause every 32,768 rows of each list still left the 200 MB
// distinct-stacks file's diagnosis (lists each under a slice, 100,000 rows
// in all) one task of 21 ms of CPU.
const stepsSlice = 1 << 13

// unpackSteps reads a buffer made by packSteps into d, calling pause (if
// not nil) after each stepsSlice rows, counted over its lists together.
func unpackSteps(b []byte, d *analysis.DeviceReport, pause func()) error {
	r := &stepsReader{b: b}
	rows := 0
	row := func() {
		if rows++; pause != nil && rows%stepsSlice == 0 {
			pause()
		}
	}
	phase := func() analysis.Phase {
		p := r.uvarint()
		if p >= uint64(len(analysis.Phases)) {
			r.err = errStepsBuffer
			return 0
		}
		return analysis.Phase(p)
	}
	n, isNil := r.length(8)
	if !isNil {
		d.Steps = make([]analysis.Step, n)
	}
	for i := range n {
		s := &d.Steps[i]
		s.FirstEntry, s.LastEntry = int(r.varint()), int(r.varint())
		s.PeakAllocatedBytes, s.PeakIndex = r.varint(), int(r.varint())
		s.EndAllocatedBytes = r.varint()
		s.MicroBatches, s.EvalPasses = int(r.varint()), int(r.varint())
		s.Partial = r.uvarint() == 1
		row()
	}
	n, isNil = r.length(4)
	if !isNil {
		d.PhasePeaks = make([]analysis.PhasePeak, n)
	}
	for i := range n {
		p := &d.PhasePeaks[i]
		p.Step, p.Phase = int(r.varint()), phase()
		p.PeakAllocatedBytes, p.PeakIndex = r.varint(), int(r.varint())
		row()
	}
	n, isNil = r.length(4)
	if !isNil {
		d.PhaseSpans = make([]analysis.PhaseSpan, n)
	}
	for i := range n {
		p := &d.PhaseSpans[i]
		p.Step, p.Phase = int(r.varint()), phase()
		p.FirstEntry, p.LastEntry = int(r.varint()), int(r.varint())
		row()
	}
	if r.err == nil && len(r.rest()) != 0 {
		r.err = errStepsBuffer
	}
	return r.err
}
