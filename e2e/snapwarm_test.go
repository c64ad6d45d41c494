//go:build e2e

package e2e

import (
	"strconv"
	"testing"
	"time"
)

// TestSnapshotWarmSample waits until the page has run its drawing code on
// the worker's sample (its warm-up snapshot, app/snapshot_warm.go) while
// waiting for a file, checks that nothing of the sample shows, then drops a
// real snapshot and checks that the page shows that file's peak, the
// analysis's here, and nothing of the sample.
func TestSnapshotWarmSample(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_fullstep.pickle")
	_, want := expectedReport(t, path)
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	poll[bool](tb, `document.body.getAttribute("data-snapshot-warm") === "drawn"`, 60*time.Second)
	// Drawn nowhere: no result, summary, progress or error on the page,
	// and no trace of the sample's name ("warm-up") in its text.
	if shown := evalJS[string](tb, `(() => {
		for (const id of ["snap-results", "snap-summary", "snap-progress", "snap-error", "snap-diagnosis", "snap-chart"]) {
			if (document.getElementById(id)) return id;
		}
		return document.body.textContent.includes("warm-up") ? "the sample's name" : "";
	})()`); shown != "" {
		t.Fatalf("the page shows %s before any file was dropped", shown)
	}

	tb.dropFile("#snap-drop", path)
	requireSnapshot(tb, "the page shows an error")
	got := evalJS[string](tb, `document.getElementById("snap-peak-wrap").dataset.bytes`)
	if got != strconv.FormatInt(want.PeakAllocatedBytes, 10) {
		t.Errorf("page peak = %s B, analysis says %d B", got, want.PeakAllocatedBytes)
	}
	if n := evalJS[int](tb, `document.querySelectorAll("#snap-results").length`); n != 1 {
		t.Errorf("%d result sections, want 1", n)
	}
	if evalJS[bool](tb, `document.body.textContent.includes("warm-up")`) {
		t.Error("the sample's name shows with the dropped file's result")
	}
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}
