package load

import (
	"encoding/json"
	"errors"
	"fmt"

	"oomscope/snapshot/analysis"
)

// The page↔worker contract. The page posts a Request as JSON (the "json"
// field of the message object) with, for "analyze" and "compare", the
// File itself in its "file" field: the bytes never cross the page's main
// thread. The worker answers with Responses, encoded by EncodeResponse into
// JSON plus binary buffers (timelines and a rank's line travel packed, analysis.PackSeries,
// since parsing thousands of points from JSON is slow in the page's
// WebAssembly), and the page decodes them with DecodeResponse. One worker
// holds one analysed file at a time and answers queries about it. For the
// overview of many ranks the page runs a small pool of workers and sends
// each file as a rank request: the worker answers with the file's compact
// Rank row (a few hundred bytes) and keeps nothing, so the memory of the
// pool follows its size and the largest file, not the number of ranks.
// The analysis worker of a large file talks with the same messages to a
// part worker of its own (part.go): a part request, answered by start,
// progress and part.

// Request types.
const (
	// RequestAnalyze analyses the File sent with it and keeps it for later
	// queries; answered by progress, summary (the headlines and the
	// timelines), result (everything but the
	// devices' diagnoses, Result.Diagnosing), then diagnosis (the
	// diagnoses alone, which the page adds to the result: AddDiagnosis).
	RequestAnalyze = "analyze"
	// RequestCompare analyses a second File and compares the kept analysis
	// (before) with it (after); answered by progress then compare.
	RequestCompare = "compare"
	// RequestState asks for the allocator state after entry Index of
	// Device; answered by state.
	RequestState = "state"
	// RequestSeries asks for the timeline of Device between entries From
	// and To in Points points; answered by series.
	RequestSeries = "series"
	// RequestRank analyses the File sent with it as one rank of a job and
	// keeps nothing of it (a kept analysis is dropped too); answered by
	// progress then rank (a Rank row, made by FileRank).
	RequestRank = "rank"
	// RequestWarm asks the worker to get its decoder and analysis
	// optimised (WarmUp) while it waits for a file; the page sends it once
	// it has started, and any other request stops the warm-up. With an
	// ID, the worker answers with the result, diagnosis and state of its
	// own warm-up snapshot, each message marked "sample" beside its json
	// (not in it), for the page to run its reading and drawing code on
	// once; without one, it is not answered.
	RequestWarm = "warm"
	// RequestPart goes from the analysis worker to its part worker with
	// the File being analysed: decode the part of its trace from byte At
	// on (LoadPart); answered by start (as soon as the part's first byte
	// is known), progress, then part (the part marshalled, in the
	// message's one buffer) or error.
	RequestPart = "part"
)

// Request is a message from the page to the worker.
type Request struct {
	// Type is one of the Request* constants.
	Type string `json:"type"`
	// ID is echoed in every answer to this request.
	ID int `json:"id"`
	// Name is the file's name (analyze, compare).
	Name string `json:"name,omitempty"`
	// Device is the device ordinal (state, series).
	Device int `json:"device,omitempty"`
	// Index is the trace index (state; -1: before the first entry).
	Index int `json:"index,omitempty"`
	// From, To and Points bound a series.
	From   int `json:"from,omitempty"`
	To     int `json:"to,omitempty"`
	Points int `json:"points,omitempty"`
	// At is where the part starts (part): its first trace entry at or
	// after byte At.
	At int64 `json:"at,omitempty"`
	// Fail, for the tests only, makes the part worker fail on purpose
	// (part): PartFail* says how.
	Fail string `json:"fail,omitempty"`
}

// How a part worker fails when a test asks it to (Request.Fail).
const (
	// PartFailError answers an error after the start.
	PartFailError = "error"
	// PartFailCorrupt sends a part whose bytes are damaged.
	PartFailCorrupt = "corrupt"
	// PartFailSilent answers the start, then nothing.
	PartFailSilent = "silent"
	// PartFailExit ends the part worker's Go program (a crash) after the
	// start.
	PartFailExit = "exit"
)

// Response types.
const (
	ResponseProgress = "progress"
	ResponseSummary  = "summary"
	ResponseResult   = "result"
	// ResponseDiagnosis follows a result made without the devices'
	// diagnoses (Result.Diagnosing): it carries them alone (Diagnosis).
	ResponseDiagnosis = "diagnosis"
	ResponseCompare   = "compare"
	ResponseState     = "state"
	ResponseSeries    = "series"
	ResponseError     = "error"
	ResponseRank      = "rank"
	// ResponseStart and ResponsePart answer a part request (RequestPart).
	ResponseStart = "start"
	ResponsePart  = "part"
)

