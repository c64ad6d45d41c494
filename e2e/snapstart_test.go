//go:build e2e

package e2e

import (
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// readerWorker is the name of the analysis worker's nested file reader
// (readerName in static/web/snapworker.js), partWorker that of its part
// worker (partName).
const (
	readerWorker = "oomscope-reader"
	partWorker   = "oomscope-part"
)

// workerTargets counts the dedicated workers the tab's page started, not
// counting the analysis workers' file readers and part workers.
func workerTargets(tb *tab) int {
	n := 0
	for _, r := range tb.children() {
		if r.name == "worker" && r.title != readerWorker && r.title != partWorker {
			n++
		}
	}
	return n
}

// TestSnapshotWorkerStartsWithPage: on /snapshot, site.js starts the
// analysis worker before the WebAssembly app has loaded, the app adopts it
// (it starts no second one), and a file dropped at once is analysed by it:
// the peak the page shows is load's, computed here.
func TestSnapshotWorkerStartsWithPage(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_forward.pickle")
	_, want := expectedReport(t, path)
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	// site.js set window.__oomscopeSnapWorker; the app took it and left
	// null (undefined if nothing had been started before the app).
	if got := evalJS[string](tb, `window.__oomscopeSnapWorker === null ? "adopted" : String(window.__oomscopeSnapWorker)`); got != "adopted" {
		t.Errorf("window.__oomscopeSnapWorker = %s, want null (started by site.js, adopted by the app)", got)
	}
	tb.uploadFile("#snap-file", path)
	requireSnapshot(tb, "a file dropped at once")
	if got := evalJS[string](tb, `document.getElementById("snap-peak-wrap").dataset.bytes`); got != strconv.FormatInt(want.PeakAllocatedBytes, 10) {
		t.Errorf("peak = %s, want %d", got, want.PeakAllocatedBytes)
	}
	if n := workerTargets(tb); n != 1 {
		t.Errorf("%d workers started, want 1 (the pre-started one)", n)
	}
	tb.assertClean()
}

// TestSnapshotWorkerPreStartFailed: a pre-started worker that failed before
// the app listened (here a stand-in marked failed before site.js runs) is
// ended, and the app starts its own, which analyses the file.
func TestSnapshotWorkerPreStartFailed(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_forward.pickle")
	_, want := expectedReport(t, path)
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	if _, err := chromedp.Call(tb.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `window.__oomscopeSnapWorker = {__oomscopeFailed: true, terminate() { window.__failedEnded = true; }};`,
	}); err != nil {
		t.Fatal(err)
	}
	tb.open("/snapshot")
	tb.uploadFile("#snap-file", path)
	requireSnapshot(tb, "after a failed pre-start")
	if got := evalJS[string](tb, `document.getElementById("snap-peak-wrap").dataset.bytes`); got != strconv.FormatInt(want.PeakAllocatedBytes, 10) {
		t.Errorf("peak = %s, want %d", got, want.PeakAllocatedBytes)
	}
	if !evalJS[bool](tb, `window.__failedEnded === true`) {
		t.Error("the failed pre-started worker was not terminated")
	}
	if n := workerTargets(tb); n != 1 {
		t.Errorf("%d workers started, want 1 (the app's own)", n)
	}
	tb.assertClean()
}

// TestSnapshotDropDuringWarmUp: a second after mounting, the page asks the
// worker to warm up (load.RequestWarm); a file dropped while the warm-up
// runs stops it and is analysed (the peak the page shows is load's,
// computed here).
func TestSnapshotDropDuringWarmUp(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_forward.pickle")
	_, want := expectedReport(t, path)
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	warm := func() string {
		wctx, cancel := analysisWorker(t, tb)
		defer cancel()
		v, err := chromedp.Run(wctx, chromedp.Evaluate[string](`String(self.__oomscopeWarm)`))
		if err != nil {
			t.Fatalf("reading the worker's warm-up state: %v", err)
		}
		return v
	}
	deadline := time.Now().Add(20 * time.Second)
	for st := warm(); st != "running"; st = warm() {
		if st != "undefined" || time.Now().After(deadline) {
			t.Fatalf("warm-up state %q, want it running before the drop", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.uploadFile("#snap-file", path)
	requireSnapshot(tb, "a file dropped during the warm-up")
	if got := evalJS[string](tb, `document.getElementById("snap-peak-wrap").dataset.bytes`); got != strconv.FormatInt(want.PeakAllocatedBytes, 10) {
		t.Errorf("peak = %s, want %d", got, want.PeakAllocatedBytes)
	}
	if st := warm(); st != "stopped" {
		t.Errorf("warm-up state after the drop %q, want stopped", st)
	}
	tb.assertClean()
}
