package app

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/snapshot/chart"
	"oomscope/snapshot/load"
)

// The overview of many ranks: a distributed job writes one snapshot per
// rank, and dropping three files or more (or choosing a folder) analyses
// them in a small pool of analysis workers. Each worker answers a file with
// its compact row (load.RequestRank: headline numbers and a line of at most
// load.RankPoints points, a few KB) and keeps nothing of it, so the page's
// memory follows the pool, not the number of ranks; the pool starts files
// under load.RankPool's budget of bytes. The outliers are marked by
// load.NewOverview, the rule the CLI prints too; the overview draws every
// rank's line at once (chart.Ranks) and the table (chart.RankTable), each
// as one node; a rank opens in the full view by analysing its file again
// in the page's own worker.

// rankState is where one rank's file is.
type rankState int

const (
	rankQueued rankState = iota
	rankRunning
	rankDone
	rankFailed
)

// rankRow is one file of the overview, in the overview's order.
type rankRow struct {
	file  app.Value // the File, to open the rank in the full view
	name  string    // its name (a folder's files: the path inside it)
	size  int64     // known once sized (as the file starts: feedRanks)
	sized bool
	read  int64 // bytes read so far
	state rankState
	// row is the worker's answer (or the error), marked by the overview.
	row load.Rank
	// html is the row's HTML as rankRows last wrote it, of shown in unit;
	// dirty until patchRankTable has put it in the page.
	html  string
	shown chart.RankRow
	unit  bytesize.Unit
	dirty bool
}

// rankWorker is one place of the pool: a worker started when a file is
// handed to it, ended when none is left or after a big file (its memory
// would stay taken).
type rankWorker struct {
	w     app.Value // null when not started
	onMsg app.Func
	row   int   // index of the row it analyses, -1 when idle
	req   int   // id of that request
	bytes int64 // the size of that file, as counted by the pool's rule
}

// moduleSource is a running worker whose compiled snapworker.wasm a new
// worker of the pool can start from (startRankWorker): the page's own
// worker, kept while it holds no file (startRanks), else the pool's first
// worker; null if none. Each compiling the 8 MB module itself, two pool
// workers took the browser's compile threads 1.2-1.4 s of CPU and ~900
// first-call compiles each, on the cores the page shares with them; a
// module shared is compiled, and optimised as it runs, once (and the page's
// worker's was, on its sample, before any file came).
func (p *SnapshotPage) moduleSource() app.Value {
	if p.worker != nil {
		return p.worker
	}
	for _, rw := range p.ranks.pool {
		if rw.w != nil {
			return rw.w
		}
	}
	return nil
}

// snapRanks is the state of an overview of ranks.
type snapRanks struct {
	rows []*rankRow
	pool []*rankWorker
	// sched bounds how many files, and how many bytes of files, are
	// analysed at once; it needs the size of the next file to start.
	sched   load.RankPool
	poolDue bool // the pool is started or about to (startPool)
	feedDue bool // a feedRanks is due in a task of its own
	most    int  // the most files analysed at once
	// started counts the workers started, shared those of them started
	// from another worker's module (moduleSource).
	started, shared int
	next            int   // next row to hand to a worker
	finished        int   // rows done or failed
	read            int64 // bytes read of all files
	// median* and the outlier marks come from load.NewOverview over the
	// finished rows (recomputed as rows finish).
	medianAlloc, medianRes int64
	// open is the row shown in the full view (-1: the overview is shown).
	open int
	// lastRender and renderDue throttle the page's updates while the
	// workers report: one render per rankRenderEvery at most.
	lastRender time.Time
	renderDue  bool
	// ver counts the finished ranks' changes: the chart is built again
	// (rankChart) when it, the unit or reserved (the measure drawn)
	// changed; chartRows[k] is the row of its line k, hl the line named
	// (-1: none).
	ver       int
	reserved  bool
	chart     *chart.Ranks
	chartKey  rankChartKey
	chartAt   time.Time
	chartRows []int
	hl        int
}

// rankRenderEvery is the least time between two renders of the overview
// while files are being analysed: each render writes the rows that
// changed (patchRankTable) and the progress, and the workers' answers
// come far more often.
const rankRenderEvery = 400 * time.Millisecond

// rankChartEvery is the least time between two drawings of the chart of
// ranks while ranks finish (each render draws the table).
const rankChartEvery = time.Second

// maxRankWorkers caps the pool: each worker holds one analysis at a time,
// up to about its file's size (and load.RankPool caps their sum).
const maxRankWorkers = 4

// rankPoolSize is the number of workers for n files:
// min(maxRankWorkers, cores, n), at least one. (Leaving a core to the page
// was tried: on a 2-core machine one worker took 5.1-6.5 s for 16 ranks of
// 10 MiB against 3.6-4.5 s for two, and the page's longest task was not
// shorter; make bench-browser, OOMSCOPE_BENCH_CORES.)
func rankPoolSize(n int) int {
	cores := 2
	if hc := app.Window().Get("navigator").Get("hardwareConcurrency"); hc.Type() == app.TypeNumber {
		cores = hc.Int()
	}
	return max(1, min(maxRankWorkers, cores, n))
}

// fileEntry is a dropped or chosen file with the name it is shown by.
type fileEntry struct {
	file app.Value
	name string
}

// filesOf lists a FileList; from a folder (webkitdirectory, which lists
// its subfolders too) only the folder's own snapshot files are taken
// (load.IsSnapshotName), as the CLI reads a directory.
func filesOf(list app.Value) (files []fileEntry, folder bool) {
	for i := 0; i < list.Length(); i++ {
		f := list.Index(i)
		name := f.Get("name").String()
		if rel := jsString(f, "webkitRelativePath"); rel != "" {
			folder = true
			if !load.IsSnapshotName(name) || strings.Count(rel, "/") != 1 {
				continue
			}
			name = rel
		}
		files = append(files, fileEntry{file: f, name: name})
	}
	return files, folder
}