// Response is a message from the worker to the page.
type Response struct {
	// Type is one of the Response* constants.
	Type string `json:"type"`
	// ID is the request's (0 for a failure of the worker itself).
	ID int `json:"id"`
	// Progress is set on progress messages.
	Progress *Progress `json:"progress,omitempty"`
	// Summary is set on summary messages: each device's headline.
	Summary []analysis.Headline `json:"summary,omitempty"`
	// Timelines go with Summary: each device's downsampled timeline, the
	// result's Timeline known early (Options.Summary; nil for a device
	// without one), packed out of the JSON, a buffer per device, so
	// that the page draws the memory curve before the result comes.
	Timelines [][]analysis.Point `json:"-"`
	// Result is set on result messages.
	Result *Result `json:"result,omitempty"`
	// Diagnosis is set on diagnosis messages.
	Diagnosis *Diagnosis `json:"diagnosis,omitempty"`
	// Comparison is set on compare messages.
	Comparison *Comparison `json:"comparison,omitempty"`
	// State is set on state messages.
	State *analysis.State `json:"state,omitempty"`
	// Series is set on series messages.
	Series *analysis.Series `json:"series,omitempty"`
	// Rank is set on rank messages: the file's row of the overview of
	// ranks (NewOverview marks the outliers once all rows are in).
	Rank *Rank `json:"rank,omitempty"`
	// Start is set on start messages: the part's first byte.
	Start int64 `json:"start,omitempty"`
	// Part is set on part messages: the part marshalled
	// (snapshot.Part.MarshalBinary), carried in the message's buffer;
	// PartBytes is the input bytes it covers and PartMemory the part
	// worker's WebAssembly memory (its peak) when it sent it.
	Part       []byte `json:"-"`
	PartBytes  int64  `json:"part_bytes,omitempty"`
	PartMemory int64  `json:"part_memory,omitempty"`
	// PartMS says when the part worker reached each step of its part
	// (milliseconds after the request came: "start", "decoded",
	// "marshalled"), for the browser benchmark.
	PartMS map[string]int64 `json:"part_ms,omitempty"`
	// Error says what went wrong, on error messages; Internal marks a bug
	// of ours (say "please file an issue").
	Error    string `json:"error,omitempty"`
	Internal bool   `json:"internal,omitempty"`
}

// Progress is how far loading a file got.
type Progress struct {
	// Stage is the step; Done and Total count input bytes (Total -1 if
	// unknown).
	Stage Stage `json:"stage"`
	Done  int64 `json:"done"`
	Total int64 `json:"total"`
}

// Result is the answer to analyze: the report and how the file was read.
type Result struct {
	*analysis.Report
	// File is the file's name and Bytes its size.
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
	Stats
	// DecodeMS and AnalyseMS are the worker's timings.
	DecodeMS  int64 `json:"decode_ms"`
	AnalyseMS int64 `json:"analyse_ms"`
	// Diagnosing says that the devices' diagnoses are not in the report
	// yet (each DiagnosisReport is zero, AnalyseMS is the time so far): a
	// diagnosis message brings them (AddDiagnosis).
	Diagnosing bool `json:"diagnosing,omitempty"`
}

// Diagnosis is the second part of the answer to analyze (after a result
// with Diagnosing set): each device's DiagnosisReport, in the result's
// device order, and the analysis time with them.
type Diagnosis struct {
	Devices   []analysis.DiagnosisReport `json:"devices"`
	AnalyseMS int64                      `json:"analyse_ms"`
}

// NewDiagnosis is the diagnosis part of a loaded file's result.
func NewDiagnosis(f *File) *Diagnosis {
	d := &Diagnosis{AnalyseMS: f.Analyse.Milliseconds()}
	for i := range f.Report.Devices {
		d.Devices = append(d.Devices, f.Report.Devices[i].DiagnosisReport)
	}
	return d
}

