//go:build js && wasm

package main

// The split decode (issue #9): on a large file, the analysis worker starts
// a part worker (a second instance of this program, static/web/snapworker.js
// startPart) that decodes the trace from about the middle of the file on
// (load.LoadPart) while the analysis worker decodes from the start; at the
// split point the analysis worker takes the part (snapshot.Split). The
// decoder's result is the same whatever the part worker does, so a part
// worker that fails, lies or falls silent only costs time: its error, or
// partStall without a word from it, makes the analysis worker decode on
// alone.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall/js"
	"time"

	"oomscope/snapshot"
	"oomscope/snapshot/load"
)

// partName is the part worker's name (snapworker.js partName).
const partName = "oomscope-part"

// partStall is how long the analysis worker waits for a part worker that
// sends nothing (it sends progress every progressEvery while decoding)
// before it decodes on alone.
const partStall = 5 * time.Second

// partRun is the part worker of one load, seen from the analysis worker.
type partRun struct {
	worker js.Value
	onmsg  js.Func
	at     int64 // where the part starts
	stall  time.Duration
	start  chan int64    // the part's first byte
	part   chan js.Value // the part marshalled (a Uint8Array)
	failed chan struct{}

	mu      sync.Mutex
	err     error // why failed was closed
	stopped bool
	heard   atomic.Int64 // when it last sent something, in UnixNano
	began   time.Time    // when the part was asked for
	stats   js.Value     // self.__oomscopeSplitStats
}

// startSplit starts the part worker of a file of size bytes if the split
// pays: the decoder would split a file of this size (snapshot.SplitAt) and
// the browser has cores to spare (partCores). The e2e tests set
// self.__oomscopeSplitTest = {at, fail, stallMs} to split smaller files
// on any number of cores (at: the split byte), make the part worker fail (fail: a
// load.PartFail*) and wait less for a silent one (stallMs).
func startSplit(req load.Request, file js.Value, size int64) *partRun {
	at, stall, fail := partAt(size), partStall, ""
	forced := false
	if t := js.Global().Get("__oomscopeSplitTest"); t.Truthy() {
		if v := t.Get("at"); v.Type() == js.TypeNumber {
			at, forced = int64(v.Float()), true
		}
		if v := t.Get("stallMs"); v.Type() == js.TypeNumber {
			stall = time.Duration(v.Float() * float64(time.Millisecond))
		}
		if v := t.Get("fail"); v.Type() == js.TypeString {
			fail = v.String()
		}
	}
	stats := js.Global().Get("Object").New()
	js.Global().Set("__oomscopeSplitStats", stats)
	if at <= 0 || at >= size || !forced && !spareCores() {
		return nil
	}
	p := &partRun{at: at, stall: stall, start: make(chan int64, 1), part: make(chan js.Value, 1), failed: make(chan struct{}), stats: stats}
	p.began = time.Now()
	p.heard.Store(p.began.UnixNano())
	p.onmsg = js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) > 0 {
			p.receive(args[0])
		}
		return nil
	})
	json := load.EncodeRequest(load.Request{Type: load.RequestPart, ID: req.ID, Name: req.Name, At: at, Fail: fail})
	w := js.Global().Call("startPart", file, json, p.onmsg)
	if !w.Truthy() {
		p.onmsg.Release()
		return nil
	}
	p.worker = w
	stats.Set("at", float64(at))
	return p
}

// partAt is where the part worker starts on a file of size bytes (-1: no
// split): later than snapshot.SplitAt's middle, as the part worker has
// costs the analysis worker has not: its prefix (about 150 ms), then
// marshalling, the copy between workers and unmarshalling (about 1 ms a
// MB of its part, against 6-7 ms a MB of decoding): 0.54 of the file
// plus 12 MiB balances them. Measured (a loaded 2-core machine): on the
// 209 MB distinct-stacks file, drop to timeline in three alternating
// rounds 2106-2632 ms at 0.50 of the file, 1677-2346 ms at 0.58,
// 1784-2326 ms at 0.65 (at 0.58 the part came 86 ms before the analysis
// worker asked for it); on the 1.07 GB one, the analysis worker asked
// 0.76 s after the part came at 0.58, 0.70 s before it came at 0.53.
func partAt(size int64) int64 {
	if snapshot.SplitAt(size) < 0 {
		return -1
	}
	return min(size/100*54+12<<20, size-1)
}

// partCores is the fewest cores (navigator.hardwareConcurrency) with which
// a part worker is used. Two are not enough, though two Go-WebAssembly
// workers do run in parallel there (a CPU-bound loop: 0.66 s alone, 0.69
// and 0.82 s each for two at once): while both workers decode, Chrome's
// IO thread and thread pool reading the file, the reader workers, the
// renderer's thread pool and the page take about 0.6 core, which leaves the
// two decoders about 1.25 cores between them, against 0.94 core for one
// decoder alone; the split's own work (the part's prefix, marshalling,
// taking the part) eats most of the difference. Measured on a 2-core
// machine (headless Chromium, the other sessions' load held down),
// alternating the same code with the split on 2 cores for files of 128 MiB
// or more (part worker started with the file) and without, drop to
// timeline, min/median of 3: distinct 1.07 GB 6348/7161 -> 5717/7100 ms,
// 209 MB 1422/1435 -> 1733/2019 ms; real 1.06 GB 3598/4005 -> 3926/4280
// ms. Earlier (part worker started ahead): the 3.2 MB file 151 -> 195 ms.
// Natively the same split takes the CLI from 3.0 to 2.0 s on the 1 GiB
// file.
const partCores = 4

