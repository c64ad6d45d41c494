//go:build js && wasm

// Command snapworker is the snapshot page's Web Worker: a small Go wasm
// binary (GOOS=js GOARCH=wasm) that decodes and analyses a dropped
// snapshot.pickle off the page's main thread, so the page stays responsive
// on files of gigabytes.
//
// static/web/snapworker.js loads it and forwards messages. The contract is
// package oomscope/snapshot/load (messages.go): the page posts {json, file}
// where json is a load.Request and file the dropped File (for analyze and
// compare); the worker answers {json, buffers} made by load.EncodeResponse,
// with the buffers transferred. The File is read while it is decoded (the
// next bytes are read, by a nested worker, while the current ones are
// decoded: static/web/snapworker.js openStream and readSlice), and
// read again, a few bytes at a time, for the stacks of files with very many
// distinct stacks (see snapshot.Stacks): it is never held whole.
package main

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"syscall/js"
	"time"

	"oomscope/estimator"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/load"
)

// worker holds the analysis of the last file, for later queries.
type worker struct {
	file *load.File
	// requested is set by the first request other than warm (which stops
	// the warm-up); warming once the warm-up has started.
	requested atomic.Bool
	warming   bool
}

func main() {
	debug.SetGCPercent(load.GCPercent)
	// The page shows the diagnosis's sentences in GiB or GB: keep their
	// byte amounts as numbers in the JSON (analysis.Text).
	analysis.RawTextJSON = true
	w := &worker{}
	if js.Global().Get("name").String() == partName {
		// A part worker (split.go): it only answers part requests.
		js.Global().Call("snapworkerReady", js.FuncOf(func(this js.Value, args []js.Value) any {
			if len(args) > 0 {
				go decodePart(args[0])
			}
			return nil
		}))
		select {}
	}
	// The worker starts with the page: use the wait for a file to parse
	// the estimator's catalog (which the report of a snapshot holding
	// parameters matches them against) and to run the whole load path
	// once (warmUp); once the page asks (load.RequestWarm), get the
	// decoder and the analysis optimised (w.warm) until another request.
	go func() {
		estimator.Models()
		warmUp()
	}()
	js.Global().Call("snapworkerReady", js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) == 0 {
			return nil
		}
		if req, err := load.DecodeRequest(args[0].Get("json").String()); err == nil && req.Type == load.RequestWarm {
			if !w.warming {
				w.warming = true
				// The part worker for a large file, now that the page
				// has started (6 MB of memory while idle).
				prestartPart()
				go w.warm()
			}
			if req.ID > 0 {
				go postSample()
			}
			return nil
		}
		w.requested.Store(true)
		go w.handle(args[0])
		return nil
	}))
	select {}
}

// warmRepeats is how many times the warm-up loads the sample snapshot
// (warmSnapshot, 68 KB) again, before the generated files of load.WarmUp.
// A browser optimises a WebAssembly function once it has run for a while;
// the generated files leave a real snapshot's paths cold (memo gets,
// segments and blocks, the classification, the steps, the encoding):
// after WarmUp alone, the first drop of the 3.2 MB real snapshot had
// TurboFan compile 76 functions of the worker (450 ms of CPU), 20 after
// 48 loads of the sample (--trace-wasm-compilation-times in Chromium 156).
// Measured in the browser benchmark (settle 3 s, 10 rounds alternated in
// both orders, 2 cores at load 2-5), medians of drop to timeline without
// and with them: distinct-stacks 200 MB 1829 -> 1481 ms (the worker's
// analysis 414 -> 317 ms, its decode 1502 -> 1267), 55 MB 591 -> 565, the
// real 3.2 MB file 160 -> 161, real-stacks 55 MB 378 -> 369; the worker's
// peak memory the same.
const warmRepeats = 48

