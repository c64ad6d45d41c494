package app

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/estimator"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/chart"
	"oomscope/snapshot/load"
)

// snapPhase is where the page is in reading a file.
type snapPhase int

const (
	snapIdle snapPhase = iota
	snapReading
	snapDecoding
	snapAnalysing
	snapDone
	snapFailed
)

// SnapshotPage is the /snapshot page: drop a snapshot.pickle written by
// torch.cuda.memory._dump_snapshot() and see its peak, timeline, culprits,
// buckets, fragmentation and OOMs. Decoding and analysis run in a Web
// Worker (wasm/snapworker); this component only shows the results.
type SnapshotPage struct {
	app.Compo

	phase    snapPhase
	fileName string
	fileSize int64
	progress float64 // 0…1 within the phase
	errMsg   string
	dragOver bool
	// dragDue is set while a drawing of the page for a change of
	// dragOver is due (cleared by Render).
	dragDue bool

	// summary is each device's headline, known before the result.
	summary []analysis.Headline
	// early is the device whose timeline the summary brought, as its
	// headline knows it: until the result, the page draws that timeline
	// (p.chart) for it.
	early *analysis.DeviceReport
	res   *load.Result
	// diagnosing says that res came without the devices' diagnoses
	// (load.Result.Diagnosing), which the worker is making: the answer
	// says "Diagnosing…", the reveal stops before the sections that need
	// them (revealWaits) and the worker, busy, is asked nothing until the
	// diagnosis message adds them (addDiagnosis).
	diagnosing  bool
	revealWaits bool
	dev         int // index into res.Devices
	// unit is how sizes are shown, GiB or GB (units.go).
	unit bytesize.Unit
	// cmp is the comparison of this file (before) with a second one
	// (after), with its own progress (snapshot_compare.go).
	cmp snapCompare

	// state is the allocator state at stateIndex (asked of the worker).
	state      *analysis.State
	stateIndex int
	stateErr   string

	// zoom is the zoomed timeline; nil shows the whole trace.
	zoom *analysis.Series
	// chart caches the timeline's drawing for the current device and zoom.
	chart *chart.Timeline
	// hover is the hovered point (-1: none) and the band under the cursor.
	hover, hoverBand int
	// drag is a range being selected on the chart, as fractions of its width.
	dragging           bool
	dragFrom, dragTo   float64
	markdown, copyNote string
	// reveal says how many result sections are shown: they appear one
	// frame after another so that no frame takes long (see revealMore).
	reveal int
	// stepRows is how many steps the step table lists (at least
	// maxStepRows; "List more" adds to it).
	stepRows int
	// stacks is the text of the top sites' stacks (groupStacks).
	stacks siteStacks
	// steps is the steps' chart drawn (stepsChartSVG).
	steps stepsChart
	// setupModel is the catalog model picked for the estimator link
	// (snapshot_diagnosis.go); "" uses the one the setup matched.
	setupModel string

	// ranks is the overview of many files as the ranks of one job
	// (snapshot_ranks.go); nil for one or two files.
	ranks *snapRanks
	// pendingCompare is the second of two files dropped together: it is
	// compared with the first once that one is analysed.
	pendingCompare app.Value

	// release turns the garbage collector back on after the result shown
	// (holdGC); it does nothing after its first call. addDiagnosis calls
	// it once the diagnosis is shown with its shades.
	release func()

	// mountCtx is the page's context (OnMount), for the workers' answers.
	mountCtx app.Context
	mounted  bool
	// ovCtx is the context of the overview of ranks while it is mounted
	// (ovMounted), to draw it alone (redrawRanks).
	ovCtx     app.Context
	ovMounted bool

	worker app.Value
	// workerFiles is set once a file went to the worker (its memory may
	// hold it); a worker without is kept for the ranks (startRanks).
	workerFiles bool
	onMsg       app.Func
	nextID      int
	fileReq     int // id of the analyze request in flight
	stReq       int // id of the latest state request
	serReq      int // id of the latest series request
}

// OnNav sets the page's head metadata.
func (p *SnapshotPage) OnNav(ctx app.Context) {
	if r, ok := routeByPath("/snapshot"); ok {
		ctx.Page().SetTitle("%s · OOMScope", r.Title)
		ctx.Page().SetDescription(r.Description)
	}
	p.hover = -1
	p.unit = unitFromQuery(Query(ctx))
}

// setUnit switches the page between GiB and GB and keeps it in the URL.
func (p *SnapshotPage) setUnit(ctx app.Context, u bytesize.Unit) {
	p.unit = u
	ReplaceQuery(ctx, withUnit(Query(ctx), u))
	if p.chart != nil { // the axis ticks are round numbers of the unit
		p.chart = p.newChart(p.chart.Points, p.chart.Bands)
	}
}

// warmAfter is how long after mounting the page asks the worker to warm
// up (load.RequestWarm): a user takes longer to pick a file.
const warmAfter = time.Second

// OnMount starts the analysis worker before a file comes: loading and
// compiling its WebAssembly then does not count against the first file.
func (p *SnapshotPage) OnMount(ctx app.Context) {
	p.mountCtx, p.mounted = ctx, true
	p.ensureWorker(ctx)
	// While the user picks a file, the worker gets its code optimised;
	// not at once: a warm-up under way when a file comes slowed its
	// decoding (the optimising compiles it starts share the cores).
	// With an id, the worker answers with its sample (warmSample).
	ctx.After(warmAfter, func(app.Context) {
		if p.worker != nil && p.ranks == nil { // not while a pool of ranks works
			p.nextID++
			p.postRequest(load.Request{Type: load.RequestWarm, ID: p.nextID}, nil)
		}
	})
	// The setup section lists the estimator's catalog, which is parsed on
	// first use (tens of milliseconds of wasm): parse it now, while the
	// page waits for a file, rather than in a frame of the result.
	ctx.After(10*time.Millisecond, func(app.Context) { estimator.Models() })
	// The overview of ranks' code, while no file came (warmRanks).
	ctx.Async(func() {
		nextTask(30 * time.Millisecond)
		if p.phase == snapIdle && p.ranks == nil {
			warmRanks(p.unit)
		}
	})
	// The result's fonts, which Chromium on Linux asks its browser process
	// for in the middle of a layout (warmFonts).
	ctx.Async(func() {
		nextTask(100 * time.Millisecond)
		warmFonts()
	})
	// The page's first collections are slower, the collector's code not
	// yet compiled for speed by the browser: the first, after the 1 GiB
	// distinct-stacks file's diagnosis (releaseGC), took 58-65 ms of the
	// main thread; after two collections of the page's few megabytes
	// here, each a task of under 35 ms while the user picks a file, 15-35
	// ms. Not while a result is shown (it holds the collector off).
	if app.IsClient {
		ctx.Async(func() {
			for range 2 {
				nextTask(1500 * time.Millisecond)
				// Not while an overview of ranks is analysed: the
				// first collection (the collector's code compiled on
				// its first call) took 28 ms of CPU, 113-144 ms of
				// the page's thread with two pool workers busy.
				for ranksRunning.Load() {
					nextTask(500 * time.Millisecond)
				}
				warmGC()
			}
		})
	}
}

