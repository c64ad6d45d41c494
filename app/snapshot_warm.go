package app

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/load"
)

// The browser compiles a WebAssembly function the first time it is called:
// the first result a page showed paid for the compilation of all the code
// that reads and draws it, most of its main-thread time on a small file (the
// 3.2 MB real snapshot: tasks of 40-60 ms the first time, under 18 ms when
// dropped again). While the page waits for a file, the worker sends the
// answers it made for its own warm-up snapshot (load.RequestWarm with an
// id), marked as a sample; the page reads them and runs the drawing of each
// result section on them, off screen, a browser task each (warmSample).

// sampleParts collects the sample's messages (result, diagnosis, state),
// which are read in goroutines of their own.
var sampleParts struct {
	sync.Mutex
	res   *load.Result
	dg    *load.Diagnosis
	state *analysis.State
	done  bool
}

// sampleRead reports whether the worker's sample has been read whole
// (warmSample), its drawing on its way.
func sampleRead() bool {
	sampleParts.Lock()
	defer sampleParts.Unlock()
	return sampleParts.done
}

// warmSample reads one message of the worker's sample and, once all have
// come, draws them off screen (warmRender), unless a file is being shown.
func (p *SnapshotPage) warmSample(js string, bufs [][]byte) {
	defer func() {
		// A warm-up never fails the page, but a bug in drawing the sample
		// is said on the console (where the e2e suite sees it): the same
		// bug would show on the user's own file.
		if v := recover(); v != nil {
			app.Window().Get("console").Call("error", fmt.Sprintf("snapshot sample warm-up: %v", v))
		}
	}()
	nextTask(0)
	r, err := load.DecodeResponsePaced(js, bufs, func() { nextTask(0) })
	if err != nil {
		return
	}
	if r.Type == load.ResponseSummary {
		// The summary's timeline, laid out, parsed and drawn as the
		// first file's will be, before its result.
		if f := newSummaryChart(r.Summary, r.Timelines, p.unit); f != nil && f.chart != nil && p.phase == snapIdle {
			parseSVG(f.chart.SVG)
			wp := &SnapshotPage{summary: r.Summary, early: f.rep, chart: f.chart, unit: p.unit, hover: -1, fileName: "sample"}
			wp.renderResults()
			wp.renderTimeline(f.rep)
		}
		return
	}
	s := &sampleParts
	s.Lock()
	switch r.Type {
	case load.ResponseResult:
		s.res = r.Result
	case load.ResponseDiagnosis:
		s.dg = r.Diagnosis
	case load.ResponseState:
		s.state = r.State
	}
	ready := !s.done && s.res != nil && s.dg != nil && s.state != nil
	if ready {
		s.done = true
	}
	res, dg, st := s.res, s.dg, s.state
	s.Unlock()
	if !ready || p.phase != snapIdle || p.ranks != nil {
		return
	}
	if res.Diagnosing && res.AddDiagnosis(dg) != nil {
		return
	}
	warmRender(res, st, p.unit)
	MarkBody("data-snapshot-warm", "drawn")
	s.Lock()
	s.res, s.dg, s.state = nil, nil, nil
	s.Unlock()
}

// warmRender runs the drawing of each section of result r (with the
// allocator state st) once, on a page of its own that is never shown, a
// browser task each, and drops what it drew.
func warmRender(r *load.Result, st *analysis.State, u bytesize.Unit) {
	wp := &SnapshotPage{res: r, unit: u, hover: -1, reveal: revealStages, phase: snapDone, fileName: "sample", state: st}
	d := wp.device()
	if d == nil {
		return
	}
	wp.stateIndex = st.Index
	for _, draw := range []func(){
		func() {
			wp.chart = deviceChart(d, d.Timeline, d.SiteSeries, u)
			if wp.chart != nil {
				parseSVG(wp.chart.SVG) // preparseSVG's code
			}
		},
		func() { wp.renderResults(); wp.renderCards(d); wp.renderTimeline(d) },
		func() { warmResultFrame(wp, d) },
		func() {
			renderDiagnosing()
			wp.renderDiagnosis(d, true, true)
			for _, f := range d.Fixes {
				(&FixCode{Fix: f.Fix, ID: "sample"}).Render()
			}
		},
		func() { wp.renderBuckets(d) },
		func() { wp.stacks = siteStacks{dev: d, text: groupStacks(d.TopSites)} },
		func() { wp.renderSites(d) },
		func() { wp.renderSteps(d, true) },
		func() { wp.renderState(d); wp.renderOOMs(d) },
		func() { wp.renderAnomalies(d) },
		func() { wp.renderSetup(d); wp.renderWarnings(d); wp.renderExplain() },
		func() { warmRanks(u) },
		func() { gcDue() }, // runtime/metrics' first read: 20-30 ms
	} {
		nextTask(0)
		draw()
	}
}