// spareCores reports whether the browser has cores to spare for a part
// worker (partCores).
func spareCores() bool {
	n := js.Global().Get("navigator").Get("hardwareConcurrency")
	return n.Type() == js.TypeNumber && n.Int() >= partCores
}

// prestartPart has a part worker started for the next file (snapworker.js
// prestartPart), where one would be used.
func prestartPart() {
	if f := js.Global().Get("prestartPart"); f.Type() == js.TypeFunction && spareCores() {
		f.Invoke()
	}
}

// receive handles a message of the part worker.
func (p *partRun) receive(msg js.Value) {
	p.heard.Store(time.Now().UnixNano())
	// The buffers stay where they are: a part's is read a piece at a
	// time when it is taken (jsBytes), the others are not used.
	var bufs [][]byte
	var u8s []js.Value
	if b := msg.Get("buffers"); b.Type() == js.TypeObject {
		for i := range b.Length() {
			u8 := js.Global().Get("Uint8Array").New(b.Index(i))
			u8s = append(u8s, u8)
			bufs = append(bufs, make([]byte, min(u8.Length(), 1)))
		}
	}
	copied := time.Since(p.began)
	r, err := load.DecodeResponse(msg.Get("json").String(), bufs)
	if err != nil {
		p.fail(fmt.Errorf("the part worker's answer: %w", err))
		return
	}
	since := float64(time.Since(p.began).Milliseconds())
	switch r.Type {
	case "ready": // the part worker's Go program runs (snapworker.js)
		p.stats.Set("readyMs", since)
	case load.ResponseStart:
		p.stats.Set("startMs", since)
		mark("part_start")
		p.stats.Set("start", float64(r.Start))
		select {
		case p.start <- r.Start:
		default:
		}
	case load.ResponsePart:
		mark("part_arrived")
		p.stats.Set("partMs", since)
		p.stats.Set("partBytes", float64(r.PartBytes))
		p.stats.Set("partMemory", float64(r.PartMemory))
		p.stats.Set("partBlob", u8s[0].Length()) // one buffer: DecodeResponse
		p.stats.Set("copiedMs", float64(copied.Milliseconds()))
		for k, v := range r.PartMS {
			p.stats.Set("part_"+k, v)
		}
		select {
		case p.part <- u8s[0]:
		default:
		}
	case load.ResponseError:
		p.fail(errors.New(r.Error))
	}
}

// fail ends the waits for the part with err (the first one is kept), and
// says why in the stats.
func (p *partRun) fail(err error) {
	if p.end(err) {
		p.stats.Set("error", err.Error())
	}
}

// end ends the waits for the part with err, if they have not ended yet.
func (p *partRun) end(err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return false
	}
	p.err = err
	close(p.failed)
	return true
}

// stop ends the part worker, once: its memory holds a part of the file.
func (p *partRun) stop() {
	p.end(errors.New("the part worker was stopped"))
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		p.stopped = true
		p.worker.Call("terminate")
		// No answer already queued may call the released function.
		for _, h := range []string{"onmessage", "onerror", "onmessageerror"} {
			p.worker.Set(h, js.Null())
		}
		p.onmsg.Release()
	}
}

// waitFor waits for a value on ch, the part worker's failure, or a silence
// of p.stall.
func waitFor[T any](p *partRun, ch <-chan T) (T, error) {
	var zero T
	tick := time.NewTicker(max(p.stall/4, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case v := <-ch:
			return v, nil
		case <-p.failed:
			return zero, p.err
		case <-tick.C:
			if time.Since(time.Unix(0, p.heard.Load())) > p.stall {
				p.fail(fmt.Errorf("the part worker said nothing for %v", p.stall))
			}
		}
	}
}

// split is the decoder's side of the part worker.
func (p *partRun) split() *snapshot.Split {
	return &snapshot.Split{
		At: p.at,
		Start: func() (int64, error) {
			mark("split_start_asked")
			start, err := waitFor(p, p.start)
			if err != nil {
				p.stop()
			}
			return start, err
		},
		Part: func() (*snapshot.Part, error) {
			mark("split_part_asked")
			b, err := waitFor(p, p.part)
			p.stop()
			if err != nil {
				return nil, err
			}
			part := new(snapshot.Part)
			t := time.Now()
			err = part.UnmarshalFrom(jsBytes{b}, int64(b.Length()))
			// Collect before the decoder merges the part (which grows
			// its tables by the part's columns): this worker's memory
			// never shrinks, and its peak on the 209 MB distinct file
			// was 154 MB with this collection, 181 MB without.
			runtime.GC()
			p.stats.Set("unmarshalMs", float64(time.Since(t).Milliseconds()))
			if err != nil {
				p.stats.Set("error", err.Error())
				return nil, err
			}
			mark("part_taken")
			return part, nil
		},
	}
}