// AddDiagnosis writes the diagnoses of d into r, a result sent without
// them (Diagnosing), in place: r is then the whole result.
func (r *Result) AddDiagnosis(d *Diagnosis) error {
	if !r.Diagnosing {
		return errors.New("a diagnosis for a result that has its diagnoses")
	}
	if len(d.Devices) != len(r.Devices) {
		return fmt.Errorf("a diagnosis of %d devices for a result of %d", len(d.Devices), len(r.Devices))
	}
	for i := range d.Devices {
		r.Devices[i].DiagnosisReport = d.Devices[i]
	}
	r.AnalyseMS, r.Diagnosing = d.AnalyseMS, false
	return nil
}

// NewResult makes the result of a loaded file.
func NewResult(f *File) *Result {
	return &Result{Report: f.Report, File: f.Name, Bytes: f.Bytes, Stats: f.Stats(),
		DecodeMS: f.Decode.Milliseconds(), AnalyseMS: f.Analyse.Milliseconds()}
}

// Comparison is the answer to compare.
type Comparison struct {
	analysis.Comparison
	// MaxSites is the site limit the comparison was made with.
	MaxSites int `json:"max_sites"`
	// DecodeMS and AnalyseMS are the worker's timings for the second file.
	DecodeMS  int64 `json:"decode_ms"`
	AnalyseMS int64 `json:"analyse_ms"`
}

// Compare compares two loaded files (TopSites sites).
func Compare(before, after *File) *Comparison {
	return &Comparison{Comparison: analysis.Compare(before.Analysis, after.Analysis, TopSites), MaxSites: TopSites,
		DecodeMS: after.Decode.Milliseconds(), AnalyseMS: after.Analyse.Milliseconds()}
}

// EncodeResponse turns r into the JSON and the buffers of a message: the
// timelines of a summary and of a result (one per device) and of a series
// go packed into buffers, out of the JSON, and so do a result's or a diagnosis's steps,
// phase peaks and phase spans (a second buffer per device for a result,
// one per device for a diagnosis, see packSteps). r is not modified.
func EncodeResponse(r Response) (string, [][]byte, error) {
	var bufs [][]byte
	switch {
	case r.Result != nil && r.Result.Report != nil:
		res := *r.Result
		rep := *res.Report
		rep.Devices = append([]analysis.DeviceReport(nil), rep.Devices...)
		for i := range rep.Devices {
			d := &rep.Devices[i]
			bufs = append(bufs, analysis.PackSeries(d.Timeline, d.SiteSeries), packSteps(d))
			d.Timeline, d.LargestAtPeak = nil, nil              // the page shows neither through JSON
			d.Steps, d.PhasePeaks, d.PhaseSpans = nil, nil, nil // packed
			if d.SiteSeries != nil {
				ss := *d.SiteSeries
				ss.Values = nil
				d.SiteSeries = &ss
			}
		}
		res.Report = &rep
		r.Result = &res
	case len(r.Summary) > 0:
		if len(r.Timelines) > len(r.Summary) {
			return "", nil, fmt.Errorf("a summary of %d devices with %d timelines", len(r.Summary), len(r.Timelines))
		}
		for i := range r.Summary {
			var pts []analysis.Point
			if i < len(r.Timelines) {
				pts = r.Timelines[i]
			}
			bufs = append(bufs, analysis.PackSeries(pts, nil))
		}
	case r.Diagnosis != nil:
		dg := *r.Diagnosis
		dg.Devices = append([]analysis.DiagnosisReport(nil), dg.Devices...)
		for i := range dg.Devices {
			d := &dg.Devices[i]
			bufs = append(bufs, packSteps(&analysis.DeviceReport{DiagnosisReport: *d}))
			d.Steps, d.PhasePeaks, d.PhaseSpans = nil, nil, nil // packed
		}
		r.Diagnosis = &dg
	case r.Rank != nil && r.Rank.Line != nil:
		// A rank's line goes packed too: 128 ranks' lines as JSON took the
		// page 200 ms to read.
		rk, line := *r.Rank, *r.Rank.Line
		bufs = append(bufs, analysis.PackSeries(line.Points, nil))
		line.Points = nil
		rk.Line = &line
		r.Rank = &rk
	case r.Type == ResponsePart:
		bufs = append(bufs, r.Part) // as it is: the worker sends it and drops it
	case r.Series != nil:
		z := *r.Series
		bufs = append(bufs, analysis.PackSeries(z.Points, z.Sites))
		z.Points = nil
		if z.Sites != nil {
			ss := *z.Sites
			ss.Values = nil
			z.Sites = &ss
		}
		r.Series = &z
	}
	b, err := json.Marshal(r)
	return string(b), bufs, err
}