// lasting is the context the workers report through: the page's own, not
// that of the element an event came from, which may be gone (a rank's
// button) when the answer comes and would then drop it.
func (p *SnapshotPage) lasting(ctx app.Context) app.Context {
	if p.mounted {
		return p.mountCtx
	}
	return ctx
}

// OnDismount stops the worker: its memory holds the whole snapshot.
func (p *SnapshotPage) OnDismount() {
	p.mounted = false
	p.stopWorker()
	p.stopRanks()
}

// stopWorker ends the worker (a new one starts with the next file).
func (p *SnapshotPage) stopWorker() {
	p.workerFiles = false
	if p.worker != nil {
		p.worker.Call("terminate")
		if p.onMsg != nil {
			p.worker.Call("removeEventListener", "message", p.onMsg)
			p.worker.Call("removeEventListener", "error", p.onMsg)
		}
		p.worker = nil
	}
	if p.onMsg != nil {
		p.onMsg.Release()
		p.onMsg = nil
	}
}

// fail shows an error; the page stays usable for another file.
func (p *SnapshotPage) fail(ctx app.Context, msg string) {
	p.phase, p.errMsg = snapFailed, msg
	if p.diagnosing {
		// The diagnosis failed: the result without it would say
		// "Diagnosing…" for ever; the error is shown alone, as when the
		// analysis fails.
		p.res, p.chart, p.diagnosing, p.revealWaits = nil, nil, false, false
	}
	markAfterRender(ctx, "data-snapshot-error", strconv.Itoa(p.fileReq))
}

// markAfterRender sets a <body> marker once the current update is drawn,
// so a test that sees the marker also sees the page that goes with it.
func markAfterRender(ctx app.Context, attr, value string) {
	ctx.Defer(func(app.Context) { MarkBody(attr, value) })
}

// markTimeline sets the <body> marker data-snapshot-timeline to the page
// clock once the current update is drawn, if it is not set yet: it says
// when the file's memory curve first came on screen (from the summary or
// from the result, for the benchmark's drop→timeline); the drawings after
// it (the result's site bands, another device) leave it. reset clears it
// for the next file.
func markTimeline(ctx app.Context) {
	ctx.Defer(func(app.Context) {
		if !app.IsClient {
			return
		}
		if v := app.Window().Get("document").Get("body").Call("getAttribute", "data-snapshot-timeline"); v.Truthy() {
			return
		}
		MarkBody("data-snapshot-timeline", now())
	})
}

// timeMark records when the page reached a point of showing a result, in
// window.__oomscopeMarks[name] as milliseconds since the epoch
// (performance.timeOrigin + performance.now(), comparable with the
// worker's marks), for the browser benchmark (OOMSCOPE_BENCH_TRACE sets
// the object; without it nothing is recorded).
func timeMark(name string) {
	marks := app.Window().Get("__oomscopeMarks")
	if !marks.Truthy() {
		return
	}
	perf := app.Window().Get("performance")
	marks.Set(name, perf.Get("timeOrigin").Float()+perf.Call("now").Float())
}

// now is the page clock in milliseconds, for the timing markers.
func now() string {
	return fmt.Sprintf("%.0f", app.Window().Get("performance").Call("now").Float())
}

// guard turns a panic in JavaScript interop into an error message instead
// of ending the program (a panic would kill every handler of the page).
func (p *SnapshotPage) guard(ctx app.Context, what string) {
	if r := recover(); r != nil {
		p.fail(ctx, fmt.Sprintf("%s failed: %v", what, r))
	}
}

// onDragOver marks the drop zone while files are dragged over it. The
// browser fires dragover every 50 ms or so: the page is drawn again only
// when the mark changes.
func (p *SnapshotPage) onDragOver(ctx app.Context, e app.Event) {
	e.PreventDefault()
	p.setDragOver(ctx, true)
}

func (p *SnapshotPage) onDragLeave(ctx app.Context, e app.Event) { p.setDragOver(ctx, false) }

// setDragOver sets the drop zone's mark, drawing the page only if it
// changed.
func (p *SnapshotPage) setDragOver(ctx app.Context, on bool) {
	if p.dragOver == on {
		ctx.PreventUpdate()
		return
	}
	p.dragOver, p.dragDue = on, true
}

func (p *SnapshotPage) onDrop(ctx app.Context, e app.Event) {
	defer p.guard(ctx, "Reading the dropped file")
	e.PreventDefault()
	p.dragOver = false
	dt := e.Get("dataTransfer")
	files, folder := filesOf(dt.Get("files"))
	for _, f := range files {
		// The browser lists a dropped folder as a file; its files are
		// read from its entry, asynchronously. Only a name that is not a
		// snapshot's makes the page look (asking 128 files for their
		// entries took tens of milliseconds).
		if load.IsSnapshotName(f.name) {
			continue
		}
		if entries, ok := droppedFolders(dt); ok {
			p.readFolders(ctx, entries)
			return
		}
		break
	}
	p.openFiles(ctx, files, folder)
	p.drawLater(ctx)
}

func (p *SnapshotPage) onPick(ctx app.Context, e app.Event) {
	timeMark("picked")
	defer p.guard(ctx, "Reading the chosen file")
	list := ctx.JSSrc().Get("files")
	if list.Length() == 0 {
		return
	}
	files, folder := filesOf(list)
	p.openFiles(ctx, files, folder)
	ctx.JSSrc().Set("value", "") // choosing the same file again fires change again
	p.drawLater(ctx)
}

// drawLater draws the page in a browser task after the event's, once a
// file is handed to the worker (or the overview of ranks set up): the
// hand-over's task then does not also draw the progress line (the
// overview). go-app draws an update at its next frame, due
// 8 ms after the event, and a frame due while Go still runs is drawn in
// the same browser task: the hand-over's own work (the files, the
// request, postMessage) takes about that long.
func (p *SnapshotPage) drawLater(ctx app.Context) {
	if p.phase != snapReading && p.ranks == nil || !app.IsClient {
		return
	}
	ctx.PreventUpdate()
	if p.dragDue {
		// The drawing a drag's mark asked for, not done yet (files
		// dropped as soon as dragged: go-app draws 8 ms after an
		// event), is put off too.
		ctx.PreventUpdate()
		p.dragDue = false
	}
	ctx.Async(func() {
		nextTask(0)
		ctx.Dispatch(nil)
	})
}

