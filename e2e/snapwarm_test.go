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

// TestSnapshotFontWarm checks that the lines the page lays out unseen
// while it waits for a file (app/snapshot_warm.go warmFonts) are hidden
// from sight and from assistive technology, and that they hold every font
// (family, size, weight, style) of a real file's whole result that the page
// did not show already: a font missing from them makes Chromium on Linux
// wait for its browser process in the middle of a result's frame.
func TestSnapshotFontWarm(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_fullstep.pickle")
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	poll[bool](tb, `!!document.querySelector(".font-warm[data-done]")`, 60*time.Second)
	if bad := evalJS[string](tb, `(() => {
		const w = document.querySelector(".font-warm");
		if (w.getAttribute("aria-hidden") !== "true") return "not aria-hidden";
		if (getComputedStyle(w).visibility !== "hidden") return "visible";
		const r = w.getBoundingClientRect();
		if (r.right > 0 && r.left < innerWidth) return "on screen at " + r.left;
		return "";
	})()`); bad != "" {
		t.Fatalf("the font warm-up lines are %s", bad)
	}
	tb.dropFile("#snap-drop", path)
	requireSnapshot(tb, "the page shows an error")
	// Fonts of HTML text only: an SVG's text is drawn scaled to the
	// chart's width, a size no fixed line can hold.
	missing := evalJS[[]string](tb, `(() => {
		const key = (e) => { const s = getComputedStyle(e); return [s.fontFamily, s.fontSize, s.fontWeight, s.fontStyle].join(" | "); };
		const texts = (root) => [...root.querySelectorAll("*")].filter((e) => !(e instanceof SVGElement) && e.checkVisibility() &&
			[...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()));
		const view = document.getElementById("snap-file-view"), warm = document.querySelector(".font-warm");
		const known = new Set(texts(document.body).filter((e) => !view.contains(e)).map(key));
		for (const e of warm.children) known.add(key(e));
		return [...new Set(texts(view).map(key))].filter((k) => !known.has(k));
	})()`)
	if len(missing) > 0 {
		t.Errorf("fonts of the result missing from the warm-up lines (app/snapshot_warm.go fontStrikes): %q", missing)
	}
	tb.assertClean()
}
