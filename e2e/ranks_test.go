//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"oomscope/bytesize"
	"oomscope/snapshot/gen"
	"oomscope/snapshot/load"
)

// dropFiles drags several real files from disk onto the element matching
// sel at once (trusted drag events), as a user dropping a selection would.
func (tb *tab) dropFiles(sel string, paths []string) {
	tb.t.Helper()
	var abs []string
	for _, p := range paths {
		a, _ := filepath.Abs(p)
		abs = append(abs, a)
	}
	box := evalJS[map[string]float64](tb, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return {x: r.x + r.width/2, y: r.y + r.height/2}; })()`, sel))
	data := &input.DragData{Items: []*input.DragDataItem{}, Files: abs, DragOperationsMask: 1}
	for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
		_, err := chromedp.Call(tb.ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: box["x"], Y: box["y"], Data: data})
		if err != nil {
			tb.t.Fatalf("drag %s: %v", typ, err)
		}
	}
}

// uploadFiles sets several files on an <input type=file multiple>.
func (tb *tab) uploadFiles(sel string, paths []string) {
	tb.t.Helper()
	var abs []string
	for _, p := range paths {
		a, _ := filepath.Abs(p)
		abs = append(abs, a)
	}
	tb.do(chromedp.SetUploadFiles(chromedp.CSS(sel), abs))
}

// rankRow is a row of the page's overview table, read from its data
// attributes.
type rankRow struct {
	Rank    string `json:"rank"`
	State   string `json:"state"`
	Outlier string `json:"outlier"`
	Alloc   string `json:"alloc"`
	Res     string `json:"res"`
	Text    string `json:"text"`
}

// rankLine is a line of the chart of ranks: its rank, whether it is drawn
// as an outlier, its highest point's y and the top of the shaded band (in
// the drawing's units, 0 at the top; -1 without a band).
type rankLine struct {
	Title   string  `json:"title"`
	Outlier bool    `json:"outlier"`
	TopY    float64 `json:"top"`
	BandY   float64 `json:"band"`
}

const rankLinesJS = `[...document.querySelectorAll("#snap-rk-fig path.snap-rk-line")].map(p => {
	const n = p.getAttribute("d").match(/-?\d+/g).map(Number); let top = 1e9; for (let i = 1; i < n.length; i += 2) top = Math.min(top, n[i]);
	const band = document.querySelector("#snap-rk-fig .snap-rk-band");
	return {title: p.querySelector("title").textContent, outlier: p.classList.contains("snap-rk-outlier"), top, band: band ? +band.getAttribute("y") : -1}; })`

const rankRowsJS = `[...document.querySelectorAll("#snap-ranks-table tbody tr")].map(r => ({rank: r.dataset.rank, state: r.dataset.state,
	outlier: r.dataset.outlier, alloc: r.dataset.peakAllocated || "", res: r.dataset.peakReserved || "", text: r.textContent}))`

// TestSnapshotRanks writes eight generated ranks (rank 5 runs a model
// twice as deep: an outlier by the generator's design) and a corrupt ninth,
// drops them together and checks the overview: each rank's peaks equal
// package load's own analysis of its file here (and the generator's
// truth), the outlier marked is rank 5 alone as the rule says, the corrupt
// file's row shows its error while the others succeed, a rank opens in the
// full view with its peak and the way back leads to the same overview.
func TestSnapshotRanks(t *testing.T) {
	dir := t.TempDir()
	paths, peaks, err := gen.WriteRanks(dir, 8, 5)
	if err != nil {
		t.Fatal(err)
	}
	var want []load.Rank
	for _, p := range paths {
		f, closer, err := load.OpenFile(p, nil, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, load.FileRank(f))
		closer.Close()
	}
	// Rank 8: the first half of rank 0's file.
	good, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "snapshot_rank8.pickle")
	if err := os.WriteFile(corrupt, good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	// Give the files in reverse order: the overview sorts them by rank.
	drop := []string{corrupt}
	for i := len(paths) - 1; i >= 0; i-- {
		drop = append(drop, paths[i])
	}
	o := load.NewOverview(want)
	for _, r := range o.Ranks {
		if r.Outlier != (r.Rank == 5) {
			t.Fatalf("the generated ranks do not make rank 5 the only outlier: rank %d outlier %v %q", r.Rank, r.Outlier, r.Why)
		}
	}

	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.dropFiles("#snap-drop", drop)
	poll[string](tb, `document.body.getAttribute("data-ranks-ready") || ""`, 120*time.Second)

	rows := evalJS[[]rankRow](tb, rankRowsJS)
	if len(rows) != 9 {
		t.Fatalf("%d rows, want 9: %+v", len(rows), rows)
	}
	for i, r := range rows[:8] {
		w := o.Ranks[i]
		if r.Rank != strconv.Itoa(i) || r.State != "done" {
			t.Errorf("row %d: rank %s state %s (%q)", i, r.Rank, r.State, r.Text)
			continue
		}
		if r.Alloc != strconv.FormatInt(w.PeakAllocatedBytes, 10) || r.Res != strconv.FormatInt(w.PeakReservedBytes, 10) {
			t.Errorf("rank %d: page peaks %s / %s, load says %d / %d", i, r.Alloc, r.Res, w.PeakAllocatedBytes, w.PeakReservedBytes)
		}
		if w.PeakAllocatedBytes != peaks[i] {
			t.Errorf("rank %d: load's peak %d differs from the generator's %d", i, w.PeakAllocatedBytes, peaks[i])
		}
		if r.Outlier != strconv.FormatBool(i == 5) {
			t.Errorf("rank %d: outlier %s", i, r.Outlier)
		}
	}
	if bad := rows[8]; bad.Rank != "8" || bad.State != "failed" || !strings.Contains(bad.Text, "snapshot_rank8.pickle is not a readable memory snapshot") {
		t.Errorf("corrupt rank: %+v", bad)
	}
	if txt := tb.text("#snap-ranks-status"); !strings.Contains(txt, "9 of 9 ranks analysed") || !strings.Contains(txt, "1 could not be analysed") {
		t.Errorf("status %q", txt)
	}
	if txt := tb.text("#snap-ranks-rule"); !strings.Contains(txt, load.OutlierRule) || !strings.Contains(txt, "1 outlier") {
		t.Errorf("rule %q", txt)
	}
	// The chart of all ranks: a line per analysed rank, rank 5's alone red;
	// its highest point leaves the shaded band of non-outlier peaks, every
	// other line's stays in it (the rule, drawn).
	lines := evalJS[[]rankLine](tb, rankLinesJS)
	if len(lines) != 8 {
		t.Fatalf("%d lines in the chart of ranks, want the 8 analysed ranks: %+v", len(lines), lines)
	}
	for _, l := range lines {
		if l.Outlier != (l.Title == "rank 5") {
			t.Errorf("line %q drawn as outlier=%v", l.Title, l.Outlier)
		}
		if l.Outlier && l.TopY >= l.BandY || !l.Outlier && l.TopY < l.BandY-1 {
			t.Errorf("line %q reaches y %v, the band's top is at %v", l.Title, l.TopY, l.BandY)
		}
	}
	// Keyboard: the sixth rank from the chart's start is rank 5, named with
	// its peak (the generator's) and why it is an outlier.
	evalJS[bool](tb, `(() => { document.getElementById("snap-rk-fig").focus(); return true; })()`)
	for range 6 {
		tb.do(chromedp.KeyEvent(kb.ArrowRight))
	}
	if name := tb.text("#snap-rk-name"); !strings.HasPrefix(name, "rank 5: peak allocated "+bytesize.Format(peaks[5], bytesize.Binary)) ||
		!strings.Contains(name, "outlier: "+o.Ranks[5].Why[0]) {
		t.Errorf("the chart names %q after six arrow keys", name)
	}
	if why := tb.text(`#snap-ranks-table tr[data-rank="5"]`); strings.Count(why, "outlier: "+o.Ranks[5].Why[0]) != 1 {
		t.Errorf("rank 5 row %q does not say once %q", why, o.Ranks[5].Why[0])
	}
	tb.screenshot("snapshot-ranks")
	tb.setViewport(375, 800)
	if over := evalJS[bool](tb, `document.documentElement.scrollWidth > document.documentElement.clientWidth + 1`); over {
		t.Error("the overview of ranks is wider than a phone's screen")
	}
	tb.screenshot("snapshot-ranks-phone")
	tb.setViewport(1200, 900)
	for _, theme := range []string{"dark", "light"} {
		tb.setColorScheme(theme)
		for _, v := range axeCheck(tb) {
			t.Errorf("overview of ranks (%s): %s %s: %s\n\t%s", theme, v.Impact, v.ID, v.Help, strings.Join(v.Nodes, "\n\t"))
		}
	}

	// Open rank 5 in the full view by clicking its line at its peak, then
	// back.
	at := evalJS[map[string]float64](tb, `(() => {
		const plot = document.querySelector("#snap-rk-fig .snap-rk-plot"); plot.scrollIntoView({block: "center"});
		const n = document.querySelector("#snap-rk-fig path.snap-rk-outlier").getAttribute("d").match(/-?\d+/g).map(Number);
		let x = 0, y = 1e9; for (let i = 0; i < n.length; i += 2) if (n[i+1] < y) { x = n[i]; y = n[i+1]; }
		const r = plot.getBoundingClientRect(); return {x: r.left + x / 10000 * r.width, y: r.top + y / 3000 * r.height}; })()`)
	// Pointing at the peak names rank 5 first (Escape dropped the
	// keyboard's choice).
	tb.do(chromedp.KeyEvent(kb.Escape))
	if name := tb.text("#snap-rk-name"); strings.Contains(name, "rank 5") {
		t.Errorf("Escape left the name %q", name)
	}
	if _, err := chromedp.Call(tb.ctx, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: at["x"], Y: at["y"]}); err != nil {
		t.Fatal(err)
	}
	tb.waitText("#snap-rk-name", "rank 5: peak allocated "+bytesize.Format(peaks[5], bytesize.Binary))
	tb.do(chromedp.MouseClickXY(at["x"], at["y"]))
	requireSnapshot(tb, "rank 5's full view")
	if got := evalJS[string](tb, `document.getElementById("snap-peak-wrap").dataset.bytes`); got != strconv.FormatInt(peaks[5], 10) {
		t.Errorf("full view of rank 5: peak %s, want %d", got, peaks[5])
	}
	if name := tb.text("#snap-filename"); !strings.Contains(name, "snapshot_rank5.pickle") {
		t.Errorf("full view shows %q", name)
	}
	if evalJS[bool](tb, `!!document.getElementById("snap-ranks-table")`) {
		t.Error("the overview is still shown with the full view")
	}
	tb.click("#snap-ranks-back")
	tb.waitText("#snap-ranks-status", "9 of 9 ranks analysed")
	if again := evalJS[[]rankRow](tb, rankRowsJS); len(again) != 9 || again[5].Alloc != rows[5].Alloc || again[5].Outlier != "true" {
		t.Errorf("back in the overview: %+v", again)
	}
	if evalJS[bool](tb, `!!document.getElementById("snap-results")`) {
		t.Error("the full view is still shown with the overview")
	}
	// The unit switch redraws the overview in GB.
	tb.click("#snap-ranks #unit-gb")
	gb := bytesize.Format(o.Ranks[5].PeakAllocatedBytes, bytesize.Decimal)
	tb.waitText(`#snap-ranks-table tr[data-rank="5"]`, gb)
	tb.click("#snap-ranks #unit-gib")
	tb.waitText(`#snap-ranks-table tr[data-rank="5"]`, bytesize.Format(o.Ranks[5].PeakAllocatedBytes, bytesize.Binary))

	// Three files picked with the input are ranks too; one file is the
	// single-file view again.
	tb.uploadFiles("#snap-file", paths[:3])
	poll[string](tb, `(() => { const v = document.body.getAttribute("data-ranks-ready"); return v && document.querySelectorAll("#snap-ranks-table tbody tr").length === 3 ? v : ""; })()`, 60*time.Second)
	if rows := evalJS[[]rankRow](tb, rankRowsJS); len(rows) != 3 || rows[2].Alloc != strconv.FormatInt(o.Ranks[2].PeakAllocatedBytes, 10) {
		t.Errorf("three picked files: %+v", rows)
	}
	tb.uploadFile("#snap-file", paths[1])
	requireSnapshot(tb, "one file after the overview")
	if evalJS[bool](tb, `!!document.getElementById("snap-ranks") || !!document.getElementById("snap-ranks-back")`) {
		t.Error("the overview stays after one file was chosen")
	}
	tb.requireWatched("worker")
	assertLocalOnly(t, tb, s)
	tb.assertClean()
}

