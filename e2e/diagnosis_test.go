//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"oomscope/bytesize"
	"oomscope/diagchart"
	"oomscope/estimator"
	"oomscope/fixes"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/chart"
	"oomscope/snapshot/gen"
)

// writeScenario writes a generator scenario to a temporary file.
func writeScenario(t *testing.T, name string) (string, gen.Truth) {
	t.Helper()
	data, truth, err := gen.Bytes(gen.Scenario(name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".pickle")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, truth
}

// TestSnapshotDiagnosis drops a loop that keeps every step's graph alive:
// the diagnosis comes first and names the leak with the bytes per step and
// the line the generator put it at, the first fix is the leak's with the
// saving the analysis package computes here, the step table and its chart
// have one row and bar per step of the generator's record, and a fix's
// Copy button and guide link work. Then an OOM file shows the card.
func TestSnapshotDiagnosis(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")

	path, truth := writeScenario(t, "leak_loss_graph")
	_, want := expectedReport(t, path)
	tb.uploadFile("#snap-file", path)
	requireSnapshot(tb, "the page shows an error")
	if evalJS[bool](tb, `!!document.getElementById("snap-error")`) {
		t.Fatalf("error banner: %s", tb.text("#snap-error"))
	}
	lk := truth.Devices[0].Leak
	diag := evalJS[map[string]string](tb, `(() => {
		const d = document.getElementById("snap-diagnosis"), l = document.getElementById("snap-leak");
		const first = document.querySelector("#snap-fixes li");
		const results = document.getElementById("snap-results"), cards = document.querySelector(".snap-cards");
		return {cause: d.dataset.cause, leak: l.dataset.bytesPerStep, site: document.getElementById("snap-leak-site").textContent,
			fix: first.dataset.fix, saves: first.dataset.saves,
			first: String(!!(d.compareDocumentPosition(cards) & Node.DOCUMENT_POSITION_FOLLOWING))};
	})()`)
	if diag["cause"] != "leak" || diag["leak"] != strconv.FormatInt(lk.BytesPerStep, 10) || diag["site"] != lk.Site {
		t.Errorf("diagnosis %v, want a leak of %d B per step at %s", diag, lk.BytesPerStep, lk.Site)
	}
	if diag["first"] != "true" {
		t.Error("the diagnosis is not the first section of the results")
	}
	if diag["fix"] != want.Fixes[0].ID || diag["saves"] != strconv.FormatInt(want.Fixes[0].SavesBytes, 10) || want.Fixes[0].ID != "item-for-logging" {
		t.Errorf("first fix %s saving %s, analysis says %s saving %d", diag["fix"], diag["saves"], want.Fixes[0].ID, want.Fixes[0].SavesBytes)
	}
	if code := tb.text("#snap-fix-0-code"); code != fixes.Must(want.Fixes[0].ID, "").Code {
		t.Errorf("fix code %q, want the catalog's", code)
	}
	if href := evalJS[string](tb, `document.getElementById("snap-fix-0-guide").getAttribute("href")`); href != fixes.GuidePath(want.Fixes[0].ID) {
		t.Errorf("guide link %q, want %q", href, fixes.GuidePath(want.Fixes[0].ID))
	}
	tb.click("#snap-fix-0-copy")
	note := poll[string](tb, `(() => { const t = document.getElementById("snap-fix-0-copied").textContent; return t.startsWith("Cop") && t !== "Copying…" ? t : ""; })()`, 10*time.Second)
	if !strings.HasPrefix(note, "Copied") && !strings.HasPrefix(note, "Copy failed") {
		t.Errorf("copy note %q", note)
	}

	// Steps: one row and one bar per step, each row's end memory the
	// generator's.
	poll[bool](tb, `!!document.getElementById("snap-step-table")`, 20*time.Second)
	ends := evalJS[[]string](tb, `[...document.querySelectorAll("#snap-step-table tbody tr td[data-end]")].map(e => e.dataset.end)`)
	bars := evalJS[int](tb, `document.querySelectorAll("#snap-step-chart rect.step-peak").length`)
	if len(ends) != len(truth.Devices[0].Steps) || bars != len(truth.Devices[0].Steps) {
		t.Fatalf("%d rows and %d bars, want %d steps", len(ends), bars, len(truth.Devices[0].Steps))
	}
	for k, st := range truth.Devices[0].Steps {
		if ends[k] != strconv.FormatInt(st.EndAllocated, 10) {
			t.Errorf("step %d ends at %s B, want %d", k, ends[k], st.EndAllocated)
		}
	}
	if !evalJS[bool](tb, `!!document.querySelector("#snap-step-chart .step-trend")`) {
		t.Error("no leak trend on the step chart")
	}
	// The timeline shades each step's phases: as many bands as phase spans.
	shades := evalJS[int](tb, `document.querySelectorAll("#snap-chart rect.snap-shade").length`)
	if shades != len(want.PhaseSpans) || shades == 0 {
		t.Errorf("%d shaded bands on the timeline, want the %d phase spans", shades, len(want.PhaseSpans))
	}
	// Each band's tooltip names its step, phase and entries (built only
	// for the bands drawn).
	titles := evalJS[[]string](tb, `[...document.querySelectorAll("#snap-chart rect.snap-shade title")].map(e => e.textContent)`)
	for k, sp := range want.PhaseSpans {
		if w := fmt.Sprintf("step %d: %s (entries %d–%d)", sp.Step, sp.Phase, sp.FirstEntry, sp.LastEntry); k < len(titles) && titles[k] != w {
			t.Errorf("band %d's tooltip %q, want %q", k, titles[k], w)
		}
	}
	poll[bool](tb, `document.querySelectorAll("#snap-icicle .icicle-cell").length > 0`, 20*time.Second)
	// The icicle's cells are the report's byte-time stacks: each cell names
	// a node of analysis's ByteTime, and there are as many as the layout
	// (diagchart.Icicle) of those nodes gives.
	names := map[string]bool{}
	var nodes []diagchart.Node
	for _, n := range want.ByteTime.Nodes {
		names[n.Name] = true
		nodes = append(nodes, diagchart.Node{Name: n.Name, Parent: n.Parent, Weight: n.Weight})
	}
	cells := evalJS[[]string](tb, `[...document.querySelectorAll("#snap-icicle .icicle-cell")].map(e => e.textContent)`)
	if n := len(diagchart.Icicle(nodes, 0.004, 28)); len(cells) != n {
		t.Errorf("%d icicle cells, want %d", len(cells), n)
	}
	for _, c := range cells {
		if !names[c] {
			t.Errorf("icicle cell %q names no byte-time node", c)
			break
		}
	}
	if want.Setup != nil {
		href := evalJS[string](tb, `document.getElementById("snap-estimate-link").getAttribute("href")`)
		if href != "/estimate?"+want.Setup.Query {
			t.Errorf("estimator link %q, want /estimate?%s", href, want.Setup.Query)
		}
	}
	tb.screenshot("snapshot-diagnosis")
	tb.setViewport(375, 800)
	time.Sleep(300 * time.Millisecond)
	tb.screenshot("snapshot-diagnosis-phone")
	tb.setViewport(1280, 900)

	// An OOM: the card at that moment, drawn as triage draws it.
	oomPath, _ := writeScenario(t, "oom_card")
	_, wantOOM := expectedReport(t, oomPath)
	tb.uploadFile("#snap-file", oomPath)
	poll[bool](tb, `(() => { const d = document.getElementById("snap-diagnosis"); return !!d && d.dataset.cause === "capacity" && !!document.body.getAttribute("data-snapshot-ready"); })()`, 60*time.Second)
	segs := evalJS[[]string](tb, `[...document.querySelectorAll("#snap-oom-bar-bar .triage-seg, #snap-oom-bar .triage-seg")].map(e => e.dataset.seg)`)
	if len(segs) != len(wantOOM.OOMCard.Bar.Segments) {
		t.Errorf("card segments %v, want %d", segs, len(wantOOM.OOMCard.Bar.Segments))
	}
	if got := tb.text("#snap-oom-req-label"); !strings.Contains(got, "request") {
		t.Errorf("request label %q", got)
	}
	if evalJS[bool](tb, `!!document.getElementById("snap-error")`) {
		t.Fatalf("error banner: %s", tb.text("#snap-error"))
	}
	tb.requireWatched("worker")
	assertLocalOnly(t, tb, s)
	tb.assertClean()
}

// keepFirstChartJS keeps the first timeline chart element of the page in
// window.__chart, and the first drawing of the timeline in it (its SVG,
// not the shades' behind it) in window.__drawing, as soon as each is in
// the page; sameChartJS says whether the chart and the drawing shown are
// still those elements.
const (
	keepFirstChartJS = `(window.__chart = null, window.__drawing = null, new MutationObserver(() => {
		const c = document.getElementById("snap-chart");
		if (c && !window.__chart) window.__chart = c;
		const d = document.querySelector(` + "`" + drawingSel + "`" + `);
		if (d && !window.__drawing) window.__drawing = d;
	}).observe(document.body, {childList: true, subtree: true}), true)`
	sameChartJS = `(() => !!window.__chart && document.getElementById("snap-chart") === window.__chart &&
		!!window.__drawing && document.querySelector(` + "`" + drawingSel + "`" + `) === window.__drawing)()`
	// drawingSel is the timeline's drawing: bands, reserved line, peak.
	drawingSel = `#snap-chart > svg.snap-chart-svg:not(.snap-shades-svg)`
)

// TestSnapshotTimelineDrawnOnce drops a generated leak (steps, phases,
// fixes) and checks that the timeline drawn with the result stays the same
// element, its drawing the same SVG, through the rest of the result's
// reveal (the phase shades come in an SVG of their own, behind it) and the
// report's copy, which put new elements above it (the comparison's drop
// zone, the copy's note and text): drawn anew, its chart was parsed again
// in a later task.
// Every fix of the analysis is listed, the folded ones too.
// It runs three times: the page reading the result in its message's task
// (as it does a result this small) and, through its test knob
// (window.__oomscopeQuickResult = 0), in four tasks (as it does a big
// one); the page says which way it took (window.__oomscopeQuickTaken).
// The third reads it in four tasks with its buffers copied into Go 1,000
// bytes a task (window.__oomscopeCopySlice; a big message's are copied 1
// MiB a task), which the page counts (window.__oomscopeCopyPauses).
func TestSnapshotTimelineDrawnOnce(t *testing.T) {
	for _, c := range []struct {
		name         string
		limit, slice int
		quick        bool
	}{{"one task", 1 << 30, 0, true}, {"four tasks", 0, 0, false}, {"copied in slices", 0, 1000, false}} {
		t.Run(c.name, func(t *testing.T) { timelineDrawnOnce(t, c.limit, c.slice, c.quick) })
	}
}

// timelineDrawnOnce is TestSnapshotTimelineDrawnOnce with the page's
// quick-read limit set to limit bytes (wantQuick: the way the result must
// then be read) and, if slice > 0, its buffers copied slice bytes a task.
func timelineDrawnOnce(t *testing.T, limit, slice int, wantQuick bool) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	path, _ := writeScenario(t, "leak_loss_graph")
	_, want := expectedReport(t, path)
	evalJS[bool](tb, keepFirstChartJS)
	evalJS[bool](tb, fmt.Sprintf(`(window.__oomscopeQuickResult = %d, delete window.__oomscopeQuickTaken, true)`, limit))
	if slice > 0 {
		evalJS[bool](tb, fmt.Sprintf(`(window.__oomscopeCopySlice = %d, window.__oomscopeCopyPauses = 0, true)`, slice))
	}
	tb.uploadFile("#snap-file", path)
	requireSnapshot(tb, "the page shows an error")
	tb.assertNoErrorBanner("after the result")
	if got := evalJS[string](tb, `String(window.__oomscopeQuickTaken)`); got != strconv.FormatBool(wantQuick) {
		t.Errorf("the page read the result in one task: %s, want %v", got, wantQuick)
	}
	if slice > 0 {
		// The result's buffers (its timeline and steps, packed) are tens
		// of kilobytes: many slices.
		if n := evalJS[int](tb, `window.__oomscopeCopyPauses`); n < 5 {
			t.Errorf("the page copied the result's buffers with %d pauses, want one every %d bytes", n, slice)
		}
	}
	same := sameChartJS
	if !evalJS[bool](tb, same) {
		t.Error("the timeline was drawn again during the result's reveal")
	}
	if !evalJS[bool](tb, `!!document.querySelector("#snap-compare") && document.querySelectorAll("#snap-chart rect.snap-shade").length > 0`) {
		t.Error("no comparison drop zone or no phase shades once the result is shown")
	}
	// The shades came after the drawing, in an SVG of their own behind it
	// (before it among the chart's children), one rectangle per phase span.
	order := evalJS[map[string]int](tb, `(() => {
		const c = [...document.getElementById("snap-chart").children];
		return {shades: c.findIndex(e => e.matches("svg.snap-shades-svg")), drawing: c.indexOf(document.querySelector(`+"`"+drawingSel+"`"+`)),
			rects: document.querySelectorAll("#snap-chart svg.snap-shades-svg > rect.snap-shade").length,
			stray: document.querySelectorAll(`+"`"+drawingSel+" rect"+"`"+`).length};
	})()`)
	if order["shades"] < 0 || order["drawing"] < 0 || order["shades"] > order["drawing"] {
		t.Errorf("chart children: shades at %d, drawing at %d; want the shades' SVG before (behind) the drawing", order["shades"], order["drawing"])
	}
	if order["rects"] != len(want.PhaseSpans) || order["stray"] != 0 {
		t.Errorf("%d shades in their SVG and %d rectangles in the drawing, want the %d phase spans and none", order["rects"], order["stray"], len(want.PhaseSpans))
	}
	fixes := evalJS[[]string](tb, `[...document.querySelectorAll("#snap-diagnosis li.diag-fix")].map(e => e.dataset.fix)`)
	var wantFixes []string
	for _, f := range want.Fixes {
		wantFixes = append(wantFixes, f.ID)
	}
	if len(wantFixes) <= 3 || !slices.Equal(fixes, wantFixes) {
		t.Errorf("fixes listed %v, want the analysis's %v (more than the 3 shown open)", fixes, wantFixes)
	}
	requireDrawingIs(t, tb, want, bytesize.Binary, "the result")
	requireStepsChartIs(t, tb, want, bytesize.Binary, "the result")
	tb.click("#snap-copy")
	poll[bool](tb, `!!document.getElementById("snap-markdown")`, 10*time.Second)
	if !evalJS[bool](tb, same) {
		t.Error("the timeline was drawn again when the report was copied")
	}
	tb.assertNoErrorBanner("after the copy")
	// In GB the axis's round ticks, so the drawing's grid, change: the
	// drawing shown is the new one.
	switchToGB(t, tb)
	requireDrawingIs(t, tb, want, bytesize.Decimal, "a switch to GB")
	requireStepsChartIs(t, tb, want, bytesize.Decimal, "a switch to GB")
	tb.assertNoErrorBanner("after the switch to GB")
	tb.assertClean()
}