// read hands the file to the worker, which reads, decodes and analyses it.
func (p *SnapshotPage) read(ctx app.Context, file app.Value) {
	if p.phase == snapReading || p.phase == snapDecoding || p.phase == snapAnalysing || p.cmp.busy() {
		// The worker is busy with the previous file and cannot be
		// interrupted: drop it with its memory.
		p.stopWorker()
	}
	p.reset()
	p.nextID++
	id := p.nextID
	p.fileReq = id
	name := file.Get("name").String()
	p.fileName = shown(name)
	p.fileSize = int64(file.Get("size").Float())
	if p.fileSize == 0 {
		p.fail(ctx, fmt.Sprintf("%s is empty (0 bytes). Write the snapshot with torch.cuda.memory._dump_snapshot(\"snapshot.pickle\").", p.fileName))
		return
	}
	p.phase = snapReading
	if !sampleRead() {
		go warmUp()
	}
	p.ensureWorker(ctx)
	// The File itself goes to the worker, which reads it in slices: the
	// bytes never cross the main thread.
	p.postRequest(load.Request{Type: load.RequestAnalyze, ID: id, Name: name}, file)
	timeMark("sent")
}

// postRequest sends a request (load's contract), with a File when not nil.
func (p *SnapshotPage) postRequest(r load.Request, file app.Value) {
	msg := app.Window().Get("Object").New()
	msg.Set("json", load.EncodeRequest(r))
	if file != nil {
		msg.Set("file", file)
		p.workerFiles = true
	}
	p.worker.Call("postMessage", msg)
}

// warmUp runs the result's decoding once on a small sample while the
// worker is busy: the browser compiles WebAssembly functions on their first
// call, and doing that now keeps it out of the frame that shows the result.
// Only for a file that comes before the worker's own sample was read
// (warmSample), which does the same and more: it was a task of 8-12 ms of
// CPU (encoding the sample as JSON) 30 ms after the hand-over.
func warmUp() {
	time.Sleep(30 * time.Millisecond)
	sample := load.Response{Type: load.ResponseResult, Result: &load.Result{Report: &analysis.Report{Devices: []analysis.DeviceReport{{
		Actions:   map[string]int{"alloc": 1},
		TopSites:  []analysis.SiteBytes{{Site: analysis.Site{Label: "x.py:1 f"}, Stack: []string{"x.py:1 f"}}},
		OOMEvents: []analysis.OOMEvent{{}}, CategoryRules: []analysis.RuleBytes{{}}, Timeline: []analysis.Point{{}},
		SiteSeries: &analysis.SiteSeries{Sites: []string{"x"}, SiteIndex: []int32{0}, Values: [][]int64{{0}}}, Warnings: []string{"w"},
	}}, Explain: map[string]string{"a": "b"}}}}
	if js, bufs, err := load.EncodeResponse(sample); err == nil {
		if r, err := load.DecodeResponse(js, bufs); err == nil {
			newFirstChart(r.Result, bytesize.Binary) // the chart's code too
		}
	}
}

// reset forgets the previous file.
func (p *SnapshotPage) reset() {
	p.errMsg, p.res, p.summary, p.early, p.state, p.stateErr, p.zoom = "", nil, nil, nil, nil, "", nil
	p.chart, p.markdown, p.copyNote, p.cmp, p.setupModel, p.stacks, p.steps = nil, "", "", snapCompare{}, "", siteStacks{}, stepsChart{}
	p.progress, p.dev, p.hover, p.dragging, p.stepRows = 0, 0, -1, false, 0
	p.diagnosing, p.revealWaits = false, false
	MarkBody("data-snapshot-ready", "")
	MarkBody("data-snapshot-diagnosis", "")
	MarkBody("data-snapshot-summary", "")
	MarkBody("data-snapshot-timeline", "")
	MarkBody("data-snapshot-error", "")
}

// workerMsg is a message from the worker (load.Response), decoded out of
// its JS object, or why it could not be.
type workerMsg struct {
	load.Response
	err error
	// first is a result's first timeline, laid out with its reading.
	first *firstChart
	// release is a result's releaseGC, to call once (SnapshotPage.release).
	release func()
}

// jsBuffers copies an array of ArrayBuffers into Go.
func jsBuffers(v app.Value) [][]byte {
	return copyViews(jsViews(v), nil)
}

// jsViews returns a Uint8Array over each ArrayBuffer of an array (nil if
// v is not one), for copyViews.
func jsViews(v app.Value) []app.Value {
	if v.Type() != app.TypeObject {
		return nil
	}
	var out []app.Value
	for i := 0; i < v.Length(); i++ {
		out = append(out, app.Window().Get("Uint8Array").New(v.Index(i)))
	}
	return out
}

// viewsLen is the bytes of a message's buffers (jsViews), not copied.
func viewsLen(views []app.Value) int {
	n := 0
	for _, u8 := range views {
		n += u8.Length()
	}
	return n
}

// copySlice is the most bytes copyViews copies between two pauses.
const copySlice = 1 << 20

// copySliceBytes is copySlice, or for the e2e tests a number in
// window.__oomscopeCopySlice; each pause copyViews then makes is counted in
// window.__oomscopeCopyPauses.
func copySliceBytes() (n int, knob bool) {
	if v := app.Window().Get("__oomscopeCopySlice"); v.Type() == app.TypeNumber && v.Int() > 0 {
		return v.Int(), true
	}
	return copySlice, false
}

// copyViews copies Uint8Arrays into Go. With a pause, it calls pause
// after each copySlice bytes (a browser task each, where pause is
// nextTask): the steps of the 4 GiB distinct-stacks file's diagnosis,
// copied in the message's task, made it a task of 30 ms of CPU, 57 ms on
// the 2-core machine with the worker busy; 4 MiB a task, tasks of 11.5 ms
// of CPU (the copy into new Go memory is slower than a memcpy).
func copyViews(views []app.Value, pause func()) [][]byte {
	var out [][]byte
	slice, knob := copySliceBytes()
	done := 0
	for _, u8 := range views {
		b := make([]byte, u8.Length())
		for off := 0; off < len(b); {
			if pause != nil && done >= slice {
				pause()
				done = 0
				if knob {
					w, k := app.Window(), 0
					if c := w.Get("__oomscopeCopyPauses"); c.Type() == app.TypeNumber {
						k = c.Int()
					}
					w.Set("__oomscopeCopyPauses", k+1)
				}
			}
			end := len(b)
			if pause != nil {
				end = min(end, off+slice-done)
			}
			if off == 0 && end == len(b) {
				app.CopyBytesToGo(b, u8)
			} else {
				app.CopyBytesToGo(b[off:end], u8.Call("subarray", off, end))
			}
			done += end - off
			off = end
		}
		out = append(out, b)
	}
	return out
}

func jsString(v app.Value, k string) string {
	if f := v.Get(k); f.Type() == app.TypeString {
		return f.String()
	}
	return ""
}