// TestSnapshotTwoFilesCompare drops two files together: the first is
// analysed and the second compared with it, as with the second drop zone.
func TestSnapshotTwoFilesCompare(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, layers := range []int{4, 6} {
		data, _, err := gen.Bytes(gen.Options{Seed: uint64(i + 1), Layers: layers, Hidden: 512, Steps: 1})
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("%c.pickle", 'a'+i))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	before, c1, err := load.OpenFile(paths[0], nil, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	after, c2, err := load.OpenFile(paths[1], nil, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	want := load.Compare(before, after).Devices[0].PeakAllocated

	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.dropFiles("#snap-drop", paths)
	v := poll[string](tb, `document.body.getAttribute("data-snapshot-compare") ? "done" : (document.body.getAttribute("data-snapshot-compare-error") || document.body.getAttribute("data-snapshot-error") ? "error" : "")`, 90*time.Second)
	if v != "done" {
		t.Fatalf("the comparison failed: %s %s", tb.text("#snap-compare-error"), tb.text("#snap-error"))
	}
	got := evalJS[map[string]string](tb, `({...document.querySelector('#snap-cmp-0 tr[data-key="peak_allocated"]').dataset})`)
	if got["before"] != strconv.FormatInt(want.Before, 10) || got["after"] != strconv.FormatInt(want.After, 10) {
		t.Errorf("peak allocated before/after = %v, want %d / %d", got, want.Before, want.After)
	}
	tb.assertClean()
}

// TestSnapshotRanksFolder drops a folder of three ranks, a text file and a
// subfolder: its snapshot files are the ranks (as the CLI reads a
// directory), with the peaks package load finds in them.
func TestSnapshotRanksFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "job")
	if err := os.MkdirAll(filepath.Join(dir, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	var want []int64
	for rank := range 3 {
		data, _, err := gen.Bytes(gen.Options{Seed: uint64(rank + 1), Layers: 2 + rank, Hidden: 256, Steps: 1})
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("rank_%d.pickle", rank))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, closer, err := load.OpenFile(p, nil, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, load.FileRank(f).PeakAllocatedBytes)
		closer.Close()
		if rank == 0 { // a copy in a subfolder is not read
			if err := os.WriteFile(filepath.Join(dir, "old", "rank_9.pickle"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a rank"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.dropFiles("#snap-drop", []string{dir})
	poll[string](tb, `document.body.getAttribute("data-ranks-ready") || document.body.getAttribute("data-snapshot-error") || ""`, 60*time.Second)
	rows := evalJS[[]rankRow](tb, rankRowsJS)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want the folder's 3 snapshots: %+v (error %q)", len(rows), rows, tb.text("#snap-error"))
	}
	for i, r := range rows {
		if r.Rank != strconv.Itoa(i) || r.Alloc != strconv.FormatInt(want[i], 10) || !strings.Contains(r.Text, fmt.Sprintf("job/rank_%d.pickle", i)) {
			t.Errorf("row %d = %+v, want rank %d with peak %d", i, r, i, want[i])
		}
	}

	// The table's button opens a rank too.
	tb.click(`#snap-ranks-table tr[data-rank="1"] .snap-rank-open`)
	requireSnapshot(tb, "rank 1's full view")
	if got := evalJS[string](tb, `document.getElementById("snap-peak-wrap").dataset.bytes`); got != strconv.FormatInt(want[1], 10) {
		t.Errorf("full view of rank 1: peak %s, want %d", got, want[1])
	}
	tb.click("#snap-ranks-back")
	tb.waitText("#snap-ranks-status", "3 of 3 ranks analysed")

	// The same folder chosen with "Choose a folder" (webkitdirectory).
	evalJS[bool](tb, `(() => { document.body.removeAttribute("data-ranks-ready"); return true; })()`)
	tb.uploadFiles("#snap-folder", []string{dir})
	poll[string](tb, `document.body.getAttribute("data-ranks-ready") || document.body.getAttribute("data-snapshot-error") || ""`, 60*time.Second)
	if picked := evalJS[[]rankRow](tb, rankRowsJS); len(picked) != 3 || picked[2].Alloc != strconv.FormatInt(want[2], 10) {
		t.Errorf("the folder picked: %+v", picked)
	}
	tb.assertClean()
}

// TestSnapshotRanksWarm opens the page and waits until it has drawn the
// overview of ranks on made-up rows, off screen (app warmRanks), and its
// worker has answered its sample (its compiled snapworker.wasm then known
// to the page); then it drops four generated ranks. Nothing of the made-up
// rows shows; every pool worker starts from that module (app
// startRankWorker, snapworker.js's shared worker) and each rank's peaks
// equal package load's analysis of its file here and the generator's; the
// status line counts the files' sizes as read; the pool, handed a file a
// task, runs as many at once as it has places.
func TestSnapshotRanksWarm(t *testing.T) {
	dir := t.TempDir()
	paths, peaks, err := gen.WriteRanks(dir, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	var total int64 // the files' sizes
	for _, p := range paths {
		f, closer, err := load.OpenFile(p, nil, load.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, load.FileRank(f).PeakAllocatedBytes)
		closer.Close()
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		total += st.Size()
	}
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	if v := poll[string](tb, `document.body.getAttribute("data-ranks-warm") || ""`, 60*time.Second); v != "drawn" {
		t.Fatalf("the ranks' warm-up ended %q", v)
	}
	poll[bool](tb, `document.body.getAttribute("data-snapshot-warm") === "drawn"`, 60*time.Second)
	if shown := evalJS[bool](tb, `!!document.getElementById("snap-ranks") || document.body.textContent.includes("rank0.pickle")`); shown {
		t.Fatal("the warm-up's made-up ranks show on the page")
	}
	tb.dropFiles("#snap-drop", paths)
	poll[string](tb, `document.body.getAttribute("data-ranks-ready") || ""`, 120*time.Second)
	rows := evalJS[[]rankRow](tb, rankRowsJS)
	if len(rows) != len(paths) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(paths), rows)
	}
	for i, r := range rows {
		if r.Rank != strconv.Itoa(i) || r.State != "done" || r.Alloc != strconv.FormatInt(want[i], 10) || want[i] != peaks[i] {
			t.Errorf("row %d: rank %s state %s peak %s, load says %d, the generator %d (%q)", i, r.Rank, r.State, r.Alloc, want[i], peaks[i], r.Text)
		}
	}
	// Each file's size, read as it starts (feedRanks), sums to what the
	// status says was read.
	if txt, read := tb.text("#snap-ranks-status"), bytesize.Format(total, bytesize.Binary)+" read"; !strings.Contains(txt, "4 of 4 ranks analysed · "+read) {
		t.Errorf("status %q, want %q", txt, read)
	}
	var shared, started int
	workers := evalJS[string](tb, `document.body.getAttribute("data-ranks-workers") || ""`)
	if _, err := fmt.Sscanf(workers, "%d shared of %d", &shared, &started); err != nil || started < 1 || shared != started {
		t.Errorf("pool workers: %q, want all started from the page's compiled module", workers)
	}
	// The files are handed over one a task, the pool filled all the same.
	var most, places int
	atOnce := evalJS[string](tb, `document.body.getAttribute("data-ranks-at-once") || ""`)
	if _, err := fmt.Sscanf(atOnce, "%d of %d", &most, &places); err != nil || places < 1 || most != min(places, len(paths)) {
		t.Errorf("files analysed at once: %q, want as many as the pool's places", atOnce)
	}
	tb.assertClean()
}

// TestSnapshotDragMark drags files over the drop zone, as a user would
// (dragenter, then dragover every 50 ms), and checks that the zone is
// marked while they are over it (the page draws the mark only when it
// changes: app setDragOver) and unmarked when they leave it; then drops
// three ranks on it (the overview drawn in a task after the drop's: app
// drawLater, which puts off a drawing of the mark still due too) and
// checks that the overview is drawn, analysed, and the zone unmarked.
func TestSnapshotDragMark(t *testing.T) {
	paths, _, err := gen.WriteRanks(t.TempDir(), 3, -1)
	if err != nil {
		t.Fatal(err)
	}
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	box := evalJS[map[string]float64](tb, `(() => { const r = document.querySelector("#snap-drop").getBoundingClientRect(); return {x: r.x + r.width/2, y: r.y + r.height/2}; })()`)
	data := &input.DragData{Items: []*input.DragDataItem{}, Files: paths, DragOperationsMask: 1}
	drag := func(typ input.DispatchDragEventType, x, y float64) {
		t.Helper()
		if _, err := chromedp.Call(tb.ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: x, Y: y, Data: data}); err != nil {
			t.Fatalf("drag %s: %v", typ, err)
		}
	}
	const marked = `document.getElementById("snap-drop").classList.contains("snap-drop-over")`
	drag(input.DispatchDragEventTypeDragEnter, box["x"], box["y"])
	for range 4 {
		drag(input.DispatchDragEventTypeDragOver, box["x"], box["y"])
		time.Sleep(50 * time.Millisecond)
	}
	poll[bool](tb, marked, 10*time.Second)
	// Out of the zone (the page's top left corner): dragleave.
	drag(input.DispatchDragEventTypeDragOver, 2, 2)
	poll[bool](tb, `!`+marked, 10*time.Second)
	// Back over it, marked and drawn: the drop (its dragenter and
	// dragover change nothing) is drawn in a task of its own.
	drag(input.DispatchDragEventTypeDragOver, box["x"], box["y"])
	poll[bool](tb, marked, 10*time.Second)
	time.Sleep(100 * time.Millisecond)
	tb.dropFiles("#snap-drop", paths)
	poll[string](tb, `document.body.getAttribute("data-ranks-ready") || ""`, 60*time.Second)
	if rows := evalJS[[]rankRow](tb, rankRowsJS); len(rows) != 3 || rows[0].State != "done" || rows[2].State != "done" {
		t.Errorf("overview rows %+v", rows)
	}
	if evalJS[bool](tb, marked) {
		t.Error("the drop zone stays marked after the drop")
	}
	tb.assertClean()
}