// warm runs load.WarmUp until done or until a request comes. It lets the
// browser's event loop run every few milliseconds (yielder), which
// delivers a request waiting there (snapworkerReady's handler sets
// w.requested), so that a file dropped during the warm-up waits little.
func (w *worker) warm() {
	if w.requested.Load() {
		return
	}
	// self.__oomscopeWarm says how far it got, for the e2e tests.
	state := js.Global().Set
	state("__oomscopeWarm", "running")
	yield := yielder()
	// The sample first, on the small heap (the generated files' garbage
	// would raise the worker's memory), then the generated files.
	err := load.ErrWarmUpStopped
	if repeatWarm(warmRepeats, w.requested.Load, yield, func() { loadSample(false) }) {
		err = load.WarmUp(w.requested.Load, yield)
	}
	switch {
	case err == nil:
		state("__oomscopeWarm", "done")
	case errors.Is(err, load.ErrWarmUpStopped):
		state("__oomscopeWarm", "stopped")
	default:
		state("__oomscopeWarm", "failed: "+err.Error())
	}
	runtime.GC()
}

// yieldEvery is the most time the warm-up runs before it lets the browser
// deliver a message.
const yieldEvery = 8 * time.Millisecond

// yielder returns load.WarmUp's yield: every yieldEvery, it waits for a
// message of its own through a MessageChannel, which returns to the
// browser's event loop (a sleep would, too, but a browser waits 4 ms for
// nested timers).
func yielder() func() {
	ch := make(chan struct{}, 1)
	mc := js.Global().Get("MessageChannel").New()
	mc.Get("port1").Set("onmessage", js.FuncOf(func(js.Value, []js.Value) any {
		ch <- struct{}{}
		return nil
	}))
	port := mc.Get("port2")
	last := time.Now()
	return func() {
		if time.Since(last) < yieldEvery {
			return
		}
		port.Call("postMessage", js.Null())
		<-ch
		last = time.Now()
	}
}

// warmSnapshot is a small generated training run (3 steps, parameters,
// optimizer state), for warmUp. Regenerate with go generate; the host test
// warm_test.go checks that it is the generator's output.
//
//go:generate go run ../../snapshot/cmd/gensnapshot -scenario training -o warm.pickle
//go:embed warm.pickle
var warmSnapshot []byte

// warmUp decodes, analyses and encodes warmSnapshot once (its summary
// too) and drops the result. The browser compiles a WebAssembly function on its first call
// (and optimises it later): without this, the first file paid for the
// decoder's, the analysis's and the encoder's compilation, which on the
// 3.2 MB real snapshot made decoding 278 ms and analysing 156 ms against
// 68-90 and 15-27 ms for the same file dropped again.
//
// Its answers (the summary, the result without the diagnoses, the
// diagnoses, the allocator state at the peak) are kept encoded, as the sample that the
// page asks for with load.RequestWarm (postSample).
func warmUp() {
	defer close(sampleReady)
	loadSample(true)
}

// loadSample loads warmSnapshot as warmUp says, its answers encoded and
// dropped; keep keeps them as the sample (sample).
func loadSample(keep bool) {
	r := bytes.NewReader(warmSnapshot)
	var msgs []encoded
	add := func(resp load.Response) {
		if js1, bufs, err := load.EncodeResponse(resp); err == nil {
			msgs = append(msgs, encoded{resp.Type, js1, bufs})
		}
	}
	first := func(res *load.Result) { add(load.Response{Type: load.ResponseResult, Result: res}) }
	// The summary is encoded too (the first file's summary no longer pays
	// for its encoder's compilation: 40-57 ms in node on the first file
	// after load.WarmUp), and kept in the sample: the page lays out and
	// draws its timeline once.
	summary := func(hs []analysis.Headline, tls [][]analysis.Point) {
		add(load.Response{Type: load.ResponseSummary, Summary: hs, Timelines: tls})
	}
	f, err := load.Load(load.Input{Name: "warm-up", R: r, Size: r.Size(), Source: bytes.NewReader(warmSnapshot)},
		// EarlyTimeline 1: the sample's summary has its timeline, for the
		// page's warm-up, though the sample is small.
		load.Options{Analysis: analysis.Options{TimelinePoints: load.TimelinePoints}, First: first, Summary: summary, EarlyTimeline: 1})
	if err != nil {
		return
	}
	add(load.Response{Type: load.ResponseDiagnosis, Diagnosis: load.NewDiagnosis(f)})
	if len(f.Report.Devices) > 0 {
		dr := &f.Report.Devices[0]
		if d := f.Analysis.Device(dr.Device); d != nil {
			st := d.StateAt(dr.PeakIndex, load.StateSegments, load.StateSites)
			add(load.Response{Type: load.ResponseState, State: &st})
		}
	}
	if len(msgs) == 4 && keep { // summary, result, diagnosis, state
		sample = msgs
	}
	runtime.GC()
}

