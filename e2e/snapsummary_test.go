//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

// summaryStateJS records the page's first state that shows a file's
// summary and not yet its result (window.__summary): the peak cards' text,
// the peak's bytes and entry, whether the answer says "Diagnosing…", and
// the summary's elements (window.__summaryEls), to compare with the
// result's.
const summaryStateJS = `(() => {
	window.__summary = null;
	new MutationObserver(() => {
		const s = document.getElementById("snap-summary");
		if (window.__summary || !s || document.getElementById("snap-results")) return;
		const text = (id) => { const e = document.getElementById(id); return e ? e.textContent : ""; };
		const w = document.getElementById("snap-peak-wrap");
		window.__summary = {peak: text("snap-peak"), reserved: text("snap-reserved"), culprit: text("snap-culprit"),
			bytes: w ? w.dataset.bytes : "", index: w ? w.dataset.index : "", file: text("snap-filename"),
			diagnosing: String(!!document.getElementById("snap-diagnosing")), chart: String(!!document.getElementById("snap-chart"))};
		window.__summaryEls = ["snap-peak", "snap-reserved", "snap-culprit", "snap-filename", "snap-copy"].map(id => document.getElementById(id));
	}).observe(document.body, {childList: true, subtree: true});
	return true;
})()`

// TestSnapshotSummaryFirst drops a generated file (distinct stacks, 8 MiB;
// the worker held 500 ms after its summary, so that the page draws it
// before the result whatever the machine's load) and
// checks the page's state between the summary and the result: the peaks
// as the analysis run here gives them, "Diagnosing…", no timeline (the
// file has fewer than load.EarlyTimelineEntries entries: its summary
// carries none) and no culprit yet; then that the result's frame updated those elements in
// place rather than drawing new ones (the summary is drawn as the result's
// frame), with the result's numbers.
func TestSnapshotSummaryFirst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "distinct-8MiB.pickle")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = gen.WriteFamily(f, gen.FamilyOptions{Family: gen.DistinctStacks, TargetBytes: 8 << 20, Seed: 7})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	_, want := expectedReport(t, path)
	if len(want.TopSites) == 0 {
		t.Fatal("no top site: the test does not test")
	}
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	// The worker waits a little after the summary (its test knob): on a
	// loaded machine the page drew summary and result in one frame.
	inWorker[bool](t, tb, `self.__oomscopeSummaryTest = {delayMs: 500}, true`)
	evalJS[bool](tb, summaryStateJS)
	tb.uploadFile("#snap-file", path)
	requireSnapshot(tb, "the page shows an error")
	tb.assertNoErrorBanner("after the result")

	sum := evalJS[map[string]string](tb, `window.__summary || {}`)
	if len(sum) == 0 {
		t.Fatal("the page never showed the summary before the result")
	}
	peak, reserved := bytesize.Format(want.PeakAllocatedBytes, bytesize.Binary), bytesize.Format(want.PeakReservedBytes, bytesize.Binary)
	if sum["bytes"] != strconv.FormatInt(want.PeakAllocatedBytes, 10) || sum["index"] != strconv.Itoa(want.PeakIndex) {
		t.Errorf("summary's peak %s B after entry %s, analysis says %d B after entry %d", sum["bytes"], sum["index"], want.PeakAllocatedBytes, want.PeakIndex)
	}
	if !strings.Contains(sum["peak"], peak) || !strings.Contains(sum["peak"], bytesize.Commas(want.PeakAllocatedBytes)+" B, after entry "+bytesize.Commas(int64(want.PeakIndex))) {
		t.Errorf("summary's peak card %q, want %s (%s B) after entry %s", sum["peak"], peak, bytesize.Commas(want.PeakAllocatedBytes), bytesize.Commas(int64(want.PeakIndex)))
	}
	if !strings.Contains(sum["reserved"], reserved) || !strings.Contains(sum["reserved"], bytesize.Commas(want.PeakReservedBytes)+" B") {
		t.Errorf("summary's reserved card %q, want %s", sum["reserved"], reserved)
	}
	if sum["file"] != "distinct-8MiB.pickle" || sum["diagnosing"] != "true" || sum["chart"] != "false" {
		t.Errorf("summary: file %q, diagnosing %s, chart %s; want the file's name, Diagnosing…, no timeline yet", sum["file"], sum["diagnosing"], sum["chart"])
	}
	if strings.Contains(sum["culprit"], want.TopSites[0].Label) {
		t.Errorf("the summary names the culprit %q, which only the result knows", sum["culprit"])
	}

	// The result: the same elements, the result's numbers.
	same := evalJS[bool](tb, `["snap-peak", "snap-reserved", "snap-culprit", "snap-filename", "snap-copy"].every((id, i) => document.getElementById(id) === window.__summaryEls[i])`)
	if !same {
		t.Error("the result's frame drew new cards and head instead of updating the summary's")
	}
	if got := tb.text("#snap-culprit"); !strings.Contains(got, bytesize.Format(want.TopSites[0].Bytes, bytesize.Binary)) {
		t.Errorf("result's culprit card %q, want %s", got, bytesize.Format(want.TopSites[0].Bytes, bytesize.Binary))
	}
	if got := tb.text("#snap-peak"); !strings.Contains(got, peak) {
		t.Errorf("result's peak card %q, want %s", got, peak)
	}
	if evalJS[bool](tb, `document.getElementById("snap-copy").disabled || !!document.getElementById("snap-summary")`) {
		t.Error("the result's copy button is disabled, or the summary is still marked as such")
	}
	tb.assertClean()
}

