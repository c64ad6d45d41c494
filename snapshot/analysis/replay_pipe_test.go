package analysis

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"oomscope/snapshot"
)

// withPipeline runs f with the replay's pipeline on for every trace
// (pipelineMin 0); it skips where there is one core, where the pipeline
// never runs.
func withPipeline(t *testing.T, f func()) {
	t.Helper()
	if !snapshot.Concurrent() {
		t.Skip("one core: the replay never runs as a pipeline")
	}
	old := pipelineMin
	pipelineMin = 0
	defer func() { pipelineMin = old }()
	f()
}

// TestReplayPipelineSame checks that the replay gives the same analysis
// whether it runs as a pipeline on two goroutines (replayer.pipeline) or
// on one (replayer.chunk): on every file of numbersCases (the real files,
// generated files of both families, fuzzed snapshots) the allocation
// table, the device state and the whole report are identical, and so is
// the JSON of the report.
func TestReplayPipelineSame(t *testing.T) {
	for _, c := range numbersCases(t) {
		t.Run(c.name, func(t *testing.T) {
			load := c.lazyLoader(t)
			opt := Options{TimelinePoints: 300}
			sequentialOnly.Store(true)
			seq := Analyze(load(), opt)
			sequentialOnly.Store(false)
			var par *Analysis
			withPipeline(t, func() { par = Analyze(load(), opt) })
			if len(par.Devices) != len(seq.Devices) {
				t.Fatalf("%d devices, want %d", len(par.Devices), len(seq.Devices))
			}
			for i, d := range par.Devices {
				w := seq.Devices[i]
				if e := d.early; e != nil {
					// The early diagnosis takes the sizes from the table
					// on its goroutine: read the table after it.
					e.wait()
				}
				pa, wa := d.allocs, w.allocs
				for name, p := range map[string][2]any{
					"start": {pa.start, wa.start}, "end": {pa.end, wa.end}, "freeReq": {pa.freeReq, wa.freeReq},
					"stacks": {pa.stacks, wa.stacks}, "atEnd": {pa.atEnd, wa.atEnd}, "site": {pa.site, wa.site},
					"cat": {pa.cat, wa.cat}, "rule": {pa.rule, wa.rule}, "buckets": {d.buckets, w.buckets},
					"actions": {d.Actions, w.Actions}, "warnings": {d.Warnings, w.Warnings},
				} {
					if !reflect.DeepEqual(p[0], p[1]) {
						t.Errorf("device %d: %s differs with the pipeline", d.ID, name)
					}
				}
			}
			pr, sr := par.Report(), seq.Report()
			if !reflect.DeepEqual(pr, sr) {
				t.Error("the report differs with the pipeline")
			}
			if g, w := mustJSON(pr), mustJSON(sr); g != w {
				t.Errorf("the report's JSON differs with the pipeline:\n got %.2000s\nwant %.2000s", g, w)
			}
		})
	}
}

// TestReplayPipelineNumbers runs TestSameNumbers with the replay's
// pipeline on for every trace: the pinned numbers hold for it too.
func TestReplayPipelineNumbers(t *testing.T) {
	withPipeline(t, func() { TestSameNumbers(t) })
}