// encoded is a response as load.EncodeResponse made it.
type encoded struct {
	typ, json string
	bufs      [][]byte
}

// sample is the warm-up snapshot's answers (warmUp), once sampleReady is
// closed; nil if the warm-up failed.
var (
	sample      []encoded
	sampleReady = make(chan struct{})
)

// postSample answers a warm request that has an id with the sample, each
// message marked as one: the page shows it nowhere, it runs its reading
// and drawing code on it once, which the browser compiles on first use.
func postSample() {
	<-sampleReady
	for _, m := range sample {
		postEncoded(m.typ, m.json, m.bufs, true)
	}
}

// post sends a response, transferring its buffers.
func post(r load.Response) {
	js1, bufs, err := load.EncodeResponse(r)
	if err != nil {
		r.Type = load.ResponseError
		js1, bufs, _ = load.EncodeResponse(load.ErrorResponse(r.ID, fmt.Errorf("encoding the answer: %v", err)))
	}
	postEncoded(r.Type, js1, bufs, false)
}

// postEncoded sends an encoded response of type typ, its buffers copied
// and transferred; sample marks the warm-up's (postSample).
func postEncoded(typ, js1 string, bufs [][]byte, sample bool) {
	arr := js.Global().Get("Array").New()
	for _, b := range bufs {
		u8 := js.Global().Get("Uint8Array").New(len(b))
		js.CopyBytesToJS(u8, b)
		arr.Call("push", u8.Get("buffer"))
	}
	msg := js.Global().Get("Object").New()
	msg.Set("type", typ) // for the page to see what it is before decoding it
	msg.Set("json", js1)
	msg.Set("buffers", arr)
	if sample {
		msg.Set("sample", true)
	}
	js.Global().Call("postMessage", msg, arr)
}

// handle answers one message; it reports every failure, a panic included,
// as an error message instead of ending the worker.
func (w *worker) handle(msg js.Value) {
	id := 0
	defer func() {
		if r := recover(); r != nil {
			post(load.ErrorResponse(id, &load.InternalError{Offset: -1, Stage: "query", Value: r, Stack: string(debug.Stack())}))
		}
	}()
	req, err := load.DecodeRequest(msg.Get("json").String())
	if err != nil {
		post(load.ErrorResponse(0, err))
		return
	}
	id = req.ID
	if req.Type == load.RequestAnalyze {
		mark("request")
	}
	resp, err := w.answer(req, msg.Get("file"))
	if err != nil {
		post(load.ErrorResponse(id, err))
		return
	}
	resp.ID = id
	if req.Type == load.RequestAnalyze {
		mark("answered")
	}
	post(resp)
	if req.Type == load.RequestAnalyze {
		mark("posted")
		// After the answer: a full collection is milliseconds to
		// hundreds of them (the live heap of a 1 GB file), which the
		// page need not wait for.
		publishMemory()
		prestartPart() // for the next file, if this one used it
	}
}