// openFiles starts on what was dropped or chosen: one file is analysed,
// two are compared (the second with the first), three or more, or a
// folder, are the ranks of one job.
func (p *SnapshotPage) openFiles(ctx app.Context, files []fileEntry, folder bool) {
	p.stopRanks()
	p.pendingCompare = nil
	switch {
	case len(files) == 0 && folder:
		p.fail(ctx, "The folder holds no snapshot: the page takes its .pickle, .pkl and .gz files.")
	case len(files) == 0:
		p.fail(ctx, "Nothing was dropped: drop a snapshot.pickle file.")
	case len(files) > load.MaxRanks:
		p.fail(ctx, fmt.Sprintf("%d files: the page analyses up to %d ranks at once. Run `oomscope snapshot DIR` on the "+
			"command line for more, or choose fewer files.", len(files), load.MaxRanks))
	case len(files) >= 3 || folder:
		p.startRanks(ctx, files)
	default:
		p.read(ctx, files[0].file)
		if len(files) == 2 {
			p.pendingCompare = files[1].file
		}
	}
}

// startRanks sorts the files as the overview does and hands them to the
// pool.
func (p *SnapshotPage) startRanks(ctx app.Context, files []fileEntry) {
	if p.workerFiles {
		p.stopWorker() // its memory holds a file
	}
	// Else the page's worker stays: the pool's workers start from its
	// compiled module (moduleSource).
	p.reset()
	p.phase = snapIdle
	// load.NewOverview orders the rows (by rank, then name); rows of the
	// same name stay in the order given, so each is matched to its file.
	pending := make([]load.Rank, len(files))
	for i, f := range files {
		pending[i] = load.Rank{File: f.name, Rank: load.RankOf(f.name), Error: "pending"}
	}
	byName := map[string][]int{}
	for i, f := range files {
		byName[f.name] = append(byName[f.name], i)
	}
	r := &snapRanks{open: -1, hl: -1}
	for _, o := range load.NewOverview(pending).Ranks {
		f := files[byName[o.File][0]]
		byName[o.File] = byName[o.File][1:]
		r.rows = append(r.rows, &rankRow{file: f.file, name: f.name, row: load.Rank{File: f.name, Rank: o.Rank}})
	}
	p.ranks = r
	ranksRunning.Store(true)
	for _, a := range []string{"data-ranks-ready", "data-ranks-done", "data-ranks-workers", "data-ranks-at-once"} {
		MarkBody(a, "")
	}
	p.markRanks(ctx)
	// The workers start once the overview is drawn (startPool, from its
	// OnMount; an overview already shown is drawn again instead).
	if p.ovMounted {
		p.startPool(ctx)
	}
}

// startPool starts the pool's workers, with the first files, in a task of
// their own after the first drawing of the overview is painted (its
// OnMount): the drop's task and the drawing's stay short. Once per
// overview. (go-app's ctx.After is a goroutine's sleep, which Go runs in
// the same browser task as whatever outlasts it, go-app's drawing
// included.)
func (p *SnapshotPage) startPool(ctx app.Context) {
	r := p.ranks
	if r == nil || r.poolDue {
		return
	}
	r.poolDue = true
	afterPaint(p.lasting(ctx), func(ctx app.Context) {
		ctx.PreventUpdate()
		if p.ranks != r {
			return
		}
		r.sched = load.RankPool{Workers: rankPoolSize(len(r.rows)), Budget: load.RankBudget}
		for range r.sched.Workers {
			r.pool = append(r.pool, &rankWorker{row: -1})
		}
		p.feedRanks(ctx)
		p.showRankProgress()
	})
}

// afterTask calls f on the UI goroutine in a browser task of its own, after
// the browser ran the tasks it had queued.
func afterTask(ctx app.Context, f func(app.Context)) {
	ctx.Async(func() {
		nextTask(0)
		ctx.Dispatch(f)
	})
}

// afterPaint calls f on the UI goroutine in a browser task of its own,
// after the browser's next frame is painted.
func afterPaint(ctx app.Context, f func(app.Context)) {
	ctx.Async(func() {
		afterFrame()
		ctx.Dispatch(f)
	})
}