func jsNumber(v app.Value, k string) float64 {
	if f := v.Get(k); f.Type() == app.TypeNumber {
		return f.Float()
	}
	return 0
}

// ensureWorker starts the analysis worker once.
func (p *SnapshotPage) ensureWorker(ctx app.Context) app.Value {
	if p.worker != nil {
		return p.worker
	}
	ctx = p.lasting(ctx)
	w := preStartedWorker()
	if w == nil {
		w = app.Window().Get("Worker").New(Href("/web/snapworker.js"))
	}
	// resultSent is closed once the last result message read has been
	// drawn: a diagnosis message, small and read sooner, waits for it so
	// that it never comes before its result, nor in its frame.
	var resultSent chan struct{}
	// summaryShown is closed once the last summary message read has been
	// drawn and painted if it brought a memory curve (at once if not): a
	// result that comes before that waits for it, so that the curve is on
	// screen first (a result read at once, in its message's task, put the
	// summary's frame after it).
	var summaryShown chan struct{}
	// diagnosed is closed once the next message after a result without
	// its diagnoses has been drawn, if that is not the diagnosis (an
	// error): the collector, off while the result is read and drawn, stays
	// off until then. A collection between the two (tens of milliseconds
	// of the page's thread on a 55 MB file) put the diagnosis's frame after
	// it. A diagnosis turns it back on itself, once shown (addDiagnosis).
	var diagnosed chan struct{}
	p.onMsg = app.FuncOf(func(this app.Value, args []app.Value) any {
		defer func() {
			if r := recover(); r != nil {
				ctx.Dispatch(func(ctx app.Context) { p.fail(ctx, fmt.Sprintf("Unreadable message from the analysis worker: %v", r)) })
			}
		}()
		if len(args) == 0 {
			return nil
		}
		if args[0].Get("type").String() == "error" && args[0].Get("data").Type() != app.TypeObject {
			// The worker script itself failed to load.
			m := workerMsg{Response: load.Response{Type: load.ResponseError, Error: "the analysis worker could not start: " + jsString(args[0], "message")}}
			ctx.Dispatch(func(ctx app.Context) { p.onWorker(ctx, m) })
			return nil
		}
		d := args[0].Get("data")
		if d.Get("sample").Truthy() {
			// The worker's sample (warm request): read and drawn
			// nowhere, off the UI goroutine.
			js, bufs := jsString(d, "json"), jsBuffers(d.Get("buffers"))
			go p.warmSample(js, bufs)
			return nil
		}
		js := jsString(d, "json")
		// A result is read, laid out and drawn with the collector off
		// (holdGC): its garbage is collected after the first frame that
		// shows it, not before.
		result := jsString(d, "type") == load.ResponseResult
		if result {
			timeMark("received")
		}
		var sent, before chan struct{}
		diagnosis, summary := false, false
		switch jsString(d, "type") {
		case load.ResponseSummary:
			summary = true
			sent = make(chan struct{})
			summaryShown = sent
		case load.ResponseResult:
			sent = make(chan struct{})
			resultSent = sent
			before = summaryShown
		case load.ResponseDiagnosis:
			timeMark("received_diagnosis")
			diagnosis, before = true, resultSent
		}
		// The buffers are copied into Go here if the message is read in
		// this task (small, quick), else in the reading's tasks
		// (copyViews).
		views := jsViews(d.Get("buffers"))
		size := len(js) + viewsLen(views)
		var release func()
		if result {
			holdGC()
			release = sync.OnceFunc(releaseGC)
		}
		// A small diagnosis is read and handed over at once (go-app
		// draws it in a task of its own); a big one (the steps and phases
		// of a long trace: 5,340 steps in the 55 MB distinct-stacks file)
		// is read as a result is, apart from the message's task, which
		// with its reading and drawing took 64 ms of the main thread.
		// So is a summary: its headlines and its timelines (25 KB a
		// device), drawn at once.
		small := (diagnosis || summary) && size < 64<<10
		// A small result (the 3.2 MB real file's: 42 KB of JSON, a few
		// milliseconds to read and lay out) is read, laid out and handed
		// over in its message's task: three browser tasks for it, each
		// behind whatever the browser had queued meanwhile (the summary's
		// frame, the diagnosis's message), put off its frame by 10-50 ms
		// on a loaded machine for no task saved from growing long.
		quick := result && quickRead(size)
		var bufs [][]byte
		if small || quick {
			bufs = copyViews(views, nil)
		}
		go func() {
			if result && before != nil {
				// The summary's frame first (a second at most: it is
				// due within a frame or two).
				select {
				case <-before:
				case <-time.After(time.Second):
				}
				before = nil
			}
			if diagnosis && !small && before != nil {
				// A big diagnosis is read once its result is drawn:
				// read meanwhile, its slices shared the tasks of the
				// result's reading and frame (a sixth of the 55 MB
				// distinct-stacks file's result frame was its steps).
				<-before
				before = nil
			}
			// Parsing runs outside the UI goroutine's frame: parsing and
			// rendering then take two tasks, and the browser can draw
			// between them. A large answer is parsed in a task of its own
			// too: a goroutine started here runs in the message's task
			// (Go returns to the browser only when no goroutine can run),
			// after the copy of a small or quick message's buffers (a big
			// one's are copied below, a slice a task).
			if !small && !quick && (len(js) > 4096 || len(views) > 0) {
				nextTask(0)
			}
			// A big message is read in slices (its buffers' copy, a big
			// file's steps: 485,000 rows for a 1 GB trace), handing the
			// browser its thread between slices once a task has run
			// readBudget (with the copy's test knob, after every slice).
			budget := readBudget
			if _, knob := copySliceBytes(); knob {
				budget = 0
			}
			pause := newPacer(budget, time.Now, func() { nextTask(0) })
			if !small && !quick {
				bufs = copyViews(views, pause)
			}
			r, err := load.DecodeResponsePaced(js, bufs, pause)
			m := workerMsg{Response: r, err: err, release: release}
			if result {
				timeMark("decoded")
			}
			if len(js) > 4096 && !small && !quick {
				nextTask(0)
			}
			var hold chan struct{}
			if err == nil && r.Result != nil && r.Result.Diagnosing {
				hold = make(chan struct{})
				diagnosed = hold
			}
			if err == nil && r.Type == load.ResponseResult && r.Result != nil {
				// The timeline too, in a task of its own: the result's
				// first frame then shows it with the answer.
				// Its drawing parsed too (preparseSVG): the frame
				// then only puts it in the page.
				m.first = newFirstChart(r.Result, p.unit)
				if m.first != nil && m.first.chart != nil {
					preparseSVG(m.first.chart.SVG)
				}
				timeMark("chart")
				if !quick {
					nextTask(0)
				}
			}
			if err == nil && summary {
				// The memory curve, laid out and parsed here, is drawn
				// with the summary.
				m.first = newSummaryChart(r.Summary, r.Timelines, p.unit)
				if m.first != nil && m.first.chart != nil {
					preparseSVG(m.first.chart.SVG)
				}
			}
			if before != nil {
				<-before
			}
			drawn := make(chan struct{})
			ctx.Dispatch(func(ctx app.Context) {
				p.onWorker(ctx, m)
				// Run once go-app has drawn the update (its next frame,
				// on a timer of its own).
				ctx.Defer(func(app.Context) { close(drawn) })
			})
			if result {
				// After the frame that draws the result has been painted:
				// a collection started earlier ran in that frame's task
				// (20-30 ms of its 50 on a 55 MB file).
				<-drawn
				// The diagnosis, if it came meanwhile, is handed over
				// once the result is drawn and painted: go-app then draws
				// it at its next frame, a task of its own. Handed over as
				// soon as the result was, both were drawn in one frame
				// (52 ms of CPU on the 3.2 MB real file); handed over in
				// the result's frame, its update and, on a loaded machine,
				// its drawing too (go-app's next frame is due 8 ms later)
				// joined that task (39 ms of CPU).
				afterFrame()
				close(sent)
				if hold != nil {
					select {
					case <-hold:
					case <-time.After(10 * time.Second): // nothing came
					}
				}
				release()
			} else if summary {
				if m.first != nil {
					// Its memory curve on screen before the result.
					<-drawn
					afterFrame()
				}
				close(sent)
			} else if diagnosis && err == nil {
				diagnosed = nil
			} else if diagnosed != nil {
				<-drawn
				afterFrame()
				if w := diagnosed; w != nil {
					diagnosed = nil
					close(w)
				}
			}
		}()
		return nil
	})
	w.Call("addEventListener", "message", p.onMsg)
	w.Call("addEventListener", "error", p.onMsg)
	p.worker = w
	return w
}

