package main

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
)

// writeJSON writes v as json.Encoder with SetIndent("", "  ") does, byte
// for byte, but faster: a snapshot's report can be 80 MB of JSON (its
// steps and phase spans), and the encoder's indentation steps a scanner
// per byte (0.6 s of a 1 GB file's 4 s). v is marshalled compactly and
// indented as it is written (see indenter).
func writeJSON(w io.Writer, v any) error {
	in := newIndenter(w)
	// Encode hands the compact document and its newline to one Write
	// (json.Marshal would copy it first: 48 MB for the 1 GiB
	// distinct-stacks file).
	if err := json.NewEncoder(in).Encode(v); err != nil {
		return err
	}
	return in.flush()
}

// indenter writes compact JSON (as json.Marshal makes it: no space
// outside strings) indented as json.Indent(dst, src, "", "  ") would: a
// newline and two spaces per level after '{', '[' and ',', none inside an
// empty object or array, ": " after a key. Strings are copied whole; a
// newline ends a document. It appends to a block and writes the block
// when full: a report is millions of short tokens, and a bufio call per
// token took half the time. Each Write must hold whole tokens (and an
// empty object or array whole).
type indenter struct {
	w     io.Writer
	out   []byte
	depth int
	err   error
}

// indentBlock is the size of the blocks an indenter writes.
const indentBlock = 256 << 10

func newIndenter(w io.Writer) *indenter {
	return &indenter{w: w, out: make([]byte, 0, indentBlock)}
}

// Write indents src: it always takes all of it; the first error of the
// underlying writer comes back from flush.
func (in *indenter) Write(src []byte) (int, error) {
	const spaces = "\n                                                                "
	out, depth := in.out, in.depth
	newline := func(depth int) {
		n := 1 + 2*depth
		if n <= len(spaces) {
			out = append(out, spaces[:n]...)
			return
		}
		out = append(out, '\n')
		for n--; n > 0; n -= len(spaces) - 1 {
			out = append(out, spaces[1:min(n+1, len(spaces))]...)
		}
	}
	for i := 0; i < len(src); {
		if len(out) >= cap(out)-256 {
			in.write(out)
			out = out[:0]
		}
		c := src[i]
		switch c {
		case '"':
			j := stringEnd(src, i)
			if len(out)+j-i > cap(out) {
				in.write(out)
				in.write(src[i:j])
				out = out[:0]
			} else {
				out = append(out, src[i:j]...)
			}
			i = j
			continue
		case '{', '[':
			out = append(out, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				out = append(out, src[i+1])
				i += 2
				continue
			}
			depth++
			newline(depth)
		case ',':
			out = append(out, c)
			newline(depth)
		case ':':
			out = append(out, ':', ' ')
		case '}', ']':
			depth--
			newline(depth)
			out = append(out, c)
		case '\n':
			out = append(out, c)
		default:
			// A number or a literal: up to the next punctuation.
			j := i + 1
			for j < len(src) && !isJSONPunct(src[j]) {
				j++
			}
			out = append(out, src[i:j]...)
			i = j
			continue
		}
		i++
	}
	in.out, in.depth = out, depth
	return len(src), nil
}

// raw appends b, already indented at the indenter's depth, as it is.
func (in *indenter) raw(b []byte) {
	if len(in.out)+len(b) > cap(in.out) {
		in.write(in.out)
		in.out = in.out[:0]
		if len(b) > cap(in.out) {
			in.write(b)
			return
		}
	}
	in.out = append(in.out, b...)
}

// write writes b to the underlying writer unless it failed before.
func (in *indenter) write(b []byte) {
	if in.err == nil {
		_, in.err = in.w.Write(b)
	}
}

// flush writes what is left and returns the first error of the
// underlying writer.
func (in *indenter) flush() error {
	in.write(in.out)
	in.out = in.out[:0]
	return in.err
}