func (w *worker) answer(req load.Request, file js.Value) (load.Response, error) {
	switch req.Type {
	case load.RequestAnalyze:
		w.file = nil // let the collector take the previous analysis
		f, err := loadFile(req, file, load.TimelinePoints)
		if err != nil {
			return load.Response{}, err
		}
		w.file = f
		// The result went before the diagnoses (loadFile): only they are
		// left to send.
		return load.Response{Type: load.ResponseDiagnosis, Diagnosis: load.NewDiagnosis(f)}, nil
	case load.RequestRank:
		// One rank of many: answer with its compact row and keep nothing,
		// so that a pool of workers holds at most one analysis each.
		w.file = nil
		f, err := loadFile(req, file, load.RankPoints) // the row's line
		if err != nil {
			return load.Response{}, err
		}
		r := load.FileRank(f)
		publishMemory() // collects: the next file reuses this memory
		return load.Response{Type: load.ResponseRank, Rank: &r}, nil
	case load.RequestCompare:
		if w.file == nil {
			return load.Response{}, errors.New("analyse a first snapshot before comparing")
		}
		after, err := loadFile(req, file, 0)
		if err != nil {
			return load.Response{}, err
		}
		return load.Response{Type: load.ResponseCompare, Comparison: load.Compare(w.file, after)}, nil
	}
	if w.file == nil {
		return load.Response{}, errors.New("no snapshot loaded")
	}
	d := w.file.Analysis.Device(req.Device)
	if d == nil {
		return load.Response{}, fmt.Errorf("no device %d in this snapshot", req.Device)
	}
	if req.Type == load.RequestState {
		st := d.StateAt(req.Index, load.StateSegments, load.StateSites)
		return load.Response{Type: load.ResponseState, State: &st}, nil
	}
	z := d.Series(req.From, req.To, req.Points, analysis.DefaultSeriesSites)
	return load.Response{Type: load.ResponseSeries, Series: &z}, nil
}

// loadFile decodes and analyses the File of a request, posting progress,
// (but for a rank) the summary and (for analyze) the result without the
// devices' diagnoses under its id.
func loadFile(req load.Request, file js.Value, points int) (*load.File, error) {
	if !file.Truthy() {
		return nil, errors.New("no file data received")
	}
	size := int64(file.Get("size").Float())
	r := newBlobReader(file, 0, size)
	defer r.release()
	var last time.Time // of the last progress posted
	opt := load.Options{
		Analysis: analysis.Options{TimelinePoints: points},
		Progress: func(stage load.Stage, done, total int64) {
			if stage != load.StageDecode && req.Type == load.RequestAnalyze {
				mark(string(stage))
			}
			if req.Type == load.RequestRank && stage != load.StageDecode {
				return // the overview counts bytes read: the later stages add nothing to it
			}
			if stage == load.StageDecode && done > 0 && time.Since(last) < progressEvery {
				return
			}
			last = time.Now()
			post(load.Response{Type: load.ResponseProgress, ID: req.ID, Progress: &load.Progress{Stage: stage, Done: done, Total: total}})
		},
	}
	if req.Type != load.RequestRank { // a rank's row carries its headlines
		opt.EarlyTimeline = summaryTestEntries()
		opt.Summary = func(hs []analysis.Headline, tls [][]analysis.Point) {
			mark("summary")
			// With the timelines (an analyze request's; a comparison
			// has none): the page draws the memory curve at once.
			post(load.Response{Type: load.ResponseSummary, ID: req.ID, Summary: hs, Timelines: tls})
			summaryTest()
		}
	}
	if req.Type == load.RequestAnalyze {
		// The result but for the diagnoses, as soon as it is made: the
		// page draws the timeline, categories and sites meanwhile, and
		// the diagnoses follow alone (answer).
		opt.First = func(r *load.Result) {
			mark("first")
			post(load.Response{Type: load.ResponseResult, ID: req.ID, Result: r})
			mark("first_posted")
			diagnosisTest()
		}
	}
	if req.Type != load.RequestRank { // many ranks run in a pool of workers already
		if p := startSplit(req, file, size); p != nil {
			defer p.stop()
			opt.Split = p.split()
		}
	}
	return load.Load(load.Input{Name: req.Name, R: r, Size: size, Source: blobReaderAt{file}}, opt)
}

