package analysis

import (
	"bytes"
	"reflect"
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
			var b []byte
			if c.data != nil {
				b = c.data(t)
			}
			load := func() *snapshot.Snapshot {
				if c.snap != nil {
					return c.snap(t)
				}
				s, err := snapshot.Decode(bytes.NewReader(b), int64(len(b)), &snapshot.Options{Summarize: Summarizer(),
					Source: bytes.NewReader(b), HoldFrames: 32})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
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
