//go:build js && wasm

// Command snapworker is the snapshot page's Web Worker: a small Go wasm
// binary (GOOS=js GOARCH=wasm) that decodes and analyses a dropped
// snapshot.pickle off the page's main thread, so the page stays responsive
// on files of hundreds of MB.
//
// static/web/snapworker.js loads it and forwards messages. The page posts
// objects with a "type" and an "id":
//
//	{type: "analyze", id, name, file}     // file: the dropped File (a Blob, streamed into the decoder)
//	{type: "analyze", id, name, buffer}   // or the file's ArrayBuffer (transferred)
//	{type: "state", id, device, index}    // allocator state after trace entry index
//	{type: "series", id, device, from, to, points}
//	{type: "alloc", id, device, alloc}    // one allocation with its stack
//	{type: "compare", id, name, file, sites} // analyse a second file and compare the first with it
//
// and receives {type: "progress", id, stage, done, total} while reading and
// decoding, then {type: "result"|"state"|"series"|"alloc"|"compare", id, json} or
// {type: "error", id, message}. JSON carries 64-bit values as numbers below
// 2^53 only (addresses are hex strings). Timelines do not go through JSON,
// which is slow to parse in the page's wasm: "result" and "series" carry
// them in "series", an array of ArrayBuffers (one per device) written by
// analysis.PackSeries, and their JSON leaves Timeline and band values out.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"syscall/js"
	"time"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
)

// TimelinePoints is the resolution of the page's timeline.
const timelinePoints = 800

// worker holds the analysis of the last file, for later queries.
type worker struct {
	an *analysis.Analysis
}

func main() {
	w := &worker{}
	js.Global().Call("snapworkerReady", js.FuncOf(func(this js.Value, args []js.Value) any {
		if len(args) == 0 {
			return nil
		}
		msg := args[0]
		go w.handle(msg)
		return nil
	}))
	select {}
}

func post(v map[string]any) {
	js.Global().Call("postMessage", js.ValueOf(v))
}

// arrayBuffer copies b into a new JS ArrayBuffer.
func arrayBuffer(b []byte) js.Value {
	u8 := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(u8, b)
	return u8.Get("buffer")
}

// handle answers one message; it reports every failure, a panic included,
// as an error message instead of ending the worker.
func (w *worker) handle(msg js.Value) {
	id := msg.Get("id").Int()
	defer func() {
		if r := recover(); r != nil {
			post(map[string]any{"type": "error", "id": id, "message": fmt.Sprintf("internal error in the analysis: %v", r)})
		}
	}()
	typ := msg.Get("type").String()
	reply, err := w.answer(typ, id, msg)
	if err != nil {
		post(map[string]any{"type": "error", "id": id, "message": err.Error()})
		return
	}
	var packed [][]byte
	switch r := reply.(type) {
	case result:
		for i := range r.Devices {
			d := &r.Devices[i]
			packed = append(packed, analysis.PackSeries(d.Timeline, d.SiteSeries))
			d.Timeline, d.LargestAtPeak = nil, nil // the page shows neither through JSON
			if d.SiteSeries != nil {
				d.SiteSeries.Values = nil
			}
		}
	case analysis.Series:
		packed = append(packed, analysis.PackSeries(r.Points, r.Sites))
		r.Points = nil
		if r.Sites != nil {
			r.Sites.Values = nil
		}
		reply = r
	}
	b, err := json.Marshal(reply)
	if err != nil {
		post(map[string]any{"type": "error", "id": id, "message": "encoding the result: " + err.Error()})
		return
	}
	if typ == "analyze" {
		typ = "result"
	}
	out := map[string]any{"type": typ, "id": id, "json": string(b)}
	if packed != nil {
		var bufs []any
		for _, p := range packed {
			bufs = append(bufs, arrayBuffer(p))
		}
		out["series"] = bufs
		js.Global().Call("postMessage", js.ValueOf(out), js.ValueOf(bufs))
		return
	}
	post(out)
}