// stringEnd returns the index after the string that starts at src[i] (a
// quote): after the first quote not escaped, that is not after an odd
// number of backslashes (in JSON a backslash is only ever an escape's
// first byte, "\\" included); len(src) if there is none.
func stringEnd(src []byte, i int) int {
	for j := i + 1; ; {
		k := bytes.IndexByte(src[j:], '"')
		if k < 0 {
			return len(src)
		}
		j += k
		n := 0
		for src[j-1-n] == '\\' {
			n++
		}
		j++
		if n%2 == 0 {
			return j
		}
	}
}

// isJSONPunct reports whether c ends a number or literal in compact JSON
// (a newline: the document).
func isJSONPunct(c byte) bool { return c == ',' || c == '}' || c == ']' || c == ':' || c == '\n' }

// writeSnapshotJSON writes v as writeJSON does, byte for byte, with most
// of the marshalling on other goroutines where there is a second core.
// Each device's steps, phase peaks and phase spans are 64 of the 83 MB of
// the 1 GiB distinct-stacks file's report (0.15-0.3 s to marshal and
// indent on one core): they are cut into runs of partRun elements,
// written by workers, already indented (appendRun), into reused buffers,
// while this goroutine marshals the rest of the report with them as null
// and indents it, putting each part's runs, in order, in place of its
// null. Memory stays a few buffers: the output is written as it is
// indented.
func writeSnapshotJSON(w io.Writer, v snapshotJSON) error {
	if !snapshot.Concurrent() || v.Report == nil {
		return writeJSON(w, v)
	}
	src, nulls, parts, err := stripParts(v)
	if err != nil {
		return err
	}
	if len(nulls) != len(parts) {
		// Not the document expected (a report type changed?): the
		// parts are not used.
		return writeJSON(w, v)
	}
	m := startMarshal(parts)
	defer m.stop()
	in := newIndenter(w)
	at := 0
	for i, runs := range parts {
		in.Write(src[at:nulls[i]])
		if err := m.write(in, runs); err != nil {
			return err
		}
		at = nulls[i] + len("null")
	}
	in.Write(src[at:])
	return in.flush()
}

// stripParts marshals v compactly with its devices' parts as null and
// returns it, where the nulls are (partNulls) and the parts' runs, in
// document order.
func stripParts(v snapshotJSON) (src []byte, nulls []int, parts [][]*jsonRun, err error) {
	rep := *v.Report
	rep.Devices = slices.Clone(rep.Devices)
	for i := range rep.Devices {
		d := &rep.Devices[i]
		parts = append(parts, sliceRuns(d.Steps), sliceRuns(d.PhasePeaks), sliceRuns(d.PhaseSpans))
		d.Steps, d.PhasePeaks, d.PhaseSpans = nil, nil, nil
	}
	v.Report = &rep
	var doc bytes.Buffer
	if err := json.NewEncoder(&doc).Encode(v); err != nil {
		return nil, nil, nil, err
	}
	return doc.Bytes(), partNulls(doc.Bytes()), parts, nil
}

// partDepth is the depth of a device's keys in the snapshot document (the
// object, its "devices" array, the device).
const partDepth = 3

// partKeys are the keys whose values writeSnapshotJSON marshals apart, in
// the order DeviceReport has them.
var partKeys = []string{`"steps"`, `"phase_peaks"`, `"phase_spans"`}

// partNulls returns where the nulls of the part keys' values are in src,
// compact JSON: at partDepth only, in turn for each device (other keys of
// these names, deeper or in strings, are not them).
func partNulls(src []byte) []int {
	var at []int
	depth, next := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '"':
			j := stringEnd(src, i)
			if depth == partDepth && bytes.Equal(src[i:j], []byte(partKeys[next])) && bytes.HasPrefix(src[j:], []byte(":null")) {
				at = append(at, j+1)
				next = (next + 1) % len(partKeys)
			}
			i = j - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
	}
	return at
}

// partRun is the number of elements of a part marshalled at once.
const partRun = 2048

// jsonRun is a run of a part's elements to marshal (v, a slice), or a
// part that is nil or empty (lit, its JSON).
type jsonRun struct {
	v    any
	lit  string
	done chan struct{}
	out  []byte // v's elements, indented (appendRun)
	err  error
	p    any // what marshalling v panicked with
}