// diagnosisTest is a test-only knob of the e2e tests, read after the
// result without the diagnoses is posted: self.__oomscopeDiagnosisTest =
// {delayMs, fail} waits delayMs before the diagnosis (so that the page's
// state while diagnosing can be seen on a small file) and, with fail set,
// then fails as a bug in the diagnosis would (a panic, which load.Load
// reports as an internal error).
func diagnosisTest() {
	knobDelay("__oomscopeDiagnosisTest")
	if v := testKnob("__oomscopeDiagnosisTest", "fail"); v.Type() == js.TypeString && v.String() != "" {
		panic("diagnosis test: " + v.String())
	}
}

// summaryTest is a test-only knob of the e2e tests, read after the
// summary is posted: self.__oomscopeSummaryTest = {delayMs, earlyEntries}
// waits delayMs before the rest of the analysis, so that the page's state
// between the summary and the result can be seen on a small file, whose
// summary carries the timelines if earlyEntries says so
// (summaryTestEntries).
func summaryTest() { knobDelay("__oomscopeSummaryTest") }

// summaryTestEntries is load.Options.EarlyTimeline as the e2e tests'
// knob self.__oomscopeSummaryTest.earlyEntries sets it (0, load's
// default, without it).
func summaryTestEntries() int {
	if v := testKnob("__oomscopeSummaryTest", "earlyEntries"); v.Type() == js.TypeNumber {
		return v.Int()
	}
	return 0
}

// testKnob returns the field of the e2e tests' knob self[name] (undefined
// without the knob).
func testKnob(name, field string) js.Value {
	t := js.Global().Get(name)
	if !t.Truthy() {
		return js.Undefined()
	}
	return t.Get(field)
}

// knobDelay waits the delayMs of the e2e tests' knob self[name], if set.
func knobDelay(name string) {
	if v := testKnob(name, "delayMs"); v.Type() == js.TypeNumber {
		time.Sleep(time.Duration(v.Float() * float64(time.Millisecond)))
	}
}

// publishMemory sets self.__oomscopeMem to the Go heap's numbers after a
// collection (what the analysis keeps), for the browser benchmark.
func publishMemory() {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := js.Global().Get("Object").New()
	m.Set("heapInUse", float64(ms.HeapInuse))
	m.Set("heapAlloc", float64(ms.HeapAlloc))
	m.Set("sys", float64(ms.Sys))
	js.Global().Set("__oomscopeMem", m)
}

// mark records when the handling of an analyze request reached a point,
// in self.__oomscopeMarks[name] as milliseconds since the epoch
// (performance.timeOrigin + performance.now(), comparable with the page's
// marks), for the browser benchmark (OOMSCOPE_BENCH_TRACE); snapworker.js
// starts a new set with each file.
func mark(name string) {
	marks := js.Global().Get("__oomscopeMarks")
	if !marks.Truthy() {
		return
	}
	perf := js.Global().Get("performance")
	marks.Set(name, perf.Get("timeOrigin").Float()+perf.Call("now").Float())
}

// progressEvery is the least time between two progress messages while
// decoding (the decoder reports every load.ProgressEvery bytes: 250
// messages for a 1 GB file, each a page update, where 10 a second show
// the same progress).
const progressEvery = 100 * time.Millisecond

// firstChunk is the first slice read from the Blob, small so that decoding
// starts soon; each next slice (blobReader) is twice the one before, up to
// readChunk, and each next stream buffer up to streamChunk.
// Chrome reads a Blob at a cost per slice besides its bytes: reading a 200
// MB file alone took 1.7-2.1 s in slices of 4 MiB, 0.9-1.4 s in slices of
// 16 MiB, and the decoder of a file whose stacks repeat (real200) waited
// for it 0.8-1.2 s of its 2.0-2.3 s.
// A stream's buffers are used again, so their size costs only while they
// are new: the decoder waits for the first ones (the reader's first writes
// into them), and buffers of 2, 4, 4, 4 MiB came sooner than 2, 4, 8, 16,
// 16, 16 MiB: of its decoding, real200 waited for the file 123-469 ms
// (median 215) instead of 244-1155 (320), distinct55 71-235 (110) instead
// of 73-311 (160) (10 runs each, alternated, on a loaded 2-core machine).
const (
	readChunk   = 16 << 20
	streamChunk = 4 << 20
	firstChunk  = 1 << 20
)