// requireDrawingIs checks that the timeline's drawing shown is, element
// for element and attribute for attribute, the SVG that package chart
// draws of device d's whole timeline in unit u, as the browser's HTML
// parser reads it (the page parses it ahead, outside go-app's frame, and
// moves it into an <svg> of go-app's).
func requireDrawingIs(t *testing.T, tb *tab, d analysis.DeviceReport, u bytesize.Unit, after string) {
	t.Helper()
	c := chart.NewTimeline(d.Timeline, d.SiteSeries, chart.Options{Unit: u, Peak: d.PeakIndex})
	if c == nil {
		t.Fatal("no timeline to draw")
	}
	if !svgShownIs(tb, drawingSel, c.SVG) {
		t.Errorf("after %s, the timeline's drawing is not package chart's SVG of the device's timeline in %s", after, map[bytesize.Unit]string{bytesize.Binary: "GiB", bytesize.Decimal: "GB"}[u])
	}
}

// requireStepsChartIs checks that the steps' chart shown is the SVG that
// package diagchart draws of device d's steps (each step's peak and end
// allocated bytes, partial or not, and the leak from its first whole step)
// in unit u, as the browser's HTML parser reads it; it waits up to 10 s
// for the section.
func requireStepsChartIs(t *testing.T, tb *tab, d analysis.DeviceReport, u bytesize.Unit, after string) {
	t.Helper()
	in := diagchart.Input{Unit: u}
	for _, s := range d.Steps {
		in.Steps = append(in.Steps, diagchart.Step{Peak: s.PeakAllocatedBytes, End: s.EndAllocatedBytes, Partial: s.Partial})
	}
	if d.Leak != nil {
		in.LeakPerStep = d.Leak.BytesPerStep
		if k := slices.IndexFunc(d.Steps, func(s analysis.Step) bool { return !s.Partial }); k > 0 {
			in.LeakFrom = k
		}
	}
	if len(in.Steps) == 0 {
		t.Fatal("no steps to draw")
	}
	markup := diagchart.Layout(in).SVG()
	for deadline := time.Now().Add(10 * time.Second); !svgShownIs(tb, "#snap-step-chart > svg", markup); {
		if time.Now().After(deadline) {
			t.Errorf("after %s, the steps' chart is not package diagchart's SVG of the device's steps in %s", after, map[bytesize.Unit]string{bytesize.Binary: "GiB", bytesize.Decimal: "GB"}[u])
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// svgShownIs says whether the element sel is an SVG element equal
// (isEqualNode: the same elements, attributes and text) to markup as the
// browser's HTML parser reads it.
func svgShownIs(tb *tab, sel, markup string) bool {
	tb.t.Helper()
	js, _ := json.Marshal(markup)
	return evalJS[bool](tb, `(() => {
		const shown = document.querySelector(`+"`"+sel+"`"+`);
		const box = document.createElement("div");
		box.innerHTML = `+string(js)+`;
		return !!shown && shown.namespaceURI === "http://www.w3.org/2000/svg" && box.firstElementChild.isEqualNode(shown);
	})()`)
}

// TestEstimateFixCode checks that the estimator's fix ladder shows each
// rung's catalog code with a Copy button and the guide link, as triage and
// the snapshot page do.
func TestEstimateFixCode(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	q := "model=llama-3.1-8b&gpu=rtx-4090-24gb"
	tb.open("/estimate?" + q)
	rep, err := estimator.Advise(estimateFor(t, q).Request)
	if err != nil || len(rep.Fixes) == 0 {
		t.Fatalf("want fixes for %s: %v", q, err)
	}
	poll[bool](tb, `document.querySelectorAll("#est-fixes li").length > 0`, 30*time.Second)
	for _, f := range rep.Fixes {
		fx := fixes.Must(f.FixID, "")
		id := "est-fix-" + f.FixID
		got := evalJS[map[string]string](tb, fmt.Sprintf(`(() => { const c = document.getElementById(%q), g = document.getElementById(%q);
			return {code: c ? c.textContent : "", guide: g ? g.getAttribute("href") : "", copy: String(!!document.getElementById(%q))}; })()`,
			id+"-code", id+"-guide", id+"-copy"))
		if got["code"] != fx.Code || got["guide"] != fx.Guide || got["copy"] != "true" {
			t.Errorf("rung %s: %v, want the catalog's code and guide %s with a Copy button", f.Name, got, fx.Guide)
		}
	}
	if evalJS[bool](tb, `!!document.getElementById("est-error")`) {
		t.Errorf("error banner: %s", tb.text("#est-error"))
	}
	tb.assertClean()
}

// TestSnapshotManySteps drops a loop of 2,500 short steps: each step's
// phase spans are far narrower than the 0.05 % of the timeline's width
// that docs/snapshot.md#phases says the chart draws, so the page draws
// none of them and says how many it hid (all of the report's spans).
func TestSnapshotManySteps(t *testing.T) {
	data, truth, err := gen.Bytes(gen.Options{Seed: 1, Layers: 1, Hidden: 64, Steps: 2500})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "many-steps.pickle")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, d := expectedReport(t, path)
	if len(d.PhaseSpans) < 2500 {
		t.Fatalf("%d phase spans: the test does not test", len(d.PhaseSpans))
	}
	for _, sp := range d.PhaseSpans {
		if float64(sp.LastEntry-sp.FirstEntry+1) >= 0.0004*float64(d.Entries) {
			t.Fatalf("span %+v is wide enough to draw among %d entries: the test does not test", sp, d.Entries)
		}
	}
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	evalJS[bool](tb, keepFirstChartJS)
	tb.uploadFile("#snap-file", path)
	requireSnapshot(tb, "the page shows an error")
	msg := tb.waitText("#snap-shades-hidden", "bands")
	if !strings.HasPrefix(msg, strconv.Itoa(len(d.PhaseSpans))+" step and phase bands") {
		t.Errorf("hidden bands: %q, want the report's %d spans", msg, len(d.PhaseSpans))
	}
	// The count of hidden bands came above the chart, which stays.
	if !evalJS[bool](tb, sameChartJS) {
		t.Error("the timeline was drawn again when its hidden bands were counted")
	}
	if n := evalJS[float64](tb, `document.querySelectorAll("#snap-chart .snap-shade").length`); n != 0 {
		t.Errorf("%v bands drawn, want none", n)
	}
	// The step table lists the first 20 steps, then 1,000 more per
	// click until it lists every step the generator wrote, each with the
	// generator's end memory.
	steps := truth.Devices[0].Steps
	rows := func() []string {
		return evalJS[[]string](tb, `[...document.querySelectorAll("#snap-step-table tbody tr td[data-end]")].map(e => e.dataset.end)`)
	}
	if n := len(rows()); n != 20 {
		t.Errorf("%d step rows at first, want 20", n)
	}
	for _, want := range []int{1020, 2020, len(steps)} {
		tb.click("#snap-steps-more")
		poll[bool](tb, fmt.Sprintf(`document.querySelectorAll("#snap-step-table tbody tr").length === %d`, want), 20*time.Second)
	}
	if evalJS[bool](tb, `!!document.getElementById("snap-steps-more")`) {
		t.Error("the table lists every step but still offers more")
	}
	ends := rows()
	if len(ends) != len(steps) {
		t.Fatalf("%d step rows, want the generator's %d steps", len(ends), len(steps))
	}
	for k, st := range steps {
		if ends[k] != strconv.FormatInt(st.EndAllocated, 10) {
			t.Errorf("step %d ends at %s B, want %d", k, ends[k], st.EndAllocated)
			break
		}
	}
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}
