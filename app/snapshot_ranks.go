package app

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/snapshot/load"
)

// The overview of many ranks: a distributed job writes one snapshot per
// rank, and dropping three files or more (or choosing a folder) analyses
// them in a small pool of analysis workers. Each worker answers a file with
// its compact row (load.RequestRank: headline numbers, a few hundred bytes)
// and keeps nothing of it, so the page's memory follows the pool's size
// and the largest file, not the number of ranks. The outliers are marked
// by load.NewOverview, the rule the CLI prints too; a rank opens in the
// full view by analysing its file again in the page's own worker.

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
	size  int64     // known once its worker reports it (0 before)
	read  int64     // bytes read so far
	state rankState
	// row is the worker's answer (or the error), marked by the overview.
	row load.Rank
}

// rankWorker is one worker of the pool.
type rankWorker struct {
	w     app.Value
	onMsg app.Func
	row   int // index of the row it analyses, -1 when idle
	req   int // id of that request
}

// snapRanks is the state of an overview of ranks.
type snapRanks struct {
	rows     []*rankRow
	pool     []*rankWorker
	next     int   // next row to hand to a worker
	finished int   // rows done or failed
	read     int64 // bytes read of all files
	// median* and the outlier marks come from load.NewOverview over the
	// finished rows (recomputed as rows finish).
	medianAlloc, medianRes int64
	// open is the row shown in the full view (-1: the overview is shown).
	open int
	// shown is the number of rows in the table so far (listMore).
	shown int
	// lastRender and renderDue throttle the page's updates while the
	// workers report: one render per rankRenderEvery at most.
	lastRender time.Time
	renderDue  bool
}

// rankRenderEvery is the least time between two renders of the overview
// while files are being analysed: each render diffs up to 128 rows, and
// the workers' progress messages come far more often.
const rankRenderEvery = 250 * time.Millisecond

// maxRankWorkers caps the pool: each worker holds one analysis at a time,
// a few times the size of its file.
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
	p.stopWorker()
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
	r := &snapRanks{open: -1}
	for _, o := range load.NewOverview(pending).Ranks {
		f := files[byName[o.File][0]]
		byName[o.File] = byName[o.File][1:]
		r.rows = append(r.rows, &rankRow{file: f.file, name: f.name, row: load.Rank{File: f.name, Rank: o.Rank}})
	}
	p.ranks = r
	for _, a := range []string{"data-ranks-ready", "data-ranks-done"} {
		MarkBody(a, "")
	}
	// This update draws the page with the overview's frame only; the rows
	// follow frame by frame (listMore).
	p.markRanks(ctx)
	ctx.Defer(func(ctx app.Context) { p.listMore(ctx, r) })
	// The workers start in a task of their own, after the first drawing
	// of the overview: the drop's task stays short.
	ctx.After(time.Millisecond, func(ctx app.Context) {
		if p.ranks != r {
			ctx.PreventUpdate()
			return
		}
		for range rankPoolSize(len(r.rows)) {
			r.pool = append(r.pool, p.newRankWorker(ctx))
		}
		for _, w := range r.pool {
			p.feedRank(ctx, w)
		}
		if r.finished == len(r.rows) { // only empty files
			p.rankChanged(ctx, true)
			return
		}
		ctx.PreventUpdate()
		p.showRankProgress()
		// While the workers compile: decode sample answers once, so that
		// building the JSON decoder's tables for them is not part of the
		// first answer's task.
		ctx.After(time.Millisecond, func(ctx app.Context) {
			ctx.PreventUpdate()
			for _, js := range []string{`{"type":"progress","id":1,"progress":{"stage":"decode","done":1,"total":2}}`,
				`{"type":"rank","id":1,"rank":{"file":"a","rank":0,"devices":[{"device":0}],"why":["x"]}}`,
				`{"type":"error","id":1,"error":"x"}`} {
				load.DecodeResponse(js, nil)
			}
		})
	})
}