// sliceRuns cuts s into runs of partRun elements.
func sliceRuns[T any](s []T) []*jsonRun {
	switch {
	case s == nil:
		return []*jsonRun{{lit: "null"}}
	case len(s) == 0:
		return []*jsonRun{{lit: "[]"}}
	}
	var runs []*jsonRun
	for lo := 0; lo < len(s); lo += partRun {
		runs = append(runs, &jsonRun{v: s[lo:min(lo+partRun, len(s))], done: make(chan struct{})})
	}
	return runs
}

// marshaller is the workers marshalling the runs of parts in order.
type marshaller struct {
	free chan []byte
	quit chan struct{}
	wg   sync.WaitGroup
}

// startMarshal starts a worker per core on the runs of parts. A worker
// takes a free buffer, then the next run: the runs are taken in order,
// each with its buffer, so the one written next is never left waiting
// for a buffer the later ones hold.
func startMarshal(parts [][]*jsonRun) *marshaller {
	workers := runtime.GOMAXPROCS(0)
	m := &marshaller{free: make(chan []byte, 2*workers+2), quit: make(chan struct{})}
	var todo []*jsonRun
	for _, runs := range parts {
		for _, r := range runs {
			if r.done != nil {
				todo = append(todo, r)
			}
		}
	}
	work := make(chan *jsonRun, len(todo))
	for _, r := range todo {
		work <- r
	}
	close(work)
	for range cap(m.free) {
		m.free <- nil
	}
	for range workers {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			for {
				var buf []byte
				select {
				case buf = <-m.free:
				case <-m.quit:
					return
				}
				r, ok := <-work
				if !ok {
					return
				}
				func() {
					defer func() { r.p = recover() }()
					r.out, r.err = appendRun(buf[:0], r.v)
				}()
				close(r.done)
			}
		}()
	}
	return m
}

// write indents a part, its runs in order, into in: a run's elements
// without its brackets, runs joined by a comma.
func (m *marshaller) write(in *indenter, runs []*jsonRun) error {
	if runs[0].done == nil {
		in.Write([]byte(runs[0].lit))
		return nil
	}
	in.Write([]byte{'['})
	if in.depth != elemDepth {
		// partNulls found the part's key at partDepth.
		panic("writeSnapshotJSON: a part's elements at depth " + strconv.Itoa(in.depth))
	}
	for i, r := range runs {
		<-r.done
		if r.p != nil {
			panic(r.p)
		}
		if r.err != nil {
			return r.err
		}
		if i > 0 {
			in.Write([]byte{','})
		}
		in.raw(r.out)
		m.free <- r.out
		r.out = nil
	}
	in.Write([]byte{']'})
	return nil
}

// stop ends the workers (all runs done or not) and waits for them.
func (m *marshaller) stop() {
	close(m.quit)
	m.wg.Wait()
}

// elemDepth is the depth of a part's elements in the snapshot document
// (inside the part's array).
const elemDepth = partDepth + 1

// appendRun appends the elements of run v (a slice) to b as an indenter
// at elemDepth writes them: objects indented, separated by a comma and a
// new line, no brackets around them. The parts' element types are
// written directly, as encoding/json would write them (appendStep and
// friends; TestAppendRunAsEncoder holds them to it); anything else, or a
// phase encoding/json refuses, is marshalled and indented.
func appendRun(b []byte, v any) ([]byte, error) {
	switch s := v.(type) {
	case []analysis.Step:
		for i := range s {
			b = appendStep(elemSep(b, i), &s[i])
		}
		return b, nil
	case []analysis.PhasePeak:
		if phasesOK(s, func(p *analysis.PhasePeak) analysis.Phase { return p.Phase }) {
			for i := range s {
				b = appendPhasePeak(elemSep(b, i), &s[i])
			}
			return b, nil
		}
	case []analysis.PhaseSpan:
		if phasesOK(s, func(p *analysis.PhaseSpan) analysis.Phase { return p.Phase }) {
			for i := range s {
				b = appendPhaseSpan(elemSep(b, i), &s[i])
			}
			return b, nil
		}
	}
	var c bytes.Buffer
	if err := json.NewEncoder(&c).Encode(v); err != nil {
		return b, err
	}
	src := c.Bytes()
	src = src[1 : len(src)-2] // '[' … "]\n"
	out := bytes.NewBuffer(b)
	in := newIndenter(out)
	in.depth = elemDepth
	in.Write(src)
	if err := in.flush(); err != nil {
		return b, err
	}
	return out.Bytes(), nil
}