// quickResult is the size (JSON and buffers) under which a result's
// message is read, laid out and handed over in its own task (see
// ensureWorker): the 3.2 MB real file's is 124 KB, the 55 and 200 MB
// repeated-stacks files' 170 and 132 KB (their timeline's buffer alone 82
// KB), the 55 MB distinct-stacks file's 451 KB (its steps); that of the
// 200 MB one (1.4 MB) still takes four tasks.
const quickResult = 512 << 10

// quickRead says whether a result message of n bytes is read in its own
// task (n under quickResult). For the e2e tests, a number in
// window.__oomscopeQuickResult replaces quickResult (0: every result in
// four tasks), and the answer is then kept in window.__oomscopeQuickTaken.
func quickRead(n int) bool {
	knob := app.Window().Get("__oomscopeQuickResult")
	if knob.Type() != app.TypeNumber {
		return n < quickResult
	}
	quick := n < knob.Int()
	app.Window().Set("__oomscopeQuickTaken", quick)
	return quick
}

// preStartedWorker takes the analysis worker that static/web/site.js
// started with the page (before this app had loaded, so that its start
// does not delay the first file), once; nil if there is none or it failed
// before the page listened (it is then ended and a new one started).
func preStartedWorker() app.Value {
	win := app.Window()
	w := win.Get("__oomscopeSnapWorker")
	if !w.Truthy() {
		return nil
	}
	win.Set("__oomscopeSnapWorker", nil)
	w.Set("__oomscopeAdopted", true)
	if w.Get("__oomscopeFailed").Truthy() {
		w.Call("terminate")
		return nil
	}
	return w
}

// onWorker applies a worker message; stale answers are ignored.
func (p *SnapshotPage) onWorker(ctx app.Context, m workerMsg) {
	if m.err != nil {
		m.Response = load.Response{Type: load.ResponseError, ID: m.ID, Error: "its answer could not be read: " + m.err.Error()}
	}
	if p.onCompareMsg(ctx, m) {
		return
	}
	switch m.Type {
	case load.ResponseProgress:
		if m.ID != p.fileReq || m.Progress == nil {
			return
		}
		p.phase, p.progress = progressOf(m.Progress)
	case load.ResponseSummary:
		if m.ID != p.fileReq {
			return
		}
		timeMark("summary")
		p.summary = m.Summary
		markAfterRender(ctx, "data-snapshot-summary", now())
		if f := m.first; f != nil && f.chart != nil && f.unit == p.unit && p.res == nil {
			// The memory curve before the result: its site bands, its
			// steps and the rest come with it.
			p.early, p.chart = f.rep, f.chart
			markTimeline(ctx)
		}
	case load.ResponseResult:
		if m.ID != p.fileReq || m.Result == nil {
			return
		}
		timeMark("dispatched")
		r := m.Result
		p.res, p.phase, p.diagnosing, p.release, p.early = r, snapDone, r.Diagnosing, m.release, nil
		if !r.Diagnosing {
			markAfterRender(ctx, "data-snapshot-diagnosis", now())
		}
		p.dev = max(0, r.Busiest())
		p.selectDevice(ctx, p.dev)
		if f := m.first; f != nil && f.chart != nil && f.dev == p.dev && f.unit == p.unit {
			p.chart, p.reveal = f.chart, timelineStage
			markTimeline(ctx)
		}
		if f := p.pendingCompare; f != nil {
			p.pendingCompare = nil
			p.compareWith(ctx, f)
		}
		// The summary comes first: on a phone, show it (it is below the
		// drop zone).
		revealOnNarrow(ctx, "snap-results")
	case load.ResponseDiagnosis:
		if m.ID != p.fileReq || m.Diagnosis == nil || p.res == nil || !p.diagnosing {
			return
		}
		timeMark("dispatched_diagnosis")
		p.addDiagnosis(ctx, m.Diagnosis)
	case load.ResponseState:
		if m.ID != p.stReq || m.State == nil {
			return
		}
		p.state, p.stateErr = m.State, ""
		markAfterRender(ctx, "data-snapshot-state", strconv.Itoa(m.State.Index))
	case load.ResponseSeries:
		if m.ID != p.serReq || m.Series == nil {
			return
		}
		p.zoom = m.Series
		p.chart = p.newChart(m.Series.Points, m.Series.Sites)
	case load.ResponseError:
		if m.ID == 0 {
			// The worker itself failed or stopped (out of memory, say).
			p.stopWorker()
			p.cmp = snapCompare{}
		}
		msg := m.Error
		if m.Internal {
			msg = "internal error, please file an issue: " + msg
		}
		switch {
		case m.ID == p.fileReq || m.ID == 0:
			msg := fmt.Sprintf("Could not analyse %s: %s", p.fileName, msg)
			if m.ID == 0 && p.fileSize > 512<<20 {
				// WebAssembly has at most 4 GiB of memory, which a file of
				// this size and its decoded form can exhaust.
				msg += fmt.Sprintf(". A %s file may need more memory than a browser tab gets: run "+
					"`oomscope snapshot %s` on the command line, or record fewer entries (max_entries).", bytesize.Format(p.fileSize, p.unit), p.fileName)
			}
			p.fail(ctx, msg)
		case m.ID == p.stReq || m.ID == p.serReq:
			p.stateErr = msg
		}
	}
}