// startRankWorker starts the worker of a place of the pool.
func (p *SnapshotPage) startRankWorker(ctx app.Context, rw *rankWorker) {
	ctx = p.lasting(ctx)
	r := p.ranks
	r.started++
	if src := p.moduleSource(); src != nil {
		// Named so that its first message is the port its module
		// comes by, from src: worker to worker (static/web/snapworker.js
		// sharedName).
		r.shared++
		opts := app.Window().Get("Object").New()
		opts.Set("name", "oomscope-shared")
		rw.w = app.Window().Get("Worker").New(Asset("/web/snapworker.js"), opts)
		ch := app.Window().Get("MessageChannel").New()
		for _, to := range []struct {
			w    app.Value
			key  string
			port app.Value
		}{{rw.w, "moduleFrom", ch.Get("port2")}, {src, "moduleTo", ch.Get("port1")}} {
			msg := app.Window().Get("Object").New()
			msg.Set(to.key, to.port)
			moved := app.Window().Get("Array").New()
			moved.Call("push", to.port)
			to.w.Call("postMessage", msg, moved)
		}
	} else {
		rw.w = app.Window().Get("Worker").New(Asset("/web/snapworker.js"))
	}
	// How many of the pool's workers started, and from a shared module
	// (for the e2e tests).
	MarkBody("data-ranks-workers", fmt.Sprintf("%d shared of %d", r.shared, r.started))
	rw.onMsg = app.FuncOf(func(this app.Value, args []app.Value) any {
		if len(args) == 0 {
			return nil
		}
		var m load.Response
		if args[0].Get("type").String() == "error" && args[0].Get("data").Type() != app.TypeObject {
			m = load.Response{Type: load.ResponseError, Error: "the analysis worker could not start: " + jsString(args[0], "message")}
		} else {
			// Rank messages are small (their line is packed in a buffer):
			// decoding them here takes well under a millisecond.
			d := args[0].Get("data")
			r, err := load.DecodeResponse(jsString(d, "json"), jsBuffers(d.Get("buffers")))
			if err != nil {
				r = load.Response{Type: load.ResponseError, ID: rw.req, Error: "its answer could not be read: " + err.Error()}
			}
			m = r
		}
		ctx.Dispatch(func(ctx app.Context) { p.onRankMsg(ctx, rw, m) })
		return nil
	})
	rw.w.Call("addEventListener", "message", rw.onMsg)
	rw.w.Call("addEventListener", "error", rw.onMsg)
}

// stop ends the worker.
func (rw *rankWorker) stop() {
	if rw.w != nil {
		rw.w.Call("terminate")
		rw.w.Call("removeEventListener", "message", rw.onMsg)
		rw.w.Call("removeEventListener", "error", rw.onMsg)
		rw.onMsg.Release()
		rw.w = nil
	}
}

// stopRanks ends the pool and forgets the overview.
func (p *SnapshotPage) stopRanks() {
	if p.ranks == nil {
		return
	}
	for _, w := range p.ranks.pool {
		w.stop()
	}
	p.ranks = nil
	ranksRunning.Store(false)
	MarkBody("data-ranks-ready", "")
	MarkBody("data-ranks-done", "")
}

// feedRanks hands the queued files, in order, to the idle places of the
// pool while the pool's rule lets them start (load.RankPool: at most
// load.RankBudget bytes of files at once, a bigger file alone); the
// workers left with nothing to do are ended (their memory goes back to
// the browser).
func (p *SnapshotPage) feedRanks(ctx app.Context) {
	r := p.ranks
	handed := false
	for _, rw := range r.pool {
		if rw.row >= 0 {
			continue
		}
		if r.next >= len(r.rows) {
			rw.stop()
			continue
		}
		if handed {
			// One file a browser task (a worker started, the file's
			// size looked up, the File copied to it): the next in a
			// task of its own.
			if !r.feedDue {
				r.feedDue = true
				afterTask(p.lasting(ctx), func(ctx app.Context) {
					ctx.PreventUpdate()
					r.feedDue = false
					if p.ranks == r {
						p.feedRanks(ctx)
					}
				})
			}
			return
		}
		i := r.next
		row := r.rows[i]
		if !row.sized {
			// A dropped File's size is a disk look-up (a synchronous
			// call to the browser: 2-3 ms each, 436 ms for 128 files),
			// and so is the first copy of a File to a worker: each file
			// is looked up as it starts, in the task that hands it over,
			// not all at once.
			row.size, row.sized = int64(jsNumber(row.file, "size")), true
		}
		if !r.sched.CanStart(row.size) {
			return // the next file waits for running ones to finish
		}
		r.sched.Start(row.size)
		if n, _ := r.sched.Running(); n > r.most {
			// The most files analysed at once, of the pool's places
			// (for the e2e tests).
			r.most = n
			MarkBody("data-ranks-at-once", fmt.Sprintf("%d of %d", n, r.sched.Workers))
		}
		r.next++
		if rw.w == nil {
			p.startRankWorker(ctx, rw)
		}
		p.nextID++
		rw.row, rw.req, rw.bytes = i, p.nextID, row.size
		row.state = rankRunning
		msg := app.Window().Get("Object").New()
		msg.Set("json", load.EncodeRequest(load.Request{Type: load.RequestRank, ID: rw.req, Name: row.name}))
		msg.Set("file", row.file)
		rw.w.Call("postMessage", msg)
		handed = true
	}
}

// rankEnded frees rw's place after its file ended: the pool's rule counts
// the file no more, and a worker that analysed a big file is ended, as a
// WebAssembly worker keeps the memory it grew to (a fresh one takes the
// next file).
func (p *SnapshotPage) rankEnded(rw *rankWorker) {
	p.ranks.sched.Done(rw.bytes)
	if rw.bytes > load.RankRecycleBytes {
		rw.stop()
	}
	rw.row, rw.bytes = -1, 0
}

// onRankMsg applies a pool worker's message.
func (p *SnapshotPage) onRankMsg(ctx app.Context, rw *rankWorker, m load.Response) {
	r := p.ranks
	if r == nil || rw.w == nil {
		ctx.PreventUpdate()
		return
	}
	if rw.row < 0 {
		ctx.PreventUpdate()
		return
	}
	if m.ID == 0 && m.Type == load.ResponseError {
		// The worker itself stopped (out of memory, say): its file fails,
		// a fresh worker takes the rest.
		i := rw.row
		rw.stop()
		p.rankEnded(rw)
		p.rankFinished(ctx, i, load.Rank{Error: m.Error})
		p.feedRanks(ctx)
		p.rankChanged(ctx, r.finished == len(r.rows))
		return
	}
	if m.ID != rw.req {
		ctx.PreventUpdate()
		return
	}
	row := r.rows[rw.row]
	switch m.Type {
	case load.ResponseProgress:
		if m.Progress != nil {
			if row.size == 0 && m.Progress.Total > 0 {
				row.size = m.Progress.Total
			}
			r.read += m.Progress.Done - row.read
			row.read = m.Progress.Done
		}
		// Progress changes two nodes: set them, without a render.
		ctx.PreventUpdate()
		p.showRankProgress()
		return
	case load.ResponseRank:
		if m.Rank == nil {
			m.Rank = &load.Rank{Error: "the worker's answer holds no rank"}
		}
		p.rankFinished(ctx, rw.row, *m.Rank)
	case load.ResponseError:
		msg := m.Error
		if m.Internal {
			msg = "internal error, please file an issue: " + msg
		}
		p.rankFinished(ctx, rw.row, load.Rank{Error: msg})
	default:
		ctx.PreventUpdate()
		return
	}
	p.rankEnded(rw)
	p.feedRanks(ctx)
	p.rankChanged(ctx, r.finished == len(r.rows))
}