// TestReplayPipelineFramelessLive checks the pipeline's head start on the
// sites (preSites) where an allocation without frames is still live at the
// end: matchSegments gives it its block's stack, whose site comes between
// those of the allocations before and after it. The sites are numbered in
// allocation order with and without the pipeline: a.py, c.py, b.py.
func TestReplayPipelineFramelessLive(t *testing.T) {
	build := func() *snapshot.Snapshot {
		b := newBuilder()
		sa := b.stack(py("a.py", 1, "fa"))
		sb := b.stack(py("b.py", 2, "fb"))
		sc := b.stack(py("c.py", 3, "fc"))
		b.ev(snapshot.ActionAlloc, 0x1000, 512, sa)
		b.ev(snapshot.ActionFreeCompleted, 0x1000, 512, sa)
		b.ev(snapshot.ActionAlloc, 0x2000, 512, snapshot.NoStack)
		b.ev(snapshot.ActionAlloc, 0x2200, 512, sb)
		b.seg(0x2000, false, live(512, 512, sc), live(512, 512, sb))
		return b.s
	}
	sequentialOnly.Store(true)
	seq := Analyze(build(), Options{})
	sequentialOnly.Store(false)
	var par *Analysis
	withPipeline(t, func() { par = Analyze(build(), Options{}) })
	var files []string
	for _, s := range seq.Sites {
		files = append(files, s.Key)
	}
	if len(files) != 3 || !strings.Contains(files[0], "a.py") || !strings.Contains(files[1], "c.py") || !strings.Contains(files[2], "b.py") {
		t.Fatalf("sites %q, want a.py, c.py, b.py in this order", files)
	}
	if !reflect.DeepEqual(par.Sites, seq.Sites) {
		t.Errorf("sites with the pipeline %v, want %v", par.Sites, seq.Sites)
	}
	if p, s := par.Devices[0].allocs.site, seq.Devices[0].allocs.site; !reflect.DeepEqual(p, s) {
		t.Errorf("allocation sites with the pipeline %v, want %v", p, s)
	}
	if g, w := mustJSON(par.Report()), mustJSON(seq.Report()); g != w {
		t.Error("the report's JSON differs with the pipeline")
	}
}

// TestEarlyScanSame checks the steps' scan that the replay pipeline begins
// while it waits for the matcher (earlyScan), from 0 and with the action
// counts the replay knows before its first entry: begun only, one chunk
// made, or all of it made during the replay (pipelineScanSteps: whatever
// the timing), the scan the early diagnosis finishes is the one scanSteps
// makes afterwards from the replay's results (its runs, intervals, peak
// and cuts), and the report is the one made on one goroutine, on every
// file of numbersCases and a trace without free_completed; not begun
// (0 steps), the early diagnosis scans as before.
func TestEarlyScanSame(t *testing.T) {
	if !snapshot.Concurrent() {
		t.Skip("one CPU (GOMAXPROCS=1): the analysis runs on one goroutine, there is no concurrent path to compare")
	}
	partly := false // some device had a scan made in part during the replay
	// And a trace without free_completed (skip_actions), where live ranges
	// end at free_requested, that starts with memory allocated.
	onlyRequested := numbersCase{name: "only_free_requested", snap: func(*testing.T) *snapshot.Snapshot {
		b := newBuilder()
		fwd, bwd := b.stack(py("model.py", 10, "forward")), b.stack(py("torch/autograd/graph.py", 20, "backward"))
		b.ev(snapshot.ActionFreeRequested, 0x9000, 4096, fwd) // allocated before the trace
		for step := range 3 {
			base := uint64(0x10000 * (step + 1))
			for i := range 4 {
				b.ev(snapshot.ActionAlloc, base+uint64(i)*0x100, 256, fwd)
			}
			for i := range 4 {
				b.ev(snapshot.ActionAlloc, base+0x800+uint64(i)*0x100, 128, bwd)
				b.ev(snapshot.ActionFreeRequested, base+uint64(i)*0x100, 256, bwd)
			}
			for i := range 4 {
				b.ev(snapshot.ActionFreeRequested, base+0x800+uint64(i)*0x100, 128, bwd)
			}
		}
		return b.s
	}}
	for _, c := range append(numbersCases(t), onlyRequested) {
		t.Run(c.name, func(t *testing.T) {
			load := c.lazyLoader(t)
			opt := Options{TimelinePoints: 300}
			sequentialOnly.Store(true)
			seq := mustJSON(Analyze(load(), opt).Report())
			sequentialOnly.Store(false)
			for _, first := range []int{0, 1, 2, 1 << 30} {
				pipelineScanSteps = first
				var pa *Analysis
				withPipeline(t, func() { pa = Analyze(load(), opt) })
				pipelineScanSteps = -1
				for _, d := range pa.Devices {
					e := d.early
					if e == nil {
						t.Fatalf("device %d: no early diagnosis", d.ID)
					}
					n := d.Trace.Len()
					// first steps: the start, then a chunk each.
					switch got := e.replayScanned; {
					case n == 0:
					case first == 0 && got != -1, first == 1 && got != 0, first == 2 && (got <= 0 || got > 1<<14), first > 2 && got != n:
						t.Fatalf("device %d: %d of %d entries scanned during the replay after %d steps", d.ID, got, n, first)
					case got > 0 && got < n:
						partly = true
					}
					e.join()
					got := e.st
					want := scanSteps(newSourceFree(d, e.sizes, d.Actions["free"] > 0), &e.head, 0)
					if got.initial != want.initial || got.onRequested != want.onRequested || got.src.legacyFree != want.src.legacyFree ||
						got.stacked != want.stacked || got.pythonOnly != want.pythonOnly || got.firstWork != want.firstWork ||
						got.lastInit != want.lastInit || got.zgBeforeWork != want.zgBeforeWork || got.zgBeforeRuns != want.zgBeforeRuns ||
						got.workCut != want.workCut || got.end() != want.end() {
						t.Errorf("device %d, %d steps: the early scan's state differs from scanSteps's", d.ID, first)
					}
					if !slices.Equal(got.runs, want.runs) || !slices.Equal(got.ivs, want.ivs) {
						t.Errorf("device %d, %d steps: the early scan's runs or intervals differ from scanSteps's", d.ID, first)
					}
				}
				if g := mustJSON(pa.Report()); g != seq {
					t.Errorf("%d steps: the report's JSON differs with the early scan:\n got %.2000s\nwant %.2000s", first, g, seq)
				}
			}
		})
	}
	if !partly {
		t.Error("no scan was made in part during the replay: the test checks less than it says")
	}
}