// DecodeResponse reads a message made by EncodeResponse.
func DecodeResponse(js string, bufs [][]byte) (Response, error) {
	return DecodeResponsePaced(js, bufs, nil)
}

// DecodeResponsePaced reads a message made by EncodeResponse as
// DecodeResponse does, calling pause (if not nil) between slices of a
// result's or a diagnosis's step rows (every 32,768 rows of steps, phase peaks and phase
// spans), so that a page can hand the browser its thread meanwhile.
func DecodeResponsePaced(js string, bufs [][]byte, pause func()) (Response, error) {
	var r Response
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		return Response{}, fmt.Errorf("reading the worker's %d-byte message: %w", len(js), err)
	}
	switch {
	case r.Result != nil && r.Result.Report != nil:
		devs := r.Result.Devices
		if len(bufs) != 2*len(devs) {
			return Response{}, fmt.Errorf("the result has %d devices but %d buffers (two per device: timeline, steps)", len(devs), len(bufs))
		}
		for i := range devs {
			pts, rows, err := analysis.UnpackSeries(bufs[2*i])
			if err != nil {
				return Response{}, err
			}
			if err := unpackSteps(bufs[2*i+1], &devs[i], pause); err != nil {
				return Response{}, err
			}
			devs[i].Timeline = pts
			if devs[i].SiteSeries != nil {
				devs[i].SiteSeries.Values = rows
			}
		}
	case len(r.Summary) > 0:
		if len(bufs) != len(r.Summary) {
			return Response{}, fmt.Errorf("the summary has %d devices but %d buffers (one per device: timeline)", len(r.Summary), len(bufs))
		}
		r.Timelines = make([][]analysis.Point, len(bufs))
		for i, b := range bufs {
			pts, rows, err := analysis.UnpackSeries(b)
			if err != nil {
				return Response{}, err
			}
			if len(rows) > 0 {
				return Response{}, fmt.Errorf("a summary's timeline with %d site bands", len(rows))
			}
			if len(pts) > 0 {
				r.Timelines[i] = pts
			}
		}
	case r.Diagnosis != nil:
		devs := r.Diagnosis.Devices
		if len(bufs) != len(devs) {
			return Response{}, fmt.Errorf("the diagnosis has %d devices but %d buffers (one per device: steps)", len(devs), len(bufs))
		}
		for i := range devs {
			d := analysis.DeviceReport{DiagnosisReport: devs[i]}
			if err := unpackSteps(bufs[i], &d, pause); err != nil {
				return Response{}, err
			}
			devs[i] = d.DiagnosisReport
		}
	case r.Rank != nil && r.Rank.Line != nil:
		if len(bufs) != 1 {
			return Response{}, fmt.Errorf("a rank's line without its packed points")
		}
		pts, _, err := analysis.UnpackSeries(bufs[0])
		if err != nil {
			return Response{}, err
		}
		r.Rank.Line.Points = pts
	case r.Type == ResponsePart:
		if len(bufs) != 1 || len(bufs[0]) == 0 {
			return Response{}, fmt.Errorf("a part message without its part")
		}
		r.Part = bufs[0]
	case r.Series != nil:
		if len(bufs) != 1 || r.Series.Sites == nil {
			return Response{}, fmt.Errorf("a series message without its packed series")
		}
		pts, rows, err := analysis.UnpackSeries(bufs[0])
		if err != nil {
			return Response{}, err
		}
		r.Series.Points, r.Series.Sites.Values = pts, rows
	}
	return r, nil
}

// EncodeRequest is the JSON of a request.
func EncodeRequest(r Request) string {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // a struct of strings and ints always encodes
	}
	return string(b)
}

// DecodeRequest reads a request; an unknown type is an error.
func DecodeRequest(js string) (Request, error) {
	var r Request
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		return Request{}, fmt.Errorf("reading the page's request: %w", err)
	}
	switch r.Type {
	case RequestAnalyze, RequestCompare, RequestState, RequestSeries, RequestRank, RequestWarm, RequestPart:
		return r, nil
	}
	return Request{}, fmt.Errorf("unknown request %q", r.Type)
}

// ErrorResponse is the error answer to request id; an *InternalError is
// marked as one.
func ErrorResponse(id int, err error) Response {
	r := Response{Type: ResponseError, ID: id, Error: err.Error()}
	var ie *InternalError
	if errors.As(err, &ie) {
		r.Internal = true
	}
	return r
}
