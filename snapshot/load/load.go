// Package load turns a snapshot file into an analysis: the one load path
// of the CLI (cmd/oomscope) and the browser worker (wasm/snapworker), the
// defaults both use, and the messages the page and the worker exchange
// (messages.go), which the page (app/) decodes with the same types. It is
// pure Go: the worker wraps a browser File in an io.ReaderAt.
package load

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
)

// Defaults of the CLI and the page.
const (
	// TimelinePoints is the resolution of the page's timeline and of a
	// zoomed one (the CLI draws none).
	TimelinePoints = analysis.DefaultTimelinePoints
	// TopSites is how many allocation sites a report and a comparison list.
	TopSites = analysis.DefaultTopSites
	// StateSegments and StateSites shape the page's allocator state: the
	// largest segments drawn, the sites listed.
	StateSegments = 24
	// StateSites is the number of sites listed with a state.
	StateSites = 10
	// ProgressEvery is the number of input bytes between progress reports.
	ProgressEvery = 4 << 20
	// GCPercent is the garbage collector's target (debug.SetGCPercent) of
	// the CLI and the worker: collecting at 40 % growth instead of 100 %
	// keeps memory close to what is live (the worker's memory is never
	// given back) at little cost, as decoded snapshots are mostly columns
	// without pointers.
	GCPercent = 40
)

// EarlyTimelineEntries is the fewest trace entries (all devices together)
// of a file whose summary carries the timelines (Options.EarlyTimeline):
// the page then draws the memory curve before the result. On smaller
// files the result follows the summary within a frame or two, and drawing
// the curve from the summary first delayed the diagnosis (the answer) by
// more than it brought the curve forward. The worker's summary → the
// page's curve, then → the diagnosis, medians in Chromium on 2 cores (ms),
// without and with the curve from the summary: the 3.2 MB real snapshot
// (19 K entries) 58 → 40 and 97 → 136 (7 rounds, load 6-9); the 55 MB
// distinct-stacks file (432 K) 94 → 44 and 190 → 232 (load 6-9), 98 → 30
// and 146 → 144 (5 rounds, load 2-5); the 200 MB one (1.6 M) 143 → 37
// and 371 → 381; 1 GB (8 M) 307-525 → 33-35, the diagnosis not later.
const EarlyTimelineEntries = 1 << 18

// MemoryLimit is the soft memory limit (debug.SetMemoryLimit) the CLI sets
// for analysing files of size bytes in all: 32 MiB plus 0.42 bytes per
// byte, at least 256 MiB. Decoded columns and the analysis's peak fit it
// on both file families (the distinct-stacks 1 GiB file is 392 MiB live
// at its peak); collecting at 40 % growth alone (GCPercent) let the
// process reach 600 MB there, and the limit also makes the runtime hand
// freed pages back. It is soft: a file that needs more is collected more
// often, not refused.
func MemoryLimit(size int64) int64 { return max(256<<20, 32<<20+size/100*42) }

// Input is one snapshot to load.
type Input struct {
	// Name is the file name, for messages.
	Name string
	// R delivers the file's bytes.
	R io.Reader
	// Size is the number of bytes R delivers (-1: unknown, e.g. stdin).
	Size int64
	// Source, when set, reads the same bytes at any offset (the open file,
	// a browser File): stacks of files with very many distinct stacks then
	// stay in the file and are read again when shown. It must stay
	// readable while the analysis is used.
	Source io.ReaderAt
	// Data, when set, is the whole input in memory (snapshot.Options.Data:
	// a mapped file), read in place of R while decoding, and DataDone
	// snapshot.Options.DataDone; neither is used once Load returns.
	Data     []byte
	DataDone func(from, to int64)
}

// Stage names a step of loading, for progress.
type Stage string

// Stages of Load.
const (
	StageDecode  Stage = "decode"
	StageAnalyse Stage = "analyse"
	StageReport  Stage = "report"
)