// readAhead is how many slices are read in flight, or stream buffers
// filled or waiting to be read.
const readAhead = 3

// blobReader reads a Blob (the dropped File) a buffer at a time: while the
// decoder works on one, the browser reads the next. It reads through the
// reader worker's stream (snapworker.js openStream), whose buffers are
// filled again once read, else, where there is none or it failed, in
// slices (readSlice). A buffer stays a JavaScript ArrayBuffer: Read copies
// from it straight into its caller's buffer (copying it into Go memory
// first, then into the decoder's window, cost a memmove of the whole file:
// 93 ms of 1.1 s decoding a 208 MB file).
type blobReader struct {
	file       js.Value
	start      int64      // where the reader started
	off, size  int64      // off: where the current buffer ends
	ahead      int64      // where the next slice to start reading starts
	chunk      int64      // the size of the next slice (firstChunk)
	cur        js.Value   // the current buffer, a Uint8Array
	fromStream bool       // cur is a buffer of the stream
	at, n      int        // read position in cur, and its length
	next       []*pending // the slices being read, in order
	// stream is the reader's stream (null: slices), want its next buffer
	// asked for (nil: none).
	stream js.Value
	want   *pending
}

// pending is a slice read in flight.
type pending struct {
	ch       chan chunk
	ok, fail js.Func
}

// chunk is a slice read: a Uint8Array of n bytes.
type chunk struct {
	u8  js.Value
	n   int
	err error
}

// newBlobReader reads file (size bytes) from byte start on.
func newBlobReader(file js.Value, start, size int64) *blobReader {
	r := &blobReader{file: file, start: start, off: start, ahead: start, size: size, chunk: firstChunk, stream: js.Null()}
	if start+firstChunk < size {
		// The first slice on this thread (fill), the rest through the
		// stream.
		r.stream = js.Global().Call("openStream", file, float64(start+firstChunk), float64(size), 2*firstChunk, streamChunk, readAhead)
	}
	if !r.stream.Truthy() {
		r.fill()
		return r
	}
	end := start + firstChunk
	r.next = []*pending{readSlice(blobSlice(file, start, end), start, end)}
	r.ahead = r.size // no more slices
	r.want = await(r.stream.Call("next"))
	return r
}

// await waits for a promise of the stream's next buffer (a Uint8Array,
// null at the end).
func await(p js.Value) *pending {
	return promised(p, func(v js.Value) chunk {
		if !v.Truthy() {
			return chunk{u8: js.Null()}
		}
		return chunk{u8: v, n: v.Length()}
	})
}

// streamed moves to the stream's next buffer (Read hands each one back
// once read); if the stream failed or ended before the file did, the
// reader reads slices from there on.
func (r *blobReader) streamed() error {
	c := r.want.wait()
	r.want = nil
	if c.err == nil && c.n > 0 && r.off+int64(c.n) <= r.size {
		r.cur, r.at, r.n, r.fromStream = c.u8, 0, c.n, true
		r.off += int64(c.n)
		if r.off < r.size {
			r.want = await(r.stream.Call("next"))
		}
		return nil
	}
	if c.err == nil && c.n > 0 {
		return fmt.Errorf("reading the file: got more than its %d bytes", r.size-r.start)
	}
	r.stream.Call("close")
	r.stream = js.Null()
	r.ahead = r.off
	r.fill()
	return nil
}

// fill starts reading the next slices of the file in the background, up
// to readAhead in flight.
func (r *blobReader) fill() {
	for len(r.next) < readAhead && r.ahead < r.size {
		off, end := r.ahead, min(r.ahead+r.chunk, r.size)
		r.ahead, r.chunk = end, min(2*r.chunk, readChunk)
		// Through the worker's reader (snapworker.js readSlice), which
		// reads on its own thread while this one decodes; the first slice
		// here, as this thread has nothing else to do until it comes (the
		// round trip through the reader made it come later).
		var read js.Value
		if off == r.start {
			read = blobSlice(r.file, off, end)
		} else {
			read = js.Global().Call("readSlice", r.file, float64(off), float64(end))
		}
		r.next = append(r.next, readSlice(read, off, end))
	}
}