// warmRanks runs the overview of ranks' code once, off screen, on three
// made-up rows (two finished, one running) and decodes the pool's answers
// once, a browser task a step: the overview's first drawing and its first
// finished rank compiled it in their tasks, 12-62 ms of them with two pool
// workers busy (BenchmarkBrowserSnapshotRanks). The page runs it as it
// opens (OnMount), with no file yet, so that files dropped at once find it
// done too; else after the worker's sample (warmRender). Once; it marks
// <body data-ranks-warm> "drawn" (or "failed": the console says why).
func warmRanks(u bytesize.Unit) {
	if !ranksWarm.CompareAndSwap(false, true) {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			app.Window().Get("console").Call("error", fmt.Sprintf("ranks warm-up: %v", v))
			MarkBody("data-ranks-warm", "failed")
		}
	}()
	line := make([]analysis.Point, load.RankPoints)
	for i := range line {
		line[i] = analysis.Point{Index: i, TimeUS: int64(i) * 1000, Allocated: int64(i%7+1) << 28, Reserved: int64(i%7+2) << 28}
	}
	wp := &SnapshotPage{unit: u, hover: -1, ranks: &snapRanks{open: -1, hl: -1}}
	for _, step := range []func(){
		func() {
			pending := make([]load.Rank, 3)
			for k := range pending {
				pending[k] = load.Rank{File: fmt.Sprintf("rank%d.pickle", k), Rank: k, Error: "pending"}
			}
			for _, o := range load.NewOverview(pending).Ranks {
				wp.ranks.rows = append(wp.ranks.rows, &rankRow{name: o.File, row: load.Rank{File: o.File, Rank: o.Rank}, state: rankRunning})
			}
			wp.renderRanks()
			wp.rankRows()
			wp.rankStatus()
			wp.rankFraction()
		},
		func() {
			// The pool's answers, as they come (startRankWorker).
			for _, js := range []string{`{"type":"ready","id":0}`,
				`{"type":"progress","id":1,"progress":{"stage":"decode","done":1,"total":2}}`,
				`{"type":"rank","id":1,"rank":{"file":"a","rank":0,"devices":[{"device":0}],"why":["x"]}}`,
				`{"type":"error","id":1,"error":"x"}`} {
				load.DecodeResponse(js, nil)
			}
			for k := range 2 {
				h := analysis.Headline{Device: 0, Entries: len(line), PeakAllocatedBytes: int64(7+k) << 28, PeakReservedBytes: int64(8+k) << 28,
					FinalAllocatedBytes: 1 << 28, FinalReservedBytes: 2 << 28}
				ans := load.NewRank(wp.ranks.rows[k].name, []analysis.Headline{h})
				ans.Line = &load.RankLine{Device: 0, Points: line}
				wp.rankFinished(app.Context{}, k, ans)
			}
		},
		func() { wp.renderRanks(); wp.rankRows() },
	} {
		nextTask(0)
		step()
	}
	MarkBody("data-ranks-warm", "drawn")
}

// ranksWarm is set once warmRanks has started.
var ranksWarm atomic.Bool