// addDiagnosis adds the devices' diagnoses to the result shown, in place:
// the answer replaces "Diagnosing…" in this frame. After it, in tasks of
// their own: the timeline gets its step and phase shades (laid out there,
// as the first timeline is with the result's reading); once they are
// drawn the collector comes back (release: the diagnosis's rows, read and
// dropped, had grown the 1 GiB distinct-stacks file's page heap past its
// goal, so the cycle is run there, before the reveal's sections rather
// than in the task of one of them); then the reveal goes on to the
// sections that need the diagnosis. The other sections stay as drawn.
func (p *SnapshotPage) addDiagnosis(ctx app.Context, dg *load.Diagnosis) {
	if err := p.res.AddDiagnosis(dg); err != nil {
		p.fail(ctx, "The analysis worker's diagnosis does not fit its result: "+err.Error())
		return
	}
	p.diagnosing = false
	markAfterRender(ctx, "data-snapshot-diagnosis", now())
	if d := p.device(); d != nil && p.zoom != nil {
		p.chart = p.newChart(p.zoom.Points, p.zoom.Sites)
	}
	res, file, dev, unit, old, release := p.res, p.fileReq, p.dev, p.unit, p.chart, p.release
	shade := old != nil && p.zoom == nil && dev >= 0 && dev < len(res.Devices)
	drawn := make(chan struct{})
	ctx.Defer(func(app.Context) { close(drawn) })
	ctx.Async(func() {
		<-drawn
		afterFrame()
		var c *chart.Timeline
		if shade {
			nextTask(0)
			c = withPhaseShades(old, &res.Devices[dev])
			if c.ShadesSVG != "" {
				// Parsed in a task of their own: the ~1,000 shades of
				// the 55 MB distinct-stacks file (70 KB, a <title>
				// each) take 14 ms to lay out and as long to parse.
				nextTask(0)
				preparseSVG(c.ShadesSVG)
			}
		}
		shown := make(chan struct{})
		ctx.Dispatch(func(ctx app.Context) {
			ctx.Defer(func(app.Context) { close(shown) })
			if p.res != res {
				return
			}
			if c != nil && p.fileReq == file && p.dev == dev && p.unit == unit && p.chart == old {
				p.chart = c
			}
		})
		<-shown
		afterFrame()
		if release != nil {
			release()
		}
		ctx.Dispatch(func(ctx app.Context) {
			if p.res == res && p.revealWaits {
				p.revealWaits = false
				p.revealMore(ctx, p.fileReq, p.dev)
			}
		})
	})
}

// progressOf turns a progress message into the page's phase and fraction.
func progressOf(pr *load.Progress) (snapPhase, float64) {
	if pr.Stage != load.StageDecode {
		return snapAnalysing, 1
	}
	if pr.Total <= 0 {
		return snapDecoding, 0
	}
	return snapDecoding, float64(pr.Done) / float64(pr.Total)
}

// device returns the report of the device shown.
func (p *SnapshotPage) device() *analysis.DeviceReport {
	if p.res == nil || p.dev < 0 || p.dev >= len(p.res.Devices) {
		return nil
	}
	return &p.res.Devices[p.dev]
}

// selectDevice shows device i at its peak, unzoomed. The summary cards
// come first; the other sections follow frame by frame (revealMore).
func (p *SnapshotPage) selectDevice(ctx app.Context, i int) {
	p.dev, p.zoom, p.hover, p.chart, p.reveal, p.stepRows = i, nil, -1, nil, 1, 0
	p.revealWaits = false
	if p.device() == nil {
		return
	}
	if p.summary == nil {
		// No summary came before the result (an older worker): the cards
		// are the summary.
		ctx.Defer(func(app.Context) { MarkBody("data-snapshot-summary", now()) })
	}
	answer := "snap-diagnosis"
	if p.diagnosing {
		answer = "snap-diagnosing"
	}
	ctx.Defer(func(app.Context) { scrollToAnswer(answer) })
	p.revealMore(ctx, p.fileReq, i)
}

// The stages in which a file's result is shown, one browser task each
// (revealMore): the answer and the cards first, then the timeline, then the
// other sections a few at a time (renderResults). A stage that mounted
// more than about a hundred elements took a main-thread task of over 50 ms.
// While the result has no diagnosis yet (SnapshotPage.diagnosing) the
// reveal stops at the timeline until it comes (addDiagnosis): the page
// then waits idle, and draws the answer as soon as it comes, rather than
// after a stage under way (the categories and sites drawn meanwhile put
// 50-100 ms between the diagnosis's arrival and its frame on a loaded
// 2-core machine, and took the worker's core).
const (
	// timelineStage shows the timeline.
	timelineStage = 2
	// fixesStage shows the diagnosis's fixes (half of the answer's
	// elements: each fix's code, copy button and guide link).
	fixesStage = 3
	// bucketsStage shows the categories at the peak.
	bucketsStage = 4
	// sitesStage shows the top allocation sites.
	sitesStage = 5
	// stepsStage shows the steps' chart.
	stepsStage = 6
	// stepTableStage lists the first steps in their table: with the
	// chart, Blink restyled 710 elements and laid out 800 in the task
	// after the stage (18-38 ms of CPU on the 55 and 200 MB
	// distinct-stacks files).
	stepTableStage = 7
	// stateStage shows the allocator state (and asks the worker for it)
	// and the out-of-memory events.
	stateStage = 8
	// anomaliesStage shows the anomalies.
	anomaliesStage = 9
	// moreFixesStage puts the fixes past the first shownFixes in their
	// folded list (its "N more fixes" line is shown from fixesStage on):
	// each fix is a dozen elements and a component for go-app to mount,
	// and up to 6 more of them made the fixes' stage a long task.
	moreFixesStage = 10
	// setupStage shows the setup for the estimator.
	setupStage = 11
	// revealStages is the last stage: warnings and explanations (with
	// the setup, one task of 13-34 ms of CPU).
	revealStages = 12
)