// rankFinished records the answer for row i and marks the outliers again
// over the rows finished so far.
func (p *SnapshotPage) rankFinished(ctx app.Context, i int, ans load.Rank) {
	r := p.ranks
	row := r.rows[i]
	if row.size == 0 { // no progress came before
		row.size = ans.Bytes
	}
	ans.File, ans.Rank, ans.Bytes = row.name, row.row.Rank, row.size
	row.row = ans
	row.state = rankDone
	if ans.Error != "" {
		row.state = rankFailed
	}
	r.read += row.size - row.read
	row.read = row.size
	r.finished++
	// The finished rows, in the overview's order, come back from
	// NewOverview in the same order (it sorts stably by the same keys).
	var fin []load.Rank
	var idx []int
	for k, x := range r.rows {
		if x.state == rankDone || x.state == rankFailed {
			fin, idx = append(fin, x.row), append(idx, k)
		}
	}
	o := load.NewOverview(fin)
	for k, x := range o.Ranks {
		r.rows[idx[k]].row = x
	}
	r.medianAlloc, r.medianRes = o.MedianAllocatedBytes, o.MedianReservedBytes
	r.ver++
}

// ranksRunning is set while an overview of ranks is being analysed: the
// page's warm-ups wait (OnMount).
var ranksRunning atomic.Bool

// rankChanged renders the overview now when final, else at most once per
// rankRenderEvery: the pool's messages then never make the page busy.
func (p *SnapshotPage) rankChanged(ctx app.Context, final bool) {
	r := p.ranks
	if final {
		ranksRunning.Store(false)
	}
	switch {
	case final || time.Since(r.lastRender) >= rankRenderEvery:
		r.lastRender, r.renderDue = time.Now(), false
		p.redrawRanks(ctx)
	case !r.renderDue:
		ctx.PreventUpdate()
		r.renderDue = true
		ctx.After(rankRenderEvery, func(ctx app.Context) {
			if p.ranks != r || !r.renderDue {
				ctx.PreventUpdate()
				return
			}
			r.renderDue, r.lastRender = false, time.Now()
			p.redrawRanks(ctx)
		})
	default:
		ctx.PreventUpdate()
	}
}

// redrawRanks draws the overview again, alone, in place of the update
// that ctx (the page's, or one of its elements') would make of the whole
// page: the page's layout costs more to draw than the overview, and only
// the overview changed. Then it sets the markers (markRanks).
func (p *SnapshotPage) redrawRanks(ctx app.Context) {
	ctx.PreventUpdate()
	if !p.ovMounted {
		p.markRanks(ctx)
		return
	}
	// A dispatch from the overview flags it and the page; the page's
	// flag is taken back (go-app counts them), so the overview alone is
	// drawn, and an update the page needs for another reason still is.
	p.ovCtx.Dispatch(func(c app.Context) {
		p.mountCtx.PreventUpdate()
		p.markRanks(c)
	})
}

// rankOverview holds the overview of ranks (renderRanks) as a component
// of its own, so that redrawRanks can draw it without the page. It is
// drawn again with the page when Unit changes.
type rankOverview struct {
	app.Compo
	Page *SnapshotPage
	Unit bytesize.Unit
}

// OnMount lets the page draw the overview alone, and starts the pool
// once the overview is first drawn (startPool).
func (o *rankOverview) OnMount(ctx app.Context) {
	o.Page.ovCtx, o.Page.ovMounted = ctx, true
	ctx.Defer(func(app.Context) { o.Page.patchRankTable() })
	o.Page.startPool(ctx)
}

// OnUpdate writes the rows again in the unit the page changed to.
func (o *rankOverview) OnUpdate(ctx app.Context) {
	ctx.Defer(func(app.Context) { o.Page.patchRankTable() })
}

// OnDismount stops that.
func (o *rankOverview) OnDismount() { o.Page.ovMounted = false }

// Render draws the overview.
func (o *rankOverview) Render() app.UI {
	if o.Page.ranks == nil {
		return app.Div()
	}
	return o.Page.renderRanks()
}

// markRanks writes the table's rows (patchRankTable) and sets the
// overview's markers once the render is drawn: the ranks finished, and
// the time when all are finished and listed.
func (p *SnapshotPage) markRanks(ctx app.Context) {
	r := p.ranks
	n, ready := strconv.Itoa(r.finished), r.finished == len(r.rows)
	ctx.Defer(func(app.Context) {
		p.patchRankTable()
		MarkBody("data-ranks-done", n)
		if ready {
			MarkBody("data-ranks-ready", now())
		}
	})
}