// earlyChart is the timeline as the page shows it (earlyChartJS): whether
// the result or the summary is on screen, the chart's scale (data-top),
// its drawing's paths, the legend, the timeline marker, the zoom button's
// state and whether "Diagnosing…" or an error is shown.
type earlyChart struct {
	Results, Summary, Diagnosing, Error, ZoomDisabled bool
	Top, Reserved, Peak, Legend, Timeline             string
	Bands                                             []string
}

// earlyChartJS reads the timeline once it is drawn and marked
// (data-snapshot-timeline), keeping its element in window.__earlyChart;
// null before.
const earlyChartJS = `(() => {
	const c = document.getElementById("snap-chart"), mark = document.body.getAttribute("data-snapshot-timeline");
	if (!c || !mark) return null;
	window.__earlyChart = window.__earlyChart || c;
	const svg = c.querySelector("svg.snap-chart-svg:not(.snap-shades-svg)"), d = (e) => e ? e.getAttribute("d") : "";
	const zoom = document.querySelector(".snap-toolbar button");
	return {results: !!document.getElementById("snap-results"), summary: !!document.getElementById("snap-summary"),
		diagnosing: !!document.getElementById("snap-diagnosing"), error: !!document.getElementById("snap-error"),
		zoomdisabled: !!zoom && zoom.disabled, top: c.dataset.top, reserved: d(svg.querySelector(".snap-reserved")),
		peak: d(svg.querySelector(".snap-peak-line")), legend: (document.querySelector(".snap-legend") || {}).textContent || "",
		timeline: mark, bands: [...svg.querySelectorAll(".snap-band")].map(d)};
})()`

// pathPoints reads the points of an SVG path as package chart writes it
// ("M<x> <y>L<x> <y>…", maybe closed by Z).
func pathPoints(t *testing.T, d string) [][2]int64 {
	t.Helper()
	var out [][2]int64
	for _, m := range regexp.MustCompile(`[ML](-?\d+) (-?\d+)`).FindAllStringSubmatch(d, -1) {
		x, _ := strconv.ParseInt(m[1], 10, 64)
		y, _ := strconv.ParseInt(m[2], 10, 64)
		out = append(out, [2]int64{x, y})
	}
	return out
}