func (w *worker) answer(typ string, id int, msg js.Value) (any, error) {
	switch typ {
	case "analyze":
		return w.analyze(id, msg)
	case "compare":
		return w.compare(id, msg)
	}
	if w.an == nil {
		return nil, fmt.Errorf("no snapshot loaded")
	}
	d := w.an.Device(msg.Get("device").Int())
	if d == nil {
		return nil, fmt.Errorf("no device %d in this snapshot", msg.Get("device").Int())
	}
	switch typ {
	case "state":
		return d.StateAt(msg.Get("index").Int(), 24, 10), nil
	case "series":
		return d.Series(msg.Get("from").Int(), msg.Get("to").Int(), msg.Get("points").Int(), 8), nil
	case "alloc":
		return d.AllocationView(msg.Get("alloc").Int()), nil
	}
	return nil, fmt.Errorf("unknown request %q", typ)
}

// analyze decodes the transferred file and analyses it, posting progress.
// The analysis stays for later queries.
func (w *worker) analyze(id int, msg js.Value) (any, error) {
	w.an = nil
	an, decoded, analysed, err := load(id, msg)
	if err != nil {
		return nil, err
	}
	w.an = an
	return result{Report: an.Report(), DecodeMS: decoded.Milliseconds(), AnalyseMS: analysed.Milliseconds()}, nil
}

// compare decodes and analyses a second file, posting progress, and
// compares the loaded analysis (before) with it (after). The second
// analysis is dropped afterwards: queries keep going to the first file.
func (w *worker) compare(id int, msg js.Value) (any, error) {
	before := w.an
	if before == nil {
		return nil, fmt.Errorf("analyse a first snapshot before comparing")
	}
	sites := 0
	if v := msg.Get("sites"); v.Type() == js.TypeNumber {
		sites = v.Int()
	}
	after, decoded, analysed, err := load(id, msg)
	if err != nil {
		return nil, err
	}
	return comparison{Comparison: analysis.Compare(before, after, sites), MaxSites: sites,
		DecodeMS: decoded.Milliseconds(), AnalyseMS: analysed.Milliseconds()}, nil
}

// load decodes the message's file (a File or an ArrayBuffer) and analyses
// it, posting progress under id. It returns the time spent on each.
func load(id int, msg js.Value) (an *analysis.Analysis, decoded, analysed time.Duration, err error) {
	name := msg.Get("name").String()
	start := time.Now()
	opt := snapshot.DecodeOptions{
		ProgressEvery: 4 << 20,
		Progress: func(done, total int64) bool {
			post(map[string]any{"type": "progress", "id": id, "stage": "decode", "done": float64(done), "total": float64(total)})
			return true
		},
	}
	var s *snapshot.Snapshot
	var head []byte // the first bytes, to describe a file that is not a pickle
	switch file, buf := msg.Get("file"), msg.Get("buffer"); {
	case file.Truthy():
		if file.Get("size").Int() == 0 {
			return nil, 0, 0, fmt.Errorf("%s is empty", name)
		}
		r := newBlobReader(file)
		s, err = snapshot.DecodeReader(r, int64(r.size), opt)
		r.release()
		head = r.head
	case buf.Truthy():
		u8 := js.Global().Get("Uint8Array").New(buf)
		data := make([]byte, u8.Length())
		js.CopyBytesToGo(data, u8)
		if len(data) == 0 {
			return nil, 0, 0, fmt.Errorf("%s is empty", name)
		}
		s, err = snapshot.DecodeWith(data, opt)
		head = data
	default:
		return nil, 0, 0, fmt.Errorf("no file data received")
	}
	if err != nil {
		if errors.Is(err, snapshot.ErrNotPickle) {
			return nil, 0, 0, err
		}
		return nil, 0, 0, fmt.Errorf("%v%s", err, notPickleHint(head))
	}
	decoded = time.Since(start)
	post(map[string]any{"type": "progress", "id": id, "stage": "analyse", "done": 0, "total": 1})
	an = analysis.Analyze(s, analysis.Options{TimelinePoints: timelinePoints})
	if len(an.Devices) == 0 {
		return nil, 0, 0, fmt.Errorf("%s holds no trace and no segments: was _record_memory_history() enabled before _dump_snapshot()?", name)
	}
	return an, decoded, time.Since(start) - decoded, nil
}