// blobSlice starts reading bytes [off, end) of a Blob on this thread.
func blobSlice(file js.Value, off, end int64) js.Value {
	return file.Call("slice", float64(off), float64(end)).Call("arrayBuffer")
}

// readSlice waits for read, a promise of bytes [off, end) of the file as an
// ArrayBuffer.
func readSlice(read js.Value, off, end int64) *pending {
	return promised(read, func(v js.Value) chunk {
		u8 := js.Global().Get("Uint8Array").New(v)
		n := u8.Length()
		var err error
		if int64(n) != end-off {
			err = fmt.Errorf("reading the file: got %d bytes at %d, want %d", n, off, end-off)
		}
		return chunk{u8: u8, n: n, err: err}
	})
}

// promised waits for a promise of bytes, made a chunk by got.
func promised(read js.Value, got func(js.Value) chunk) *pending {
	p := &pending{ch: make(chan chunk, 1)}
	p.ok = js.FuncOf(func(this js.Value, args []js.Value) any {
		v := js.Undefined()
		if len(args) > 0 {
			v = args[0]
		}
		p.ch <- got(v)
		return nil
	})
	p.fail = js.FuncOf(func(this js.Value, args []js.Value) any {
		msg := "the browser could not read the file"
		if len(args) > 0 && args[0].Truthy() {
			msg += ": " + args[0].Call("toString").String()
		}
		p.ch <- chunk{err: errors.New(msg)}
		return nil
	})
	js.Global().Call("settled", read, p.ok, p.fail)
	return p
}

// wait returns the slice once read.
func (p *pending) wait() chunk {
	c := <-p.ch
	p.ok.Release()
	p.fail.Release()
	return c
}

// Read implements io.Reader.
func (r *blobReader) Read(b []byte) (int, error) {
	for r.at == r.n && len(r.next) == 0 && r.want != nil {
		if err := r.streamed(); err != nil {
			r.release()
			return 0, err
		}
	}
	if r.at == r.n {
		if len(r.next) == 0 {
			return 0, io.EOF
		}
		first := r.off == 0
		c := r.next[0].wait()
		r.next = r.next[1:]
		if first {
			mark("slice0")
		}
		if c.err != nil {
			r.release() // what is still in flight
			return 0, c.err
		}
		r.cur, r.at, r.n, r.fromStream = c.u8, 0, c.n, false
		r.off += int64(c.n)
		r.fill()
	}
	m := min(len(b), r.n-r.at)
	if r.at == 0 && m == r.n {
		js.CopyBytesToGo(b, r.cur)
	} else {
		js.CopyBytesToGo(b[:m], r.cur.Call("subarray", r.at, r.at+m))
	}
	if r.at += m; r.at == r.n {
		if r.fromStream && r.stream.Truthy() {
			r.stream.Call("giveBack", r.cur) // to be filled again
		}
		r.cur = js.Undefined() // let the browser take the slice
	}
	return m, nil
}

// release waits for the reads still in flight (to release their
// callbacks); the reader then reads nothing more.
func (r *blobReader) release() {
	for _, p := range r.next {
		p.wait()
	}
	if r.stream.Truthy() {
		r.stream.Call("close") // resolves the next buffer asked for
		r.stream = js.Null()
	}
	if r.want != nil {
		r.want.wait()
		r.want = nil
	}
	r.next, r.ahead = nil, r.size
	r.cur = js.Undefined()
}

// blobReaderAt reads any part of a Blob (for the stacks read again).
type blobReaderAt struct{ file js.Value }

// ReadAt implements io.ReaderAt.
func (r blobReaderAt) ReadAt(b []byte, off int64) (int, error) {
	end := off + int64(len(b))
	// A few bytes at a time: on this thread, without the reader's round trip.
	c := readSlice(blobSlice(r.file, off, end), off, end).wait()
	if c.err != nil {
		return 0, c.err
	}
	return js.CopyBytesToGo(b, c.u8), nil
}