// phasesOK reports whether every element's phase has a name (else
// encoding/json's error is wanted).
func phasesOK[T any](s []T, phase func(*T) analysis.Phase) bool {
	for i := range s {
		if _, err := phase(&s[i]).MarshalText(); err != nil {
			return false
		}
	}
	return true
}

// New lines and indentation of a part's elements and of their fields.
const (
	elemLine  = "\n        "   // elemDepth
	fieldLine = "\n          " // elemDepth+1
)

// elemSep appends what comes before element i of a run: nothing before
// the first (the indenter wrote the line), else a comma and a new line.
func elemSep(b []byte, i int) []byte {
	if i > 0 {
		b = append(b, ',')
		b = append(b, elemLine...)
	}
	return b
}

// key appends an object's key, on a line of its own: first says whether
// it opens the object.
func key(b []byte, name string, first bool) []byte {
	if first {
		b = append(b, '{')
	} else {
		b = append(b, ',')
	}
	b = append(b, fieldLine...)
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':', ' ')
}

// closeElem appends the end of an element's object.
func closeElem(b []byte) []byte { return append(append(b, elemLine...), '}') }

// appendStep appends s as encoding/json writes an analysis.Step, indented.
func appendStep(b []byte, s *analysis.Step) []byte {
	b = strconv.AppendInt(key(b, "first_entry", true), int64(s.FirstEntry), 10)
	b = strconv.AppendInt(key(b, "last_entry", false), int64(s.LastEntry), 10)
	b = strconv.AppendInt(key(b, "peak_allocated_bytes", false), s.PeakAllocatedBytes, 10)
	b = strconv.AppendInt(key(b, "peak_index", false), int64(s.PeakIndex), 10)
	b = strconv.AppendInt(key(b, "end_allocated_bytes", false), s.EndAllocatedBytes, 10)
	if s.Partial {
		b = append(key(b, "partial", false), "true"...)
	}
	b = strconv.AppendInt(key(b, "micro_batches", false), int64(s.MicroBatches), 10)
	if s.EvalPasses != 0 {
		b = strconv.AppendInt(key(b, "eval_passes", false), int64(s.EvalPasses), 10)
	}
	return closeElem(b)
}

// appendPhase appends a phase's name as a JSON string (it has one:
// phasesOK).
func appendPhase(b []byte, p analysis.Phase) []byte {
	return append(append(append(b, '"'), p.String()...), '"')
}

// appendPhasePeak appends p as encoding/json writes an
// analysis.PhasePeak, indented.
func appendPhasePeak(b []byte, p *analysis.PhasePeak) []byte {
	b = strconv.AppendInt(key(b, "step", true), int64(p.Step), 10)
	b = appendPhase(key(b, "phase", false), p.Phase)
	b = strconv.AppendInt(key(b, "peak_allocated_bytes", false), p.PeakAllocatedBytes, 10)
	b = strconv.AppendInt(key(b, "peak_index", false), int64(p.PeakIndex), 10)
	return closeElem(b)
}

// appendPhaseSpan appends p as encoding/json writes an
// analysis.PhaseSpan, indented.
func appendPhaseSpan(b []byte, p *analysis.PhaseSpan) []byte {
	b = strconv.AppendInt(key(b, "step", true), int64(p.Step), 10)
	b = appendPhase(key(b, "phase", false), p.Phase)
	b = strconv.AppendInt(key(b, "first_entry", false), int64(p.FirstEntry), 10)
	b = strconv.AppendInt(key(b, "last_entry", false), int64(p.LastEntry), 10)
	return closeElem(b)
}