// revealMore shows the next result section after a pause that lets the
// browser draw a frame: building everything at once took more than 100 ms
// of main-thread time on a slow machine.
func (p *SnapshotPage) revealMore(ctx app.Context, file, dev int) {
	var stacks *siteStacks
	var steps *stepsChart
	if d := p.device(); d != nil && p.reveal+1 == sitesStage && p.stacks.dev != d {
		// The sites' stacks are worked out before their stage, in tasks of
		// their own (groupStacks).
		stacks = &siteStacks{dev: d}
	} else if d != nil && p.reveal+1 == stepsStage && len(d.Steps) > 0 && (p.steps.dev != d || p.steps.unit != p.unit) {
		// So is the steps' chart (drawSteps): drawn in the stage's
		// frame, it was 13 of the 32 ms of CPU of that task on the 4
		// GiB distinct-stacks file.
		steps = &stepsChart{dev: d, unit: p.unit}
	}
	ctx.Async(func() {
		nextTask(20 * time.Millisecond)
		if stacks != nil {
			stacks.text = groupStacks(stacks.dev.TopSites)
		}
		if steps != nil {
			steps.svg = drawSteps(steps.dev, steps.unit)
			nextTask(0)
		}
		ctx.Dispatch(func(ctx app.Context) { p.revealStage(ctx, file, dev, stacks, steps) })
	})
}

// revealStage shows the next result section (revealMore), with the sites'
// stacks or the steps' chart when they were worked out for it.
func (p *SnapshotPage) revealStage(ctx app.Context, file, dev int, stacks *siteStacks, steps *stepsChart) {
	d := p.device()
	if p.fileReq != file || p.dev != dev || d == nil || p.reveal >= revealStages {
		return
	}
	if stacks != nil && stacks.dev == d {
		p.stacks = *stacks
	}
	if steps != nil && steps.dev == d && steps.unit == p.unit {
		p.steps = *steps
	}
	if p.diagnosing && p.reveal >= timelineStage {
		p.revealWaits = true // addDiagnosis goes on
		// Nothing changed: no drawing of the page (its whole tree
		// compared again) while the worker diagnoses beside it.
		ctx.PreventUpdate()
		return
	}
	p.reveal++
	switch p.reveal {
	case timelineStage:
		p.chart = p.newChart(d.Timeline, d.SiteSeries)
		markTimeline(ctx)
	case stateStage:
		p.requestState(ctx, d.PeakIndex)
	case revealStages:
		ctx.Defer(func(app.Context) { MarkBody("data-snapshot-ready", now()) })
		return
	}
	p.revealMore(ctx, file, dev)
}

// post sends a query about the device shown to the worker and returns its
// id.
func (p *SnapshotPage) post(ctx app.Context, r load.Request) int {
	defer p.guard(ctx, "Asking the analysis worker")
	d := p.device()
	if d == nil || p.worker == nil || p.diagnosing {
		// While it diagnoses, the worker holds no analysis to ask about.
		return -1
	}
	p.nextID++
	r.ID, r.Device = p.nextID, d.Device
	p.postRequest(r, nil)
	return p.nextID
}

// requestState asks the worker for the allocator state after entry i.
func (p *SnapshotPage) requestState(ctx app.Context, i int) {
	p.stateIndex = i
	p.stReq = p.post(ctx, load.Request{Type: load.RequestState, Index: i})
}

// requestZoom asks the worker for the timeline between two entries.
func (p *SnapshotPage) requestZoom(ctx app.Context, from, to int) {
	if to-from < 2 {
		return
	}
	p.serReq = p.post(ctx, load.Request{Type: load.RequestSeries, From: from, To: to, Points: load.TimelinePoints})
}

func (p *SnapshotPage) onDevice(ctx app.Context, e app.Event) {
	if i, err := strconv.Atoi(ctx.JSSrc().Get("value").String()); err == nil {
		p.selectDevice(ctx, i)
	}
}

func (p *SnapshotPage) onCopyMarkdown(ctx app.Context, e app.Event) {
	defer p.guard(ctx, "Copying the report")
	if p.res == nil {
		return
	}
	if p.diagnosing {
		p.copyNote = "The diagnosis is still being made: copy the report once it is shown."
		return
	}
	p.markdown = p.markdownReport()
	p.copyNote = "The report is below; select it and copy it."
	clip := app.Window().Get("navigator").Get("clipboard")
	if !clip.Truthy() {
		return
	}
	var ok, bad app.Func
	ok = app.FuncOf(func(app.Value, []app.Value) any {
		ok.Release()
		bad.Release()
		ctx.Dispatch(func(ctx app.Context) { p.copyNote = "Copied to the clipboard as Markdown." })
		return nil
	})
	bad = app.FuncOf(func(app.Value, []app.Value) any {
		ok.Release()
		bad.Release()
		return nil
	})
	clip.Call("writeText", p.markdown).Call("then", ok, bad)
}

// Render draws the page.
func (p *SnapshotPage) Render() app.UI {
	p.dragDue = false
	r, _ := routeByPath("/snapshot")
	return Layout("/snapshot",
		app.H1().Text(r.Title),
		app.P().Class("lead").Text("Drop the snapshot.pickle written by torch.cuda.memory._dump_snapshot(): see the peak "+
			"and when it happened, what was alive then and which code allocated it, the split into parameters, gradients, "+
			"optimizer state and activations, fragmentation and any out-of-memory event."),
		app.P().Class("notice snap-private").ID("snap-private").Text("Your file never leaves your browser: it is read and "+
			"analysed on this page, in a Web Worker. Nothing is uploaded, and the page works offline."),
		p.renderDrop(),
		app.If(p.ranks != nil && p.ranks.open < 0, func() app.UI { return &rankOverview{Page: p, Unit: p.unit} }),
		app.If(p.ranks == nil || p.ranks.open >= 0, func() app.UI { return p.renderFile() }),
	)
}

// renderFile is the analysis of one file (a rank's, with the way back to
// the overview).
func (p *SnapshotPage) renderFile() app.UI {
	return app.Div().ID("snap-file-view").Body(
		app.If(p.ranks != nil, func() app.UI { return p.renderRankBack() }),
		p.renderStatus(),
		// From the summary on, the result's frame (renderResults); after
		// a failure, the summary alone beside the error.
		app.If(p.res == nil && len(p.summary) > 0 && p.phase == snapFailed, func() app.UI { return p.renderSummary() }),
		app.If(p.res != nil || len(p.summary) > 0 && p.phase != snapFailed, func() app.UI { return p.renderResults() }),
	)
}