// newRankWorker starts one worker of the pool.
func (p *SnapshotPage) newRankWorker(ctx app.Context) *rankWorker {
	ctx = p.lasting(ctx)
	rw := &rankWorker{row: -1}
	rw.w = app.Window().Get("Worker").New(Asset("/web/snapworker.js"))
	rw.onMsg = app.FuncOf(func(this app.Value, args []app.Value) any {
		if len(args) == 0 {
			return nil
		}
		var m load.Response
		if args[0].Get("type").String() == "error" && args[0].Get("data").Type() != app.TypeObject {
			m = load.Response{Type: load.ResponseError, Error: "the analysis worker could not start: " + jsString(args[0], "message")}
		} else {
			// Rank messages are small (no timeline, no buffers): decoding
			// them here takes well under a millisecond.
			r, err := load.DecodeResponse(jsString(args[0].Get("data"), "json"), nil)
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
	return rw
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
	MarkBody("data-ranks-ready", "")
	MarkBody("data-ranks-done", "")
}

// feedRank hands the next queued file to an idle worker; a worker with
// nothing left to do is ended (its memory goes back to the browser).
func (p *SnapshotPage) feedRank(ctx app.Context, rw *rankWorker) {
	r := p.ranks
	// The worker asks the File for its size (and an empty file is its
	// row's error): for a dropped file the browser looks the size up on
	// disk, which took milliseconds per file on the page's thread.
	if r.next < len(r.rows) {
		i := r.next
		r.next++
		row := r.rows[i]
		p.nextID++
		rw.row, rw.req = i, p.nextID
		row.state = rankRunning
		msg := app.Window().Get("Object").New()
		msg.Set("json", load.EncodeRequest(load.Request{Type: load.RequestRank, ID: rw.req, Name: row.name}))
		msg.Set("file", row.file)
		rw.w.Call("postMessage", msg)
		return
	}
	rw.row = -1
	rw.stop()
}

// onRankMsg applies a pool worker's message.
func (p *SnapshotPage) onRankMsg(ctx app.Context, rw *rankWorker, m load.Response) {
	r := p.ranks
	if r == nil || rw.w == nil || rw.row < 0 {
		ctx.PreventUpdate()
		return
	}
	if m.ID == 0 && m.Type == load.ResponseError {
		// The worker itself stopped (out of memory, say): its file fails,
		// a fresh worker takes the rest.
		i := rw.row
		rw.row = -1
		rw.stop()
		p.rankFinished(ctx, i, load.Rank{Error: m.Error})
		nw := p.newRankWorker(ctx)
		for k, w := range r.pool {
			if w == rw {
				r.pool[k] = nw
			}
		}
		p.feedRank(ctx, nw)
		p.rankChanged(ctx, false)
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
	p.feedRank(ctx, rw)
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
}

// rankChanged renders the overview now when final, else at most once per
// rankRenderEvery: the pool's messages then never make the page busy.
func (p *SnapshotPage) rankChanged(ctx app.Context, final bool) {
	r := p.ranks
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

// OnMount lets the page draw the overview alone.
func (o *rankOverview) OnMount(ctx app.Context) { o.Page.ovCtx, o.Page.ovMounted = ctx, true }

// OnDismount stops that.
func (o *rankOverview) OnDismount() { o.Page.ovMounted = false }

// Render draws the overview.
func (o *rankOverview) Render() app.UI {
	if o.Page.ranks == nil {
		return app.Div()
	}
	return o.Page.renderRanks()
}

// markRanks sets the overview's markers once the render is drawn: the
// ranks finished, and the time when all are finished and listed.
func (p *SnapshotPage) markRanks(ctx app.Context) {
	r := p.ranks
	n, ready := strconv.Itoa(r.finished), r.finished == len(r.rows) && r.shown == len(r.rows)
	ctx.Defer(func(app.Context) {
		MarkBody("data-ranks-done", n)
		if ready {
			MarkBody("data-ranks-ready", now())
		}
	})
}

// rankRowsPerStep is how many rows a render adds to the overview's table:
// mounting 128 rows at once took over 100 ms of the page's time, 8 at a
// time still 30-60 ms on a busy 2-core machine.
const rankRowsPerStep = 4

// listMore adds rankRowsPerStep rows to the table in a render of its own,
// until every file has its row.
func (p *SnapshotPage) listMore(ctx app.Context, r *snapRanks) {
	ctx.After(time.Millisecond, func(ctx app.Context) {
		if p.ranks != r || r.shown >= len(r.rows) {
			ctx.PreventUpdate()
			return
		}
		r.shown = min(len(r.rows), r.shown+rankRowsPerStep)
		p.redrawRanks(ctx)
		// The next rows after this render is drawn: go-app draws once per
		// frame all that changed since the last.
		ctx.Defer(func(ctx app.Context) { p.listMore(ctx, r) })
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
	p.ranks.open = -1
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
		s += fmt.Sprintf(" · %d workers", len(r.pool))
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

// renderRanks is the overview: progress, a bar chart and a table of the
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
		p.renderRankBars(),
		app.Div().Class("table-wrap").Attr("tabindex", 0).Aria("label", "Peaks per rank").Attr("role", "region").Body(
			app.Table().ID("snap-ranks-table").Class("snap-ranks-table").Body(
				app.Caption().Text("Peaks per rank: open a rank for its full analysis"),
				app.THead().Body(app.Tr().Body(
					app.Th().Text("rank"), app.Th().Class("num").Text("peak allocated"), app.Th().Class("num").Text("peak reserved"),
					app.Th().Class("num snap-wide").Text("allocated at the end"), app.Th().Class("num snap-wide").Text("reserved at the end"),
					app.Th().Class("num").Text("OOMs"), app.Th().Text("file"),
				)),
				app.TBody().Body(p.renderRankRows()...),
			),
		),
		app.P().ID("snap-ranks-rule").Class("formula").Text(fmt.Sprintf("%d outlier(s)%s; median peak allocated %s, median peak reserved %s. Outliers: %s.",
			outliers, map[bool]string{true: " so far", false: ""}[r.finished < n], bytesize.Format(r.medianAlloc, p.unit),
			bytesize.Format(r.medianRes, p.unit), load.OutlierRule)),
	)
}

// renderRankRows is a row per rank, with its state, numbers or error.
// Each row is a component of plain fields: go-app draws again only the
// rows whose fields changed, not all 128 at each update.
func (p *SnapshotPage) renderRankRows() []app.UI {
	r := p.ranks
	rows := make([]app.UI, 0, r.shown+1)
	for k, x := range r.rows[:r.shown] {
		v := rankRowData{Index: k, Label: rankLabel(x, k), Name: shown(x.name), Unit: p.unit,
			State: map[rankState]string{rankQueued: "queued", rankRunning: "running", rankDone: "done", rankFailed: "failed"}[x.state],
			Rank:  x.row.Rank, Outlier: x.row.Outlier, Why: x.row.Why, Error: shown(x.row.Error), Read: x.read, Size: x.size,
			Alloc: x.row.PeakAllocatedBytes, Res: x.row.PeakReservedBytes, OOMs: x.row.OOMEvents, Devices: len(x.row.Devices)}
		for _, h := range x.row.Devices {
			v.FinalAlloc += h.FinalAllocatedBytes
			v.FinalRes += h.FinalReservedBytes
		}
		rows = append(rows, &rankRowView{Page: p, Row: v})
	}
	if more := len(r.rows) - r.shown; more > 0 {
		rows = append(rows, app.Tr().Class("snap-rank-more").Body(app.Td().ColSpan(7).Class("muted").Text(fmt.Sprintf("listing %d more files…", more))))
	}
	return rows
}

// rankRowView is a row of the overview's table. Its data is one field:
// go-app compares a component's fields one by one through reflection at
// each update of the overview, for every row.
type rankRowView struct {
	app.Compo
	// Page opens the rank (the same pointer at each render: not a change).
	Page *SnapshotPage
	Row  rankRowData
}

// rankRowData is what a row shows.
type rankRowData struct {
	Index, Rank, OOMs, Devices int
	Label, Name, State, Error  string
	Outlier                    bool
	Why                        []string
	Alloc, Res, FinalAlloc     int64
	FinalRes, Read, Size       int64
	Unit                       bytesize.Unit
}

// Render draws the row.
func (rv *rankRowView) Render() app.UI {
	v := &rv.Row
	num := func(b int64, cls string) app.UI {
		return app.Td().Class(cls).Title("%s B", bytesize.Commas(b)).Text(bytesize.Format(b, v.Unit))
	}
	cls := "snap-rank-" + v.State
	if v.Outlier {
		cls += " snap-rank-outlier"
	}
	head := app.Th().Scope("row").Body(app.Text(v.Label))
	if v.State == "done" {
		head = app.Th().Scope("row").Body(app.Button().Class("snap-rank-open").Title("Open %s in the full view", v.Label).
			Text(v.Label).OnClick(func(ctx app.Context, e app.Event) { rv.Page.openRank(ctx, v.Index) }))
	}
	file := []app.UI{app.Text(v.Name)}
	var cells []app.UI
	switch v.State {
	case "done":
		cells = []app.UI{num(v.Alloc, "num"), num(v.Res, "num"), num(v.FinalAlloc, "num snap-wide"), num(v.FinalRes, "num snap-wide"),
			app.Td().Class("num").Text(strconv.Itoa(v.OOMs))}
		if v.Outlier {
			for _, w := range v.Why {
				file = append(file, app.Br(), app.Strong().Class("snap-rank-why").Text("outlier: "+w))
			}
		}
		if v.Devices > 1 {
			file = append(file, app.Br(), app.Span().Class("muted").Text(fmt.Sprintf("%d devices: the highest peaks", v.Devices)))
		}
	case "failed":
		cells = []app.UI{app.Td().ColSpan(5).Class("error snap-rank-error").Text(v.Error)}
	default:
		what := "waiting for a worker"
		if v.State == "running" {
			what = fmt.Sprintf("reading… %s of %s", bytesize.Format(v.Read, v.Unit), bytesize.Format(v.Size, v.Unit))
		}
		cells = []app.UI{app.Td().ColSpan(5).Class("muted").Text(what)}
	}
	tr := app.Tr().Class(cls).DataSet("index", v.Index).DataSet("rank", v.Rank).DataSet("state", v.State).DataSet("outlier", v.Outlier)
	if v.State == "done" {
		tr = tr.DataSet("peak-allocated", v.Alloc).DataSet("peak-reserved", v.Res)
	}
	return tr.Body(append(append([]app.UI{head}, cells...), app.Td().Class("snap-rank-file").Body(file...))...)
}

// rankBarView is a rank's pair of bars in the overview's chart.
type rankBarView struct {
	app.Compo
	Title, Alloc, Res string
	Done, Outlier     bool
}

// Render draws the bars.
func (v *rankBarView) Render() app.UI {
	cls := "snap-rb"
	if v.Outlier {
		cls += " snap-rb-outlier"
	}
	if !v.Done {
		return app.Div().Class(cls+" snap-rb-empty").Title("%s", v.Title)
	}
	return app.Div().Class(cls).Title("%s", v.Title).Body(
		app.Div().Class("snap-rb-alloc").Style("height", v.Alloc),
		app.Div().Class("snap-rb-res").Style("height", v.Res),
	)
}

// renderRankBars draws the peak allocated and reserved of each analysed
// rank as a pair of bars (the table has the numbers).
func (p *SnapshotPage) renderRankBars() app.UI {
	r := p.ranks
	var top int64
	for _, x := range r.rows {
		if x.state == rankDone {
			top = max(top, x.row.PeakAllocatedBytes, x.row.PeakReservedBytes)
		}
	}
	pct := func(v int64) string {
		if top <= 0 {
			return "0%"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(v)/float64(top))
	}
	cols := make([]app.UI, 0, r.shown)
	for k, x := range r.rows[:r.shown] {
		label := rankLabel(x, k)
		v := &rankBarView{Done: x.state == rankDone, Outlier: x.row.Outlier}
		switch x.state {
		case rankDone:
			v.Title = fmt.Sprintf("%s: peak allocated %s, peak reserved %s", label,
				bytesize.Format(x.row.PeakAllocatedBytes, p.unit), bytesize.Format(x.row.PeakReservedBytes, p.unit))
			v.Alloc, v.Res = pct(x.row.PeakAllocatedBytes), pct(x.row.PeakReservedBytes)
		case rankFailed:
			v.Title = label + ": could not be analysed"
		default:
			v.Title = label + ": not analysed yet"
		}
		cols = append(cols, v)
	}
	return app.Figure().ID("snap-ranks-chart").Class("snap-ranks-chart").Body(
		app.Div().Class("snap-rb-plot").Attr("role", "img").Aria("label", fmt.Sprintf("Peak allocated and reserved of %d ranks, "+
			"outliers in red; the table below has the numbers", len(r.rows))).Body(cols...),
		app.FigCaption().Class("muted").Body(
			app.Span().Class("snap-rb-key snap-rb-alloc"), app.Text(" peak allocated "),
			app.Span().Class("snap-rb-key snap-rb-res"), app.Text(" peak reserved, per rank in order; "),
			app.Span().Class("snap-rb-key snap-rb-key-outlier"), app.Text(" outlier (up to "+bytesize.Format(top, p.unit)+")"),
		),
	)
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