// openRank shows rank row i in the full single-file view: its file is
// analysed again by the page's own worker.
func (p *SnapshotPage) openRank(ctx app.Context, i int) {
	defer p.guard(ctx, "Opening the rank")
	r := p.ranks
	if r == nil || i < 0 || i >= len(r.rows) {
		return
	}
	ctx = p.lasting(ctx) // the button goes with the overview
	r.open = i
	p.read(ctx, r.rows[i].file)
	ctx.Defer(func(app.Context) { scrollToAnswer("snap-rank-back") })
}

// backToRanks leaves the full view of a rank for the overview.
func (p *SnapshotPage) backToRanks(ctx app.Context, e app.Event) {
	if p.ranks == nil {
		return
	}
	ctx = p.lasting(ctx) // the button goes with the full view
	p.stopWorker()       // its memory holds the rank's analysis
	p.reset()
	p.phase = snapIdle
	p.ranks.open, p.ranks.hl = -1, -1
	ctx.Defer(func(app.Context) { scrollToAnswer("snap-ranks") })
}

// rankLabel is how row k is named: its rank, else its place in the list.
func rankLabel(row *rankRow, k int) string {
	if row.row.Rank >= 0 {
		return "rank " + strconv.Itoa(row.row.Rank)
	}
	return "file " + strconv.Itoa(k+1)
}

// rankStatus is the overview's progress line.
func (p *SnapshotPage) rankStatus() string {
	r := p.ranks
	n, failed := len(r.rows), 0
	for _, x := range r.rows {
		if x.state == rankFailed {
			failed++
		}
	}
	s := fmt.Sprintf("%d of %d ranks analysed · %s read", r.finished, n, bytesize.Format(r.read, p.unit))
	if r.finished < n {
		files, bytes := r.sched.Running()
		s += fmt.Sprintf(" · %d at once, %s of files (at most %d workers and %s of files)", files,
			bytesize.Format(bytes, p.unit), r.sched.Workers, bytesize.Format(r.sched.Budget, p.unit))
	}
	if failed > 0 {
		s += fmt.Sprintf(" · %d could not be analysed", failed)
	}
	return s
}

// rankFraction is the share of the ranks analysed, counting the bytes read
// of the files in the workers, for the progress bar.
func (p *SnapshotPage) rankFraction() string {
	r := p.ranks
	done := float64(r.finished)
	for _, rw := range r.pool {
		if rw.row >= 0 && r.rows[rw.row].size > 0 {
			row := r.rows[rw.row]
			done += float64(row.read) / float64(row.size)
		}
	}
	return fmt.Sprintf("%.3f", done/float64(max(1, len(r.rows))))
}

// showRankProgress writes the progress line and bar straight into the
// page (as the chart's overlay is): a render would diff every row for
// two changed nodes. The next render writes the same nodes from the
// state, which has only moved on since.
func (p *SnapshotPage) showRankProgress() {
	doc := app.Window().Get("document")
	// The text node go-app made, not the element's textContent (which
	// would replace the node go-app goes on updating).
	if el := doc.Call("getElementById", "snap-ranks-status"); el.Truthy() && el.Get("firstChild").Truthy() {
		el.Get("firstChild").Set("nodeValue", p.rankStatus())
	}
	if el := doc.Call("getElementById", "snap-ranks-bar"); el.Truthy() {
		el.Call("setAttribute", "value", p.rankFraction())
	}
}

// renderRankBack is the way back from a rank's full view.
func (p *SnapshotPage) renderRankBack() app.UI {
	r := p.ranks
	row := r.rows[r.open]
	return app.Div().ID("snap-rank-back").Class("snap-rank-back").Body(
		app.Button().ID("snap-ranks-back").Text(fmt.Sprintf("← Back to the overview of %d ranks", len(r.rows))).OnClick(p.backToRanks),
		app.Span().Class("muted").Text(" showing "+rankLabel(row, r.open)+": "+shown(row.name)),
	)
}

// renderRanks is the overview: progress, the chart of ranks and a table of the
// peaks per rank, the outliers marked and the rule in words.
func (p *SnapshotPage) renderRanks() app.UI {
	r := p.ranks
	n := len(r.rows)
	outliers := 0
	for _, x := range r.rows {
		if x.row.Outlier {
			outliers++
		}
	}
	return app.Section().ID("snap-ranks").Class("snap-ranks").DataSet("total", n).DataSet("done", r.finished).Body(
		app.H2().Text(fmt.Sprintf("%d snapshots as the ranks of one job", n)),
		app.Div().ID("snap-ranks-progress").Class("snap-progress").Aria("live", "polite").Body(
			app.P().ID("snap-ranks-status").Text(p.rankStatus()),
			app.If(r.finished < n, func() app.UI {
				return app.Progress().ID("snap-ranks-bar").Max(1).Attr("value", p.rankFraction()).Aria("label", "Ranks analysed")
			}),
		),
		unitToggle(p.unit, p.setUnit),
		p.renderRankChart(),
		app.Div().Class("table-wrap").Attr("tabindex", 0).Aria("label", "Peaks per rank").Attr("role", "region").
			On("click", p.onRankTableClick).Body(app.Raw(rankTableShell)),
		app.P().ID("snap-ranks-rule").Class("formula").Text(fmt.Sprintf("%d outlier(s)%s; median peak allocated %s, median peak reserved %s. Outliers: %s.",
			outliers, map[bool]string{true: " so far", false: ""}[r.finished < n], bytesize.Format(r.medianAlloc, p.unit),
			bytesize.Format(r.medianRes, p.unit), load.OutlierRule)),
	)
}

// rankTableShell is the table of ranks without its rows (chart.RankTable),
// one node that go-app places and never changes: patchRankTable writes
// the rows into its body. (go-app mounting 128 rows of components took
// the page 57-115 ms at a time.)
var rankTableShell = chart.RankTable(nil, bytesize.Binary)