// decodePart answers a part request, in the part worker.
func decodePart(msg js.Value) {
	id := 0
	defer func() {
		if r := recover(); r != nil {
			post(load.ErrorResponse(id, &load.InternalError{Offset: -1, Stage: load.StageDecode, Value: r, Stack: string(debug.Stack())}))
		}
	}()
	req, err := load.DecodeRequest(msg.Get("json").String())
	if err == nil && req.Type != load.RequestPart {
		err = fmt.Errorf("a part worker answers part requests, not %q", req.Type)
	}
	if err != nil {
		post(load.ErrorResponse(0, err))
		return
	}
	id = req.ID
	t0 := time.Now()
	times := map[string]int64{}
	file := msg.Get("file")
	if !file.Truthy() {
		post(load.ErrorResponse(id, errors.New("no file data received")))
		return
	}
	size := int64(file.Get("size").Float())
	src := &streamReaderAt{file: file, size: size, reached: func(off int64) {
		if _, ok := times["prefix"]; !ok && off >= req.At {
			times["prefix"] = time.Since(t0).Milliseconds() // the first read at the part
		}
	}}
	defer src.release()
	var last time.Time
	opt := load.Options{Progress: func(stage load.Stage, done, total int64) {
		if time.Since(last) >= progressEvery {
			last = time.Now()
			post(load.Response{Type: load.ResponseProgress, ID: id, Progress: &load.Progress{Stage: stage, Done: done, Total: total}})
		}
	}}
	started := func(start int64) {
		times["start"] = time.Since(t0).Milliseconds()
		post(load.Response{Type: load.ResponseStart, ID: id, Start: start})
		switch req.Fail {
		case load.PartFailExit:
			os.Exit(2)
		case load.PartFailSilent:
			select {} // this goroutine, never again
		}
	}
	b, n, err := load.LoadPart(load.Input{Name: req.Name, Size: size, Source: src}, req.At, opt, started)
	times["marshalled"] = time.Since(t0).Milliseconds()
	if err == nil && req.Fail == load.PartFailError {
		err = errors.New("the part worker failed on purpose (test)")
	}
	if err != nil {
		post(load.ErrorResponse(id, err))
		return
	}
	if req.Fail == load.PartFailCorrupt {
		for i := len(b) / 2; i < len(b); i++ {
			b[i] ^= 0x5a
		}
	}
	mem := int64(js.Global().Call("__oomscopeWasmMemory").Float())
	post(load.Response{Type: load.ResponsePart, ID: id, Part: b, PartBytes: n, PartMemory: mem, PartMS: times})
}

// streamReaderAt reads a Blob at any offset for the part decoder: a read
// that continues one before it is served by a blobReader, which reads
// ahead through the reader worker; a small read elsewhere is read alone;
// a large one starts a new stream (at most maxStreams are kept).
type streamReaderAt struct {
	file    js.Value
	size    int64
	streams []*stream
	reached func(off int64) // if not nil, called with each read's offset
}

// stream is a blobReader and where it is.
type stream struct {
	r   *blobReader
	pos int64
}

// maxStreams is the most streams a streamReaderAt keeps; smallRead the
// largest read that does not start one.
const (
	maxStreams = 3
	smallRead  = 64 << 10
)

// ReadAt implements io.ReaderAt.
func (s *streamReaderAt) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= s.size {
		return 0, io.EOF
	}
	if s.reached != nil {
		s.reached(off)
	}
	var st *stream
	for i, c := range s.streams {
		if c.pos == off {
			st = c
			// the most recent last
			s.streams = append(append(s.streams[:i:i], s.streams[i+1:]...), c)
			break
		}
	}
	if st == nil {
		if len(b) <= smallRead {
			n, err := blobReaderAt{s.file}.ReadAt(b[:min(int64(len(b)), s.size-off)], off)
			if err == nil && n < len(b) {
				err = io.EOF
			}
			return n, err
		}
		if len(s.streams) == maxStreams {
			s.streams[0].r.release()
			s.streams = s.streams[1:]
		}
		st = &stream{r: newBlobReader(s.file, off, s.size), pos: off}
		s.streams = append(s.streams, st)
	}
	n, err := io.ReadFull(st.r, b)
	st.pos += int64(n)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

// release ends the streams.
func (s *streamReaderAt) release() {
	for _, st := range s.streams {
		st.r.release()
	}
	s.streams = nil
}

// jsBytes reads a Uint8Array (the part worker's buffer, which nothing
// changes once it is sent) for snapshot.Part.UnmarshalFrom.
type jsBytes struct{ u8 js.Value }

// ReadAt implements io.ReaderAt.
func (b jsBytes) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(b.u8.Length()) {
		return 0, io.ErrUnexpectedEOF
	}
	return js.CopyBytesToGo(p, b.u8.Call("subarray", off, off+int64(len(p)))), nil
}
