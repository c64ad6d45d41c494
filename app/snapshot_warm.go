package app

import (
	"fmt"
	"sync"

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
		func() { wp.chart = deviceChart(d, d.Timeline, d.SiteSeries, u) },
		func() { wp.renderResults(); wp.renderCards(d); wp.renderTimeline(d) },
		func() {
			renderDiagnosing()
			wp.renderDiagnosis(d, true)
			for _, f := range d.Fixes {
				(&FixCode{Fix: f.Fix, ID: "sample"}).Render()
			}
		},
		func() { wp.renderBuckets(d) },
		func() { wp.stacks = siteStacks{dev: d, text: groupStacks(d.TopSites)} },
		func() { wp.renderSites(d) },
		func() { wp.renderSteps(d) },
		func() { wp.renderState(d); wp.renderOOMs(d) },
		func() { wp.renderAnomalies(d) },
		func() { wp.renderSetup(d); wp.renderWarnings(d); wp.renderExplain() },
		func() { gcDue() }, // runtime/metrics' first read: 20-30 ms
	} {
		nextTask(0)
		draw()
	}
}