// patchRankTable writes the rows of the table of ranks into its body
// (rankTableShell): all of them into a body that does not hold as many
// (one drawn again), else only the rows whose HTML changed since it last
// wrote them (dirty). The browser then styles, lays out
// and paints a few rows, not 128 each time the overview is drawn: with
// 128 ranks writing the whole table took the page's main thread up to
// 39 ms of CPU a time.
func (p *SnapshotPage) patchRankTable() {
	r := p.ranks
	if r == nil {
		return
	}
	body := app.Window().Get("document").Call("querySelector", "#snap-ranks-table > tbody")
	if !body.Truthy() {
		return
	}
	rows := p.rankRows()
	trs := body.Get("children")
	all := trs.Length() != len(rows)
	if all {
		body.Set("innerHTML", strings.Join(rows, ""))
	}
	for i, x := range r.rows {
		if x.dirty && !all {
			trs.Index(i).Set("outerHTML", rows[i])
		}
		x.dirty = false
	}
}

// rankRows is the HTML of the table's rows (chart.RankRowHTML), in order,
// written again only for the rows that changed: with 128 ranks, writing
// them all took 10-14 ms of the page's thread a time.
func (p *SnapshotPage) rankRows() []string {
	r := p.ranks
	rows := make([]string, len(r.rows))
	for k, x := range r.rows {
		v := chart.RankRow{Index: k, Rank: x.row.Rank, Label: rankLabel(x, k), File: x.name,
			State:   map[rankState]string{rankQueued: "queued", rankRunning: "running", rankDone: "done", rankFailed: "failed"}[x.state],
			Outlier: x.row.Outlier, Why: x.row.Why, Error: x.row.Error, Read: x.read, Size: x.size,
			Alloc: x.row.PeakAllocatedBytes, Res: x.row.PeakReservedBytes, OOMs: x.row.OOMEvents, Devices: len(x.row.Devices)}
		for _, h := range x.row.Devices {
			v.FinalAlloc += h.FinalAllocatedBytes
			v.FinalRes += h.FinalReservedBytes
		}
		if x.html == "" || x.unit != p.unit || !x.shown.Equal(v) {
			x.html, x.unit, x.dirty = chart.RankRowHTML(v, p.unit), p.unit, true
			x.shown, x.shown.Why = v, slices.Clone(v.Why) // (not the answer's array)
		}
		rows[k] = x.html
	}
	return rows
}

// onRankTableClick opens the rank whose button was clicked.
func (p *SnapshotPage) onRankTableClick(ctx app.Context, e app.Event) {
	t := e.Get("target")
	if t.Type() != app.TypeObject || t.Get("closest").Type() != app.TypeFunction {
		ctx.PreventUpdate()
		return
	}
	b := t.Call("closest", ".snap-rank-open")
	if !b.Truthy() {
		ctx.PreventUpdate()
		return
	}
	i, err := strconv.Atoi(b.Call("getAttribute", "data-index").String())
	if err != nil {
		ctx.PreventUpdate()
		return
	}
	p.openRank(ctx, i)
}

// rankChart is the chart of every rank's memory over time (chart.Ranks),
// built again only when a rank finished, the unit or the measure changed:
// the overview's other renders (rows listed, a rank running) reuse it.
func (p *SnapshotPage) rankChart() *chart.Ranks {
	r := p.ranks
	key := rankChartKey{ver: r.ver, unit: p.unit, reserved: r.reserved}
	if r.chartKey == key || r.chart != nil && r.finished < len(r.rows) && key.unit == r.chartKey.unit &&
		key.reserved == r.chartKey.reserved && time.Since(r.chartAt) < rankChartEvery {
		// While ranks finish, the chart (up to 200 KB of SVG for the
		// browser to parse and lay out) is drawn again once a second.
		return r.chart
	}
	r.chartAt = time.Now()
	var lines []chart.RankLine
	r.chartRows = r.chartRows[:0]
	done := 0
	for k, x := range r.rows {
		if x.state != rankDone {
			continue
		}
		done++
		if x.row.Line != nil {
			lines = append(lines, chart.RankLine{Label: rankLabel(x, k), Outlier: x.row.Outlier, Points: x.row.Line.Points})
			r.chartRows = append(r.chartRows, k)
		}
	}
	opt := chart.RanksOptions{Unit: p.unit, Reserved: r.reserved}
	if done >= 3 { // the outlier rule needs three ranks
		opt.Median = r.medianAlloc
		if r.reserved {
			opt.Median = r.medianRes
		}
		opt.BandLo, opt.BandHi = load.OutlierBand(opt.Median)
	}
	r.chart, r.chartKey, r.hl = chart.NewRanks(lines, opt), key, -1
	return r.chart
}

// rankChartKey is what the chart of ranks is drawn from.
type rankChartKey struct {
	ver      int
	unit     bytesize.Unit
	reserved bool
}