// TestScanShift checks stepper.shift: a scan from 0 shifted by the
// allocated memory before the first entry gives the peak, its entry and
// the intervals of the scan from that memory, on every device of
// numbersCases, some of which start with memory allocated.
func TestScanShift(t *testing.T) {
	initial := 0 // devices with memory allocated before the first entry
	for _, c := range numbersCases(t) {
		t.Run(c.name, func(t *testing.T) {
			var s *snapshot.Snapshot
			if c.snap != nil {
				s = c.snap(t)
			} else {
				b := c.data(t)
				var err error
				if s, err = snapshot.DecodeBytes(b, &snapshot.Options{Summarize: Summarizer()}); err != nil {
					t.Fatal(err)
				}
			}
			sequentialOnly.Store(true)
			a := Analyze(s, Options{})
			sequentialOnly.Store(false)
			for _, d := range a.Devices {
				src := newSource(d)
				h := d.Headline()
				head := stepsHead(d, &DeviceReport{InitialAllocatedBytes: d.initialAllocated, PeakAllocatedBytes: h.PeakAllocatedBytes, PeakIndex: h.PeakIndex})
				if head.InitialAllocatedBytes != 0 {
					initial++
				}
				want := newStepper(src, &head)
				wantPeak, wantAt := want.scan()
				got := newStepperFrom(src, 0, src.endsOnRequested())
				peak, at := got.scan()
				peak = got.shift(head.InitialAllocatedBytes, peak)
				if peak != wantPeak || at != wantAt || got.initial != want.initial || got.end() != want.end() || !slices.Equal(got.ivs, want.ivs) {
					t.Errorf("device %d: shifted scan peak %d at %d, end %d; want %d at %d, end %d (or the intervals differ)",
						d.ID, peak, at, got.end(), wantPeak, wantAt, want.end())
				}
			}
		})
	}
	if initial == 0 {
		t.Error("no device starts with memory allocated: the shift is not checked")
	}
}