// TestSnapshotTimelineFromSummary drops the real 3.2 MB snapshot with the
// worker held 3 s after its summary (its test knob
// self.__oomscopeSummaryTest, wasm/snapworker): before the result, the
// page must show the memory curve the summary brought, marked as the
// timeline (data-snapshot-timeline, the benchmark's drop→timeline), with
// no error: its reserved line and its one band of allocated bytes at the
// heights of the timeline that the analysis run here gives (each of its
// points, on the chart's scale), the peak line, "Diagnosing…", the zoom
// off. Then the result: the same chart element on the same scale, the same
// reserved line, the site bands stacked up to the same top, the sites in
// the legend, and the marker left as the summary set it.
func TestSnapshotTimelineFromSummary(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_fullstep.pickle")
	_, want := expectedReport(t, path)
	pts := want.Timeline
	if len(pts) < 100 || want.SiteSeries == nil || len(want.SiteSeries.Values) < 2 {
		t.Fatalf("the analysis should give a timeline with site bands: %d points", len(pts))
	}
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.waitText("#snap-private", "never leaves your browser")
	// earlyEntries 1: this small file's summary carries its timeline,
	// as a file of load.EarlyTimelineEntries entries' does.
	inWorker[bool](t, tb, `self.__oomscopeSummaryTest = {delayMs: 3000, earlyEntries: 1}, true`)
	tb.uploadFile("#snap-file", path)
	early := poll[earlyChart](tb, earlyChartJS, 60*time.Second)
	if early.Results || !early.Summary {
		t.Fatal("the timeline came with the result, not before it (or the summary was not shown)")
	}
	tb.assertNoErrorBanner("with the summary's timeline")
	if early.Error || !early.Diagnosing || !early.ZoomDisabled {
		t.Errorf("before the result: error %v, Diagnosing… %v, zoom disabled %v; want no error, Diagnosing…, no zoom",
			early.Error, early.Diagnosing, early.ZoomDisabled)
	}
	top, err := strconv.ParseInt(early.Top, 10, 64)
	var maxV int64
	for _, p := range pts {
		maxV = max(maxV, p.Allocated, p.Reserved)
	}
	if err != nil || top < maxV || top > 2*maxV {
		t.Fatalf("the chart's scale %q for values up to %d", early.Top, maxV)
	}
	from, to := float64(pts[0].Index), float64(pts[len(pts)-1].Index)
	x := func(idx int) int64 { return int64(math.Round((float64(idx) - from) / (to - from) * 10000)) }
	y := func(v int64) int64 { return int64(math.Round((1 - float64(v)/float64(top)) * 3000)) }
	check := func(what string, got [][2]int64, value func(analysis.Point) int64) {
		t.Helper()
		if len(got) < len(pts) {
			t.Errorf("%s: %d points drawn, the timeline has %d", what, len(got), len(pts))
			return
		}
		bad := 0
		for j, p := range pts {
			if w := [2]int64{x(p.Index), y(value(p))}; got[j] != w {
				if bad++; bad <= 3 {
					t.Errorf("%s: point %d (entry %d, %d B) drawn at %v, want %v", what, j, p.Index, value(p), got[j], w)
				}
			}
		}
	}
	check("reserved line", pathPoints(t, early.Reserved), func(p analysis.Point) int64 { return p.Reserved })
	if len(early.Bands) != 1 || !strings.Contains(early.Legend, "allocated (sites to come)") {
		t.Fatalf("%d bands, legend %q: want the allocated bytes as one band", len(early.Bands), early.Legend)
	}
	check("allocated band", pathPoints(t, early.Bands[0]), func(p analysis.Point) int64 { return p.Allocated })
	if pk := pathPoints(t, early.Peak); len(pk) != 2 || pk[0][0] != x(want.PeakIndex) {
		t.Errorf("peak line %q, want it at entry %d (x %d)", early.Peak, want.PeakIndex, x(want.PeakIndex))
	}

	// The result: the same chart, its sites added.
	requireSnapshot(tb, "after the summary's timeline")
	tb.assertNoErrorBanner("after the result")
	full := poll[earlyChart](tb, earlyChartJS, 10*time.Second)
	if !evalJS[bool](tb, `document.getElementById("snap-chart") === window.__earlyChart`) {
		t.Error("the result drew a new chart element instead of updating the summary's")
	}
	if !full.Results || full.Top != early.Top || full.Reserved != early.Reserved || full.Timeline != early.Timeline || full.ZoomDisabled {
		t.Errorf("after the result: scale %s (was %s), same reserved line %v, marker %s (was %s), zoom disabled %v",
			full.Top, early.Top, full.Reserved == early.Reserved, full.Timeline, early.Timeline, full.ZoomDisabled)
	}
	if len(full.Bands) != len(want.SiteSeries.Values) {
		t.Fatalf("%d site bands, want %d", len(full.Bands), len(want.SiteSeries.Values))
	}
	n := len(pts)
	stackTop := pathPoints(t, full.Bands[len(full.Bands)-1])[:n]
	if fmt.Sprint(stackTop) != fmt.Sprint(pathPoints(t, early.Bands[0])[:n]) {
		t.Error("the site bands' stack does not reach the summary's allocated curve")
	}
	if strings.Contains(full.Legend, "sites to come") || !strings.Contains(full.Legend, "reserved") {
		t.Errorf("legend after the result %q", full.Legend)
	}
	tb.assertClean()
}