// renderRankChart draws every analysed rank's allocated (or reserved)
// memory over time on shared axes, the outliers in red, the band of peaks
// that are not outliers shaded: the built chart is one node, so the
// overview's renders do not mount a component per rank. Pointing at a
// line or choosing it with the arrow keys names it; a click or Enter
// opens it.
func (p *SnapshotPage) renderRankChart() app.UI {
	r := p.ranks
	c := p.rankChart()
	what := "allocated (requested bytes of live allocations)"
	if r.reserved {
		what = "reserved (bytes the allocator holds from the driver)"
	}
	xs := "seconds since the rank's first recorded trace entry (each rank from its own start)"
	if c != nil && !c.Time {
		xs = "the share of the rank's trace entries (a rank's snapshot has no times)"
	}
	band := ""
	if c != nil && p.rankDone() >= 3 {
		band = "; the shaded band holds the peaks that are not outliers (median, dashed, ± the larger of 5 % and 256 MiB): " +
			"a rank whose highest point leaves it is an outlier"
	}
	mode := func(label string, reserved bool) app.UI {
		cls := "secondary"
		if r.reserved == reserved {
			cls = "unit-on"
		}
		return app.Button().Type("button").Class(cls).ID("snap-rk-"+map[bool]string{false: "alloc", true: "res"}[reserved]).
			Aria("pressed", r.reserved == reserved).Text(label).OnClick(func(ctx app.Context, e app.Event) {
			if p.ranks == r && r.reserved != reserved {
				r.reserved = reserved
				p.redrawRanks(ctx)
			} else {
				ctx.PreventUpdate()
			}
		})
	}
	var plot app.UI = app.P().Class("muted").Text("The chart appears as ranks finish.")
	if c != nil {
		plot = app.Div().ID("snap-rk-fig").Class("snap-rk-fig").Attr("tabindex", 0).Attr("role", "group").
			Aria("label", fmt.Sprintf("Memory over time of %d ranks: arrow keys choose a rank, Enter opens it", len(c.Lines))).
			Aria("describedby", "snap-rk-name").
			On("pointermove", p.onRankChartMove).On("pointerleave", p.onRankChartLeave).On("click", p.onRankChartClick).
			On("keydown", p.onRankChartKey).Body(app.Raw(c.HTML))
	}
	return app.Figure().ID("snap-ranks-chart").Class("snap-ranks-chart").Body(
		app.Div().Class("unit-toggle").Role("group").Aria("label", "Memory drawn").Body(
			app.Span().Class("muted").Text("Lines show"), mode("allocated", false), mode("reserved", true)),
		plot,
		app.P().ID("snap-rk-name").Class("snap-rk-name").Aria("live", "polite").Text(rankChartHint),
		app.FigCaption().Class("muted").Text(fmt.Sprintf("Each line is one rank's %s memory over time, at up to %d points per rank "+
			"that keep its exact peaks; x: %s; y: bytes, the same scale for every rank. Outliers are red and drawn on top%s.",
			what, load.RankPoints, xs, band)),
	)
}

// rankChartHint is the chart's name line when no rank is named.
const rankChartHint = "Point at a line, or focus the chart and use the arrow keys, to name its rank."

// rankDone counts the ranks analysed.
func (p *SnapshotPage) rankDone() int {
	n := 0
	for _, x := range p.ranks.rows {
		if x.state == rankDone {
			n++
		}
	}
	return n
}

// showRankLine highlights line k of the chart (-1: none) and names its
// rank, in the DOM: no render for a pointer move.
func (p *SnapshotPage) showRankLine(ctx app.Context, k int) {
	r := p.ranks
	c := r.chart
	if c == nil || k >= len(c.Lines) {
		return
	}
	r.hl = k
	fig := ctx.JSSrc()
	if fig.Get("id").String() != "snap-rk-fig" {
		fig = app.Window().Get("document").Call("getElementById", "snap-rk-fig")
	}
	if !fig.Truthy() {
		return
	}
	hl := fig.Call("querySelector", ".snap-rk-hl")
	name := app.Window().Get("document").Call("getElementById", "snap-rk-name")
	if k < 0 {
		if hl.Truthy() {
			hl.Call("setAttribute", "d", "")
		}
		if name.Truthy() && name.Get("firstChild").Truthy() {
			name.Get("firstChild").Set("nodeValue", rankChartHint)
		}
		return
	}
	if path := fig.Call("querySelector", `path[data-line="`+strconv.Itoa(k)+`"]`); path.Truthy() && hl.Truthy() {
		hl.Call("setAttribute", "d", path.Call("getAttribute", "d"))
		hl.Call("setAttribute", "class", "snap-rk-hl"+map[bool]string{true: " snap-rk-hl-outlier", false: ""}[c.Lines[k].Outlier])
	}
	row := r.rows[r.chartRows[k]]
	s := fmt.Sprintf("%s: peak allocated %s, peak reserved %s", c.Lines[k].Label, bytesize.Format(row.row.PeakAllocatedBytes, p.unit),
		bytesize.Format(row.row.PeakReservedBytes, p.unit))
	if row.row.Outlier {
		s += " · outlier: " + strings.Join(row.row.Why, "; ")
	}
	s += " · click or press Enter to open it"
	if name.Truthy() && name.Get("firstChild").Truthy() {
		name.Get("firstChild").Set("nodeValue", s)
	}
	name.Call("setAttribute", "data-line", k)
}

// rankLineAt is the chart's line nearest to a pointer event (-1: none).
func (p *SnapshotPage) rankLineAt(ctx app.Context, e app.Event) int {
	if p.ranks == nil || p.ranks.chart == nil {
		return -1
	}
	plot := ctx.JSSrc().Call("querySelector", ".snap-rk-plot")
	if !plot.Truthy() {
		return -1
	}
	b := plot.Call("getBoundingClientRect")
	w, h := jsNumber(b, "width"), jsNumber(b, "height")
	fx := (jsNumber(e.Value, "clientX") - jsNumber(b, "left")) / w
	fy := (jsNumber(e.Value, "clientY") - jsNumber(b, "top")) / h
	if w <= 0 || h <= 0 || fx < 0 || fx > 1 || fy < 0 || fy > 1 {
		return -1
	}
	return p.ranks.chart.Nearest(fx, fy)
}