// Options controls Load. The zero value uses the defaults.
type Options struct {
	// Analysis tunes the analysis (TimelinePoints 0: no timeline).
	Analysis analysis.Options
	// Progress, when set, is called with the stage and the input bytes read
	// so far and in all (-1 if unknown), every ProgressEvery bytes while
	// decoding and once at each later stage.
	Progress func(stage Stage, done, total int64)
	// Summary, when set, is called with each device's headline numbers
	// and downsampled timeline (nil without Analysis.TimelinePoints) as
	// soon as they are known, right after the replay (before the report,
	// which costs more): the report's Timelines are the same slices, not
	// to be modified.
	Summary func(hs []analysis.Headline, timelines [][]analysis.Point)
	// EarlyTimeline is the fewest trace entries (all devices together)
	// for which Summary gets the timelines (0: EarlyTimelineEntries);
	// below it, Summary gets none (nil).
	EarlyTimeline int
	// First, when set, is called with the result made before the devices'
	// diagnoses, which cost the most (analysis.ReportFirst): everything
	// else is there, Diagnosing is set, each DiagnosisReport is zero and
	// AnalyseMS is the time so far. It must be done with the result when it
	// returns (the diagnoses are then written into the same report);
	// NewDiagnosis of the loaded file is the rest.
	First func(*Result)
	// MaxMemory bounds the memory decoding and analysis may take (0:
	// snapshot.DefaultMemoryLimit of the input size).
	MaxMemory int64
	// Split, when set, is handed to the decoder (snapshot.Options.Split):
	// a second decoder (the browser's part worker, running LoadPart)
	// decodes the trace from Split.At on. nil: the decoder's own choice
	// (a goroutine natively on large files, none in a browser). The
	// analysis is the same either way; File.SplitBytes says how many bytes
	// a part the decoder kept covered.
	Split *snapshot.Split
	// holdFrames is snapshot.Options.HoldFrames (WarmUp reaches the lazy
	// stacks' path with a small input); progressEvery, if not 0, replaces
	// ProgressEvery; canceled, if set, is asked at each progress call and
	// stops the load (snapshot.ErrCanceled) when it says true.
	holdFrames    int
	progressEvery int64
	canceled      func() bool
}

// File is a loaded snapshot.
type File struct {
	// Name is the input's name.
	Name string
	// Bytes is the input's size (-1 if unknown).
	Bytes int64
	// Analysis is the analysis of every device with data.
	Analysis *analysis.Analysis
	// Report is its report.
	Report *analysis.Report
	// Decode and Analyse are the time spent decoding and analysing
	// (report included).
	Decode, Analyse time.Duration
	// SplitBytes is the number of input bytes decoded by a second decoder
	// whose part the decoder kept (snapshot.Snapshot.SplitBytes: through
	// Options.Split, or natively the decoder's own; 0: none).
	SplitBytes int64
}

// Stats describes the decoded file, for the page and benchmarks.
type Stats struct {
	// Entries is the number of trace entries of all devices.
	Entries int `json:"entries"`
	// Stacks is the number of distinct stacks; LazyStacks of them stay in
	// the file until shown.
	Stacks     int `json:"stacks"`
	LazyStacks int `json:"lazy_stacks"`
	// Frames is the number of distinct frames.
	Frames int `json:"frames"`
	// SplitBytes is the number of input bytes a second decoder (the
	// browser's part worker, or natively a goroutine) decoded and the
	// decoder kept (File.SplitBytes; 0: none).
	SplitBytes int64 `json:"split_bytes,omitempty"`
}

// Stats counts what the file holds.
func (f *File) Stats() Stats {
	s := f.Analysis.Snap
	st := Stats{Stacks: s.Stacks.Len(), LazyStacks: s.Stacks.LazyCount(), Frames: len(s.Frames), SplitBytes: f.SplitBytes}
	for _, tr := range s.DeviceTraces {
		st.Entries += tr.Len()
	}
	return st
}

// ErrNoData is returned for a snapshot with no trace and no segment.
var ErrNoData = errors.New("holds no trace and no segments: was _record_memory_history() enabled before _dump_snapshot()?")

// InternalError is a bug of ours met while loading (a panic), as opposed
// to a bad input: callers should say "internal error, please file an
// issue" and exit with a distinct code.
type InternalError struct {
	// Offset is how many bytes of the input had been read (read-ahead
	// included; of a mapped input, Input.Data, where the last progress
	// report was).
	Offset int64
	// Stage is where it happened.
	Stage Stage
	// Value is what was raised; Stack the goroutine's stack.
	Value any
	Stack string
}

// Error says what happened and where.
func (e *InternalError) Error() string {
	return fmt.Sprintf("internal error at stage %s, %d bytes into the file (please file an issue): %v", e.Stage, e.Offset, e.Value)
}