func (p *SnapshotPage) renderDrop() app.UI {
	cls := "snap-drop"
	if p.dragOver {
		cls += " snap-drop-over"
	}
	return app.Div().ID("snap-drop").Class(cls).
		OnDragOver(p.onDragOver).OnDragEnter(p.onDragOver).OnDragLeave(p.onDragLeave).OnDrop(p.onDrop).
		Body(
			app.P().Class("snap-drop-title").Text("Drop snapshot.pickle here"),
			app.P().Body(
				// Each input follows its label (the focus ring of main.css).
				app.Label().For("snap-file").Class("button").Text("Choose files"),
				app.Input().Type("file").ID("snap-file").Class("snap-file").Multiple(true).Accept(".pickle,.pkl,.gz,application/octet-stream").OnChange(p.onPick),
				app.Text(" "),
				app.Label().For("snap-folder").Class("button").Text("Choose a folder"),
				app.Input().Type("file").ID("snap-folder").Class("snap-file").Attr("webkitdirectory", true).OnChange(p.onPick),
			),
			app.P().Class("muted snap-drop-more").Text(fmt.Sprintf("One file: its full analysis. Two: the second compared with the first. "+
				"Three to %d, or a folder: the ranks of one job side by side, the outliers marked.", load.MaxRanks)),
			app.Details().Class("snap-howto").Body(
				app.Summary().Text("How do I record a snapshot?"),
				app.Pre().Body(app.Code().Text("import torch\n"+
					"torch.cuda.memory._record_memory_history(max_entries=100_000)\n"+
					"# ... build the model and run a few training steps ...\n"+
					"torch.cuda.memory._dump_snapshot(\"snapshot.pickle\")\n"+
					"torch.cuda.memory._record_memory_history(enabled=None)")),
				app.P().Class("muted").Text("Start recording before building the model to label parameters by their stack. "+
					"Pickles from any torch version since 2.0 work, including Python 3.14's protocol 5."),
			),
		)
}

func (p *SnapshotPage) renderStatus() app.UI {
	switch p.phase {
	case snapReading, snapDecoding, snapAnalysing:
		label := map[snapPhase]string{snapReading: "Reading", snapDecoding: "Decoding", snapAnalysing: "Analysing"}[p.phase]
		return app.Div().ID("snap-progress").Class("snap-progress").Aria("live", "polite").Body(
			app.P().Text(fmt.Sprintf("%s %s (%s)… %.0f %%", label, p.fileName, bytesize.Format(p.fileSize, p.unit), 100*p.progress)),
			app.Progress().Max(1).Attr("value", fmt.Sprintf("%.3f", p.progress)).Aria("label", label),
		)
	case snapFailed:
		return app.Div().ID("snap-error").Class("error").Attr("role", "alert").Body(
			app.P().Text(p.errMsg),
			app.P().Class("muted").Text("Drop another file to try again. A snapshot is the pickle written by "+
				"torch.cuda.memory._dump_snapshot() (or pickle.dump(torch.cuda.memory._snapshot(), f))."),
		)
	}
	return app.Text("")
}

// gcHold counts the results being shown with the garbage collector off
// (holdGC); percent is the collector's setting to restore.
var gcHold struct {
	sync.Mutex
	n       int
	percent int
}

// holdGC turns the garbage collector off until releaseGC. A result's
// answer is garbage once read (its JSON, the copies of its buffers): a
// collection before its first frame (run to keep the collection its
// growth calls for out of that frame, which then took over 50 ms) cost
// 24-32 ms between the answer and the timeline on a 55 MB file; with the
// collector off until that frame is drawn (and the diagnosis's, when it
// comes apart: addDiagnosis), it runs after it.
func holdGC() {
	gcHold.Lock()
	defer gcHold.Unlock()
	if gcHold.n == 0 {
		gcHold.percent = debug.SetGCPercent(-1)
	}
	gcHold.n++
}

// releaseGC undoes a holdGC; the last one turns the collector back on. It
// collects at once, in the caller's task, only when the heap has grown
// near the collector's goal (gcDue): the next allocation, in whatever task
// (a section's frame), would start the cycle, and WebAssembly runs a
// cycle's whole mark phase in one task. Otherwise it does not: a
// collection of the page's few megabytes is a task of 25-35 ms of its
// thread (most of it the runtime's fixed cost: roots, stacks), which a
// forced one after the result's frame put among the reveal's tasks, often
// in the task of a section's frame (41-52 ms); with the page's GOGC of 400
// (wasm/app) the result's garbage rarely calls for one before the reveal
// ends.
func releaseGC() {
	gcHold.Lock()
	gcHold.n--
	last := gcHold.n == 0
	if last {
		debug.SetGCPercent(gcHold.percent)
	}
	gcHold.Unlock()
	if last && gcDue() {
		runtime.GC()
	}
}

// warmGC collects unless a result holds the collector off (holdGC).
func warmGC() {
	gcHold.Lock()
	held := gcHold.n > 0
	gcHold.Unlock()
	if !held {
		runtime.GC()
	}
}

// gcDue reports whether the heap has grown to 70 % of the collector's
// goal: the runtime starts a cycle between 70 and 95 % of the way to it
// from the heap the last cycle left (none before the first result).
func gcDue() bool {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return false
	}
	return s[1].Value.Uint64() >= s[0].Value.Uint64()/10*7
}

// afterFrame blocks the calling goroutine (never the UI goroutine) until
// the browser has drawn the next frame: a task queued from an animation
// frame callback runs after that frame's paint.
func afterFrame() {
	if !app.IsClient {
		return
	}
	awaitCallback(func(f app.Func) { app.Window().Call("requestAnimationFrame", f) })
	nextTask(0)
}

// readBudget is how long a paced read of a worker's message (copyViews,
// load.DecodeResponsePaced) runs in one browser task before it hands the
// browser its thread. Handed over after every slice, the 1 GiB
// distinct-stacks file's diagnosis (485,000 step rows, 8,192 a slice) took
// 59 tasks of 1-2 ms of work, each behind a timer of at least 4 ms (the
// browser's clamp on nested timers): 373-557 ms from its message to its
// dispatch on the loaded 2-core machine, 97 ms with this budget.
const readBudget = 10 * time.Millisecond

// newPacer returns a pause for a read in slices: it calls yield (which
// hands the browser its thread) only when budget has passed, by now, since
// the pacer was made or last yielded; otherwise it returns at once and the
// read goes on in the same task. A budget of 0 yields at every pause.
func newPacer(budget time.Duration, now func() time.Time, yield func()) func() {
	last := now()
	return func() {
		if now().Sub(last) < budget {
			return
		}
		yield()
		last = now()
	}
}

// nextTask blocks the calling goroutine (never the UI goroutine) until a
// browser timer of d has fired, so that what follows runs in a browser task
// of its own. time.Sleep does not promise that: the Go runtime returns to
// the browser only when no goroutine can run, so a sleep that ends while
// other Go work is still running (a render, the garbage collector marking
// the result's allocations) goes on in the same task, and the tasks
// meant to be apart become one long task.
func nextTask(d time.Duration) {
	if !app.IsClient {
		time.Sleep(d)
		return
	}
	awaitCallback(func(f app.Func) { app.Window().Call("setTimeout", f, d.Milliseconds()) })
}

// awaitCallback blocks the calling goroutine (never the UI goroutine)
// until the browser calls f, which start hands to the browser (a timer, an
// animation frame).
func awaitCallback(start func(f app.Func)) {
	done := make(chan struct{})
	var f app.Func
	f = app.FuncOf(func(app.Value, []app.Value) any {
		f.Release()
		close(done)
		return nil
	})
	start(f)
	<-done
}