// onRankChartMove names the rank of the line under the pointer.
func (p *SnapshotPage) onRankChartMove(ctx app.Context, e app.Event) {
	ctx.PreventUpdate()
	if k := p.rankLineAt(ctx, e); p.ranks != nil && k != p.ranks.hl {
		p.showRankLine(ctx, k)
	}
}

// onRankChartLeave drops the highlight.
func (p *SnapshotPage) onRankChartLeave(ctx app.Context, e app.Event) {
	ctx.PreventUpdate()
	if p.ranks != nil && !isTouch(e) {
		p.showRankLine(ctx, -1)
	}
}

// onRankChartClick opens the rank of the line clicked (or tapped).
func (p *SnapshotPage) onRankChartClick(ctx app.Context, e app.Event) {
	r := p.ranks
	k := p.rankLineAt(ctx, e)
	if r == nil || k < 0 || k >= len(r.chartRows) {
		ctx.PreventUpdate()
		return
	}
	p.openRank(ctx, r.chartRows[k])
}

// onRankChartKey: arrow keys go from rank to rank, Enter or Space opens
// the one named, Escape drops the highlight.
func (p *SnapshotPage) onRankChartKey(ctx app.Context, e app.Event) {
	r := p.ranks
	if r == nil || r.chart == nil || len(r.chart.Lines) == 0 {
		ctx.PreventUpdate()
		return
	}
	n := len(r.chart.Lines)
	switch e.Get("key").String() {
	case "ArrowRight", "ArrowDown":
		p.showRankLine(ctx, (r.hl+1)%n)
	case "ArrowLeft", "ArrowUp":
		p.showRankLine(ctx, (max(r.hl, 0)+n-1)%n)
	case "Home":
		p.showRankLine(ctx, 0)
	case "End":
		p.showRankLine(ctx, n-1)
	case "Escape":
		p.showRankLine(ctx, -1)
	case "Enter", " ":
		if r.hl >= 0 {
			e.PreventDefault()
			p.openRank(ctx, r.chartRows[r.hl])
			return
		}
		ctx.PreventUpdate()
		return
	default:
		ctx.PreventUpdate()
		return
	}
	e.PreventDefault()
	ctx.PreventUpdate()
}

// droppedFolders returns the entries of what was dropped when one of them
// is a folder (FileSystemEntry; they must be taken during the drop event).
func droppedFolders(dt app.Value) ([]app.Value, bool) {
	items := dt.Get("items")
	if !items.Truthy() || items.Length() == 0 || items.Index(0).Get("webkitGetAsEntry").Type() != app.TypeFunction {
		return nil, false
	}
	var ents []app.Value
	folder := false
	for i := 0; i < items.Length(); i++ {
		ent := items.Index(i).Call("webkitGetAsEntry")
		if !ent.Truthy() {
			continue
		}
		folder = folder || ent.Get("isDirectory").Bool()
		ents = append(ents, ent)
	}
	return ents, folder
}

// readFolders lists the snapshot files of dropped folders (not of their
// subfolders, as the CLI reads a directory) and of the files dropped with
// them, then opens them as ranks.
func (p *SnapshotPage) readFolders(ctx app.Context, ents []app.Value) {
	ctx = p.lasting(ctx)
	ctx.Async(func() {
		var files []fileEntry
		var err error
		for _, ent := range ents {
			if !ent.Get("isDirectory").Bool() {
				files, err = appendEntryFile(files, ent)
			} else {
				var kids []app.Value
				if kids, err = entryCall(ent.Call("createReader"), "readEntries"); err == nil {
					for _, k := range kids {
						if k.Get("isFile").Bool() && load.IsSnapshotName(k.Get("name").String()) {
							if files, err = appendEntryFile(files, k); err != nil {
								break
							}
						}
					}
				}
			}
			if err != nil {
				break
			}
		}
		ctx.Dispatch(func(ctx app.Context) {
			if err != nil {
				p.fail(ctx, "Reading the dropped folder failed: "+err.Error())
				return
			}
			p.openFiles(ctx, files, true)
		})
	})
}

// appendEntryFile appends the File of a file entry, named by its path in
// the drop.
func appendEntryFile(files []fileEntry, ent app.Value) ([]fileEntry, error) {
	f, err := entryCall(ent, "file")
	if err != nil {
		return files, err
	}
	return append(files, fileEntry{file: f[0], name: strings.TrimPrefix(ent.Get("fullPath").String(), "/")}), nil
}

// entryCall calls a FileSystemEntry method that answers through callbacks
// (file, readEntries) and waits for it: file gives one File, readEntries
// is called until it gives no more entries.
func entryCall(obj app.Value, method string) ([]app.Value, error) {
	var out []app.Value
	for {
		type answer struct {
			v   app.Value
			err error
		}
		ch := make(chan answer, 1)
		ok := app.FuncOf(func(this app.Value, args []app.Value) any {
			ch <- answer{v: args[0]}
			return nil
		})
		bad := app.FuncOf(func(this app.Value, args []app.Value) any {
			msg := "the browser could not read it"
			if len(args) > 0 && args[0].Truthy() {
				msg += ": " + args[0].Call("toString").String()
			}
			ch <- answer{err: errors.New(msg)}
			return nil
		})
		obj.Call(method, ok, bad)
		a := <-ch
		ok.Release()
		bad.Release()
		if a.err != nil {
			return nil, a.err
		}
		if method == "file" {
			return []app.Value{a.v}, nil
		}
		if a.v.Length() == 0 || len(out) > 4*load.MaxRanks {
			return out, nil
		}
		for i := 0; i < a.v.Length(); i++ {
			out = append(out, a.v.Index(i))
		}
	}
}