// warmResultFrame runs, once, what the result's frame calls first and the
// sections' drawing does not: go-app's comparison of a component's fields
// (reflect.DeepEqual), the timeline's components and its drawing's
// (svgDrawing, unmounted: it fills nothing), and the result's scrolling
// (to no element). Compiled in that frame, they were 4-9 ms of its 14-25
// ms of CPU.
func warmResultFrame(wp *SnapshotPage, d *analysis.DeviceReport) {
	t := &timelineSection{Page: wp, Dev: d, Chart: wp.chart, Sel: -1}
	reflect.DeepEqual(t, &timelineSection{Page: wp, Dev: d, Chart: wp.chart, Sel: -1})
	t.Mounted()
	t.Render()
	s := &svgDrawing{}
	s.Mounted()
	s.Render()
	s.fill()
	takeParsedSVG("")
	revealNow("")
	scrollToAnswer("")
}

// Chromium on Linux asks its browser process, synchronously, for the
// rendering settings of each new font strike (family, size, weight) the
// first time a page lays out text in it (FontCache::GetFontPlatformData →
// FontRenderStyleForStrike), and the page's thread waits for the answer
// in the middle of a layout: the summary's cards and the result's first
// frame, each in sizes the page had not shown yet, waited for 4 of them,
// and the later sections for 11 more, 5-180 ms each on a loaded 2-core
// machine (a layout task of 8 ms of CPU took 240-475 ms, the result's
// message waiting behind it). While the page waits for a file, warmFonts
// lays out a hidden line in each strike the result shows (fontStrikes), a
// few a task, so that the result's frames find them known.

// fontStrikes are the fonts of the result's text that the page before it
// does not show: weight and size as the style sheets give them (rem), the
// monospace family (var(--mono)) for "mono", the body's otherwise.
// TestSnapshotFontWarm (e2e) says which are missing.
var fontStrikes = []string{
	"400 1rem", "700 1rem", "400 1.1rem", "700 1.1rem", "400 0.85rem", "600 1.2rem", "700 1.3rem",
	"400 0.9rem", "600 0.9rem", "400 0.8rem", "700 1.05rem", "600 0.95rem", "700 1.6rem", "400 0.7rem",
	"400 0.75rem", "700 1.15rem", "400 0.875rem", "600 0.875rem", "700 1.8rem",
	"mono 0.85rem", "mono 0.9rem", "mono 0.8rem", "mono 0.765rem", "mono 0.75rem", "mono 0.7875rem",
}

// fontWarmText has the digits, letters and signs of the result's text.
const fontWarmText = "0123456789 GiB MB % Peak allocated reserved \u00b7 \u2013 \u00d7 \u00b2 \u2192 \u03a3 \u2212 \u2026 \u00b3 \u2014 \u2248"

// warmFonts lays out fontStrikes, hidden, one a browser task (it blocks
// the calling goroutine, never the UI goroutine), and leaves the lines in
// the page (the browser may drop a strike's settings with the last text
// that uses it), marked data-done once all are.
func warmFonts() {
	if !app.IsClient {
		return
	}
	doc := app.Window().Get("document")
	if doc.Call("querySelector", ".font-warm").Truthy() {
		return
	}
	box := doc.Call("createElement", "div")
	box.Set("className", "font-warm")
	box.Call("setAttribute", "aria-hidden", "true")
	doc.Get("body").Call("appendChild", box)
	// One a task: each waits for the browser process, which while the
	// page loads is busy too (five a task, a forced layout of 3 ms of CPU
	// took 60-105 ms, the overview of ranks dropped as the page opened
	// waiting behind it).
	const perTask = 1
	for i := 0; i < len(fontStrikes); i += perTask {
		nextTask(0)
		for _, f := range fontStrikes[i:min(i+perTask, len(fontStrikes))] {
			weight, size, _ := strings.Cut(f, " ")
			s := doc.Call("createElement", "span")
			st := s.Get("style")
			if weight == "mono" {
				st.Set("fontFamily", "var(--mono)")
			} else {
				st.Set("fontWeight", weight)
			}
			st.Set("fontSize", size)
			s.Set("textContent", fontWarmText)
			box.Call("appendChild", s)
		}
		box.Get("offsetWidth") // laid out now
	}
	box.Call("setAttribute", "data-done", "")
}