// readChunk is how much of the file is read from the Blob at a time.
const readChunk = 4 << 20

// blobReader reads a Blob (the dropped File) chunk by chunk, waiting for
// each slice's arrayBuffer() promise: with snapshot.DecodeReader only a
// window of the file is ever in memory, and the page's main thread never
// touches the bytes.
type blobReader struct {
	file      js.Value
	off, size int
	chunk     []byte // the last chunk read
	rest      []byte // its unread part
	head      []byte // the file's first bytes
	ch        chan blobChunk
	ok, fail  js.Func
}

type blobChunk struct {
	buf js.Value
	err string
}

func newBlobReader(file js.Value) *blobReader {
	r := &blobReader{file: file, size: file.Get("size").Int(), ch: make(chan blobChunk, 1)}
	r.ok = js.FuncOf(func(this js.Value, args []js.Value) any {
		r.ch <- blobChunk{buf: args[0]}
		return nil
	})
	r.fail = js.FuncOf(func(this js.Value, args []js.Value) any {
		msg := "the browser could not read the file"
		if len(args) > 0 && args[0].Truthy() {
			msg = args[0].Call("toString").String()
		}
		r.ch <- blobChunk{err: msg}
		return nil
	})
	return r
}

// Read implements io.Reader.
func (r *blobReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		if r.off >= r.size {
			return 0, io.EOF
		}
		end := min(r.off+readChunk, r.size)
		r.file.Call("slice", r.off, end).Call("arrayBuffer").Call("then", r.ok, r.fail)
		c := <-r.ch
		if c.err != "" {
			return 0, fmt.Errorf("reading the file: %s", c.err)
		}
		u8 := js.Global().Get("Uint8Array").New(c.buf)
		n := u8.Length()
		if n != end-r.off {
			return 0, fmt.Errorf("reading the file: got %d bytes at %d, want %d", n, r.off, end-r.off)
		}
		if cap(r.chunk) < n {
			r.chunk = make([]byte, n)
		}
		r.chunk = r.chunk[:n]
		js.CopyBytesToGo(r.chunk, u8)
		if r.off == 0 {
			r.head = append([]byte(nil), r.chunk[:min(n, 512)]...)
		}
		r.rest, r.off = r.chunk, end
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// release frees the promise callbacks.
func (r *blobReader) release() {
	r.ok.Release()
	r.fail.Release()
}

// notPickleHint says what a file that fails to decode looks like, when it
// is plainly not a pickle: text, or another known format.
func notPickleHint(b []byte) string {
	if len(b) > 0 && (b[0] == 0x80 || b[0] == 0x1f) {
		return "" // a pickle (PROTO) or gzip: the decoder's message says it all
	}
	head := b[:min(len(b), 512)]
	printable := 0
	for _, c := range head {
		if c == '\n' || c == '\r' || c == '\t' || (c >= 0x20 && c < 0x7f) {
			printable++
		}
	}
	switch {
	case len(head) >= 4 && string(head[:4]) == "PK\x03\x04":
		return " (this is a zip archive, e.g. a torch.save checkpoint, not a memory snapshot)"
	case printable == len(head):
		return " (this looks like a text file, not a pickle: a snapshot is binary)"
	}
	return " (this does not look like a pickle: pickles written by Python start with byte 0x80)"
}

// result is the reply to "analyze".
type result struct {
	*analysis.Report
	// DecodeMS and AnalyseMS are the worker's timings.
	DecodeMS  int64 `json:"decode_ms"`
	AnalyseMS int64 `json:"analyse_ms"`
}

// comparison is the reply to "compare".
type comparison struct {
	analysis.Comparison
	// MaxSites is the site limit asked for (0: all changed sites).
	MaxSites int `json:"max_sites"`
	// DecodeMS and AnalyseMS are the worker's timings for the second file.
	DecodeMS  int64 `json:"decode_ms"`
	AnalyseMS int64 `json:"analyse_ms"`
}