// Load decodes and analyses one snapshot. Errors name the file; bad input
// gives a *snapshot.DecodeError inside (errors.As), a snapshot without data
// ErrNoData, and a bug of ours an *InternalError.
func Load(in Input, opt Options) (f *File, err error) {
	stage, read := StageDecode, int64(0)
	cr := &countReader{r: in.R}
	in.R = cr
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, &InternalError{Offset: max(cr.n, read), Stage: stage, Value: r, Stack: string(debug.Stack())}
		}
	}()
	progress := func(st Stage, done, total int64) {
		read = done
		if opt.Progress != nil {
			opt.Progress(st, done, total)
		}
	}
	if in.Size == 0 {
		return nil, fmt.Errorf("%s is empty: expected a pickle written by torch.cuda.memory._dump_snapshot()", in.Name)
	}
	start := time.Now()
	dopt := decodeOptions(in, opt, func(done, total int64) { progress(StageDecode, done, total) })
	dopt.Split = opt.Split
	s, err := snapshot.Decode(in.R, in.Size, dopt)
	if err != nil {
		return nil, fmt.Errorf("%s is not a readable memory snapshot: %w", in.Name, err)
	}
	if in.Size > 64<<20 || in.Size < 0 {
		// The decoder's tables (memo, stack index) are garbage now:
		// collect them before the analysis needs memory, so that its
		// allocations reuse theirs (a browser worker never gives memory
		// back, so its peak is what counts). Natively they are not handed
		// back to the system either (FreeOSMemory): the analysis faulted
		// them in again (measured with huge pages), which cost more CPU
		// than the ~10 MB of peak RSS it saved.
		runtime.GC()
	}
	decoded := time.Since(start)
	stage = StageAnalyse
	progress(StageAnalyse, read, in.Size)
	if opt.canceled != nil && opt.canceled() {
		return nil, fmt.Errorf("%s: %w", in.Name, snapshot.ErrCanceled)
	}
	var summary func([]analysis.Headline, [][]analysis.Point)
	if opt.Summary != nil {
		early := cmp.Or(opt.EarlyTimeline, EarlyTimelineEntries)
		summary = func(hs []analysis.Headline, tls [][]analysis.Point) {
			entries := 0
			for _, h := range hs {
				entries += h.Entries
			}
			if entries < early {
				tls = nil
			}
			if len(hs) > 0 {
				opt.Summary(hs, tls)
			}
		}
	}
	an := analysis.AnalyzeSummary(s, opt.Analysis, summary)
	if len(an.Devices) == 0 {
		return nil, fmt.Errorf("%s %w", in.Name, ErrNoData)
	}
	stage = StageReport
	progress(StageReport, read, in.Size)
	var first func(*analysis.Report)
	if opt.First != nil {
		first = func(r *analysis.Report) {
			f := &File{Name: in.Name, Bytes: in.Size, Analysis: an, Report: r, Decode: decoded, Analyse: time.Since(start) - decoded,
				SplitBytes: s.SplitBytes()}
			res := NewResult(f)
			res.Diagnosing = true
			opt.First(res)
		}
	}
	rep := an.ReportFirst(first)
	return &File{Name: in.Name, Bytes: in.Size, Analysis: an, Report: rep, Decode: decoded, Analyse: time.Since(start) - decoded,
		SplitBytes: s.SplitBytes()}, nil
}

// decodeOptions is the snapshot.Options of a load, Load's and LoadPart's
// alike (a part decoded with other options does not fit the main
// decoder's): progress is called every ProgressEvery bytes (or
// opt.progressEvery) and opt.canceled stops the decoding.
func decodeOptions(in Input, opt Options, progress func(done, total int64)) *snapshot.Options {
	return &snapshot.Options{
		ProgressEvery: cmp.Or(opt.progressEvery, ProgressEvery),
		Progress: func(done, total int64) bool {
			progress(done, total)
			return opt.canceled == nil || !opt.canceled()
		},
		MaxMemory:  opt.MaxMemory,
		Fold:       analysis.Fold(),
		Source:     in.Source,
		Data:       in.Data,
		DataDone:   in.DataDone,
		HoldFrames: opt.holdFrames,
	}
}

// countReader counts the bytes read through it (read-ahead included), for
// an InternalError's offset.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// OpenFile loads a file from disk ("-": stdin). Close the returned closer
// when done with the analysis: the file stays open for the stacks that are
// read again when shown.
func OpenFile(name string, stdin io.Reader, opt Options) (*File, io.Closer, error) {
	if name == "-" {
		if stdin == nil {
			return nil, nil, fmt.Errorf("no input on stdin")
		}
		f, err := Load(Input{Name: "stdin", R: stdin, Size: -1}, opt)
		return f, io.NopCloser(nil), err
	}
	fh, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	if st.IsDir() {
		fh.Close()
		return nil, nil, fmt.Errorf("%s is a directory: expected a pickle written by torch.cuda.memory._dump_snapshot()", name)
	}
	in := Input{Name: name, R: fh, Size: st.Size()}
	if st.Mode().IsRegular() {
		in.Source = fh
		// Decoded in place where the file can be mapped (Linux); the
		// stacks read again later come from fh.
		var unmap func()
		if in.Data, in.DataDone, unmap = mapFile(fh, in.Size); unmap != nil {
			defer unmap()
		}
	} else {
		in.Size = -1 // a pipe or a device: no size, no second reading
	}
	f, err := Load(in, opt)
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	return f, fh, nil
}
