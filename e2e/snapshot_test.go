//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/chart"
	"oomscope/snapshot/gen"
	"oomscope/snapshot/load"
)

// realSnapshotPath returns a real snapshot of realSnapshotDir; the test is
// skipped where it is not present.
func realSnapshotPath(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(realSnapshotDir(), name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not present", p)
	}
	return p
}

// realSnapshotDir is where the real snapshots are: ../../shared/snapshots
// (the checkout's sibling shared/), or OOMSCOPE_SNAPSHOTS where set (a
// checkout elsewhere, such as a git worktree).
func realSnapshotDir() string {
	if d := os.Getenv("OOMSCOPE_SNAPSHOTS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "snapshots")
}

// expectedReport analyses a file the way the page's worker does (package
// load, with the page's options).
func expectedReport(t testing.TB, path string) (*analysis.Analysis, analysis.DeviceReport) {
	t.Helper()
	f, closer, err := load.OpenFile(path, nil, load.Options{Analysis: analysis.Options{TimelinePoints: load.TimelinePoints}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closer.Close() })
	// The page shows the busiest device first (docs/snapshot.md#defaults).
	return f.Analysis, f.Report.Devices[f.Report.Busiest()]
}

// snapshotOutcome waits until the page shows a result (ready) or an error,
// and returns the error's text as the page showed it when it marked the
// error, read in the same evaluation: read after it, by a query of its own,
// the banner could be gone or drawn anew (DevTools' "No node with given id
// found" under load, where the error then went unsaid).
func snapshotOutcome(tb *tab, timeout time.Duration) (ready bool, errText string) {
	tb.t.Helper()
	v := poll[string](tb, `document.body.getAttribute("data-snapshot-ready") ? "ready" :
		(document.body.getAttribute("data-snapshot-error") ? "error: " + ((document.getElementById("snap-error") || {}).textContent || "(no #snap-error shown)") : "")`, timeout)
	return v == "ready", strings.TrimPrefix(v, "error: ")
}

// requireSnapshot waits until the page shows a result and fails the test,
// saying what was analysed, when it shows an error instead.
func requireSnapshot(tb *tab, what string) {
	tb.t.Helper()
	if ready, msg := snapshotOutcome(tb, 90*time.Second); !ready {
		problems, _ := tb.rec.snapshot()
		tb.t.Fatalf("%s: %s (page problems: %q)", what, msg, problems)
	}
}

// TestSnapshotPage drops a real snapshot and checks what the page shows
// against the analysis package run here; then uses the chart, the state
// view and the Markdown report, and proves nothing left the browser.
func TestSnapshotPage(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_fullstep.pickle")
	a, want := expectedReport(t, path)
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.waitText("#snap-private", "never leaves your browser")

	tb.dropFile("#snap-drop", path)
	requireSnapshot(tb, "the page shows an error")
	got := evalJS[string](tb, `document.getElementById("snap-peak-wrap").dataset.bytes`)
	if got != strconv.FormatInt(want.PeakAllocatedBytes, 10) {
		t.Errorf("page peak = %s B, analysis says %d B", got, want.PeakAllocatedBytes)
	}
	for sel, text := range map[string]string{
		"#snap-peak":     bytesize.Format(want.PeakAllocatedBytes, bytesize.Binary),
		"#snap-reserved": bytesize.Format(want.PeakReservedBytes, bytesize.Binary),
		"#snap-culprit":  want.TopSites[0].Label,
		"#snap-sites":    want.TopSites[1].Label,
		"#snap-buckets":  bytesize.Format(want.CategoriesAtPeak.OptimizerState, bytesize.Binary),
	} {
		if !strings.Contains(tb.text(sel), text) {
			t.Errorf("%s lacks %q: %q", sel, text, tb.text(sel))
		}
	}

	// Each top site shows its own stack (worked out before the section is
	// drawn): the same lines as the analysis's, regrouped, plus headings.
	tb.waitText("#snap-sites", want.TopSites[0].Label)
	stacks := evalJS[[]string](tb, `[...document.querySelectorAll("#snap-sites td.snap-site")].map(td => { const p = td.querySelector("pre.snap-stack"); return p ? p.textContent : ""; })`)
	if len(stacks) != len(want.TopSites) {
		t.Errorf("%d sites with a stack cell, want %d", len(stacks), len(want.TopSites))
	}
	withStack := 0
	for i := range min(len(stacks), len(want.TopSites)) {
		if len(want.TopSites[i].Stack) == 0 {
			if stacks[i] != "" {
				t.Errorf("site %d (%s) has no stack but shows %q", i, want.TopSites[i].Label, stacks[i])
			}
			continue
		}
		withStack++
		var got []string
		for _, l := range strings.Split(stacks[i], "\n") {
			if l != "" && !strings.HasPrefix(l, "— ") {
				got = append(got, l)
			}
		}
		wantLines := slices.Clone(want.TopSites[i].Stack)
		slices.Sort(got)
		slices.Sort(wantLines)
		if !slices.Equal(got, wantLines) {
			t.Errorf("site %d (%s): the stack shown has %d lines, not the analysis's %d", i, want.TopSites[i].Label, len(got), len(wantLines))
		}
	}
	if withStack == 0 {
		t.Errorf("no top site has a stack: the check does not test")
	}

	// The state view starts at the peak.
	poll[string](tb, fmt.Sprintf(`document.body.getAttribute("data-snapshot-state") === "%d" ? "y" : ""`, want.PeakIndex), 20*time.Second)
	if st := tb.text("#snap-state"); !strings.Contains(st, bytesize.Format(want.FragmentationAtPeak.LargestFreeBlockBytes, bytesize.Binary)) {
		t.Errorf("state view lacks the largest free block %d: %q", want.FragmentationAtPeak.LargestFreeBlockBytes, st)
	}
	// Its segments are package chart's drawing of the worker's state (the
	// same limits), element for element (drawn and parsed with the state's
	// message, moved into the page by its frame).
	segmentsAre := func(i int, what string) {
		t.Helper()
		st := a.Devices[0].StateAt(i, load.StateSegments, load.StateSites)
		if !svgShownIs(tb, "#snap-state svg.snap-segs-svg", chart.SegmentsSVG(&st, bytesize.Binary)) {
			t.Errorf("%s: the segments drawn after entry %d are not package chart's SVG of the state", what, i)
		}
	}
	segmentsAre(want.PeakIndex, "at the peak")

	// Hover shows the details; a click shows the state at that moment,
	// which must match the analysis at the same index.
	pointer := func(typ string, fx float64) {
		evalJS[bool](tb, fmt.Sprintf(`(() => {
			const c = document.getElementById("snap-chart"); const r = c.getBoundingClientRect();
			c.dispatchEvent(new PointerEvent(%q, {bubbles: true, pointerType: "mouse", clientX: r.left + r.width * %f, clientY: r.top + r.height * 0.9}));
			return true; })()`, typ, fx))
	}
	pointer("pointermove", 0.3)
	tb.waitText("#snap-tip", "allocated")
	pointer("pointerdown", 0.3)
	pointer("pointerup", 0.3)
	idxText := poll[string](tb, fmt.Sprintf(`(() => { const v = document.body.getAttribute("data-snapshot-state"); return v !== "%d" ? v : ""; })()`, want.PeakIndex), 20*time.Second)
	idx, err := strconv.Atoi(idxText)
	if err != nil {
		t.Fatalf("state index %q", idxText)
	}
	st := a.Devices[0].StateAt(idx, 0, 0)
	if txt := tb.text("#snap-state"); !strings.Contains(txt, bytesize.Format(st.AllocatedBytes, bytesize.Binary)) {
		t.Errorf("state after entry %d: page %q lacks allocated %d", idx, txt, st.AllocatedBytes)
	}
	// The timeline (a component of its own, drawn again only when its
	// inputs change) marks the moment clicked: where the click was.
	left := poll[string](tb, `(() => { const l = document.querySelector("#snap-chart .snap-sel-line"); return l && l.style.left !== "" && Math.abs(parseFloat(l.style.left) - 30) < 3 ? l.style.left : ""; })()`, 10*time.Second)
	if !strings.HasSuffix(left, "%") {
		t.Errorf("the selection line is at %q, want a percentage near 30 %%", left)
	}

	// The state section's own controls (it is a component of its own:
	// its handlers redraw it, not the page): End, a typed entry, a bad
	// one, then Peak, each checked against the analysis.
	stateIs := func(i int, what string) {
		t.Helper()
		poll[string](tb, fmt.Sprintf(`document.body.getAttribute("data-snapshot-state") === "%d" ? "y" : ""`, i), 20*time.Second)
		st := a.Devices[0].StateAt(i, 0, 0)
		wantText := bytesize.Commas(int64(st.LiveAllocations)) + " live allocations"
		if txt := tb.text("#snap-state"); !strings.Contains(txt, wantText) || !strings.Contains(txt, bytesize.Format(st.ReservedBytes, bytesize.Binary)) {
			t.Errorf("%s: state after entry %d lacks %q or reserved %d: %q", what, i, wantText, st.ReservedBytes, txt)
		}
		if got := evalJS[string](tb, `document.getElementById("snap-index").value`); got != strconv.Itoa(i) {
			t.Errorf("%s: the entry field shows %q, want %d", what, got, i)
		}
		segmentsAre(i, what)
	}
	entries := want.Entries
	tb.click(`#snap-state .snap-toolbar button:nth-of-type(3)`) // End
	stateIs(entries-1, "End")
	mid := entries / 3
	evalJS[bool](tb, fmt.Sprintf(`(() => { const e = document.getElementById("snap-index"); e.value = "%d"; e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`, mid))
	stateIs(mid, "typed entry")
	evalJS[bool](tb, `(() => { const e = document.getElementById("snap-index"); e.value = ""; e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	tb.waitText("#snap-state", fmt.Sprintf("Type an entry number between -1 and %d.", entries-1))
	tb.click(`#snap-state .snap-toolbar button:nth-of-type(1)`) // Peak
	stateIs(want.PeakIndex, "Peak")
	if txt := tb.text("#snap-state"); strings.Contains(txt, "Type an entry number") {
		t.Errorf("the entry error stays after Peak: %q", txt)
	}

	// Drag to zoom, then back.
	pointer("pointerdown", 0.6)
	pointer("pointermove", 0.8)
	pointer("pointerup", 0.8)
	tb.waitText("#snap-results", "Show the whole trace")
	tb.click("#snap-zoom-reset")

	tb.click("#snap-copy")
	md := poll[string](tb, `(() => { const e = document.getElementById("snap-markdown"); return e ? e.value : ""; })()`, 10*time.Second)
	if !strings.Contains(md, "Peak allocated") || !strings.Contains(md, strconv.FormatInt(want.PeakAllocatedBytes, 10)) {
		t.Errorf("markdown report lacks the peak: %.300s", md)
	}

	tb.screenshot("snapshot-desktop")
	tb.setViewport(375, 800)
	time.Sleep(300 * time.Millisecond)
	tb.screenshot("snapshot-phone")
	tb.requireWatched("worker")
	assertLocalOnly(t, tb, s)
	tb.assertClean()
}

// TestSnapshotBadFiles feeds files that are not snapshots: each gets a
// clear message, and the page still analyses a good file afterwards.
func TestSnapshotBadFiles(t *testing.T) {
	good := realSnapshotPath(t, "pt20_flexgen_1.3b_snapshot.pickle")
	data, err := os.ReadFile(realSnapshotPath(t, "pt26_cs336_ctx128_forward.pickle"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	corrupt := append([]byte(nil), data...)
	for i := len(corrupt) / 3; i < len(corrupt)/3+64; i++ {
		corrupt[i] = 0xfe
	}
	bad := []struct {
		name    string
		content []byte
		want    string
	}{
		{"empty.pickle", nil, "is empty"},
		{"notes.txt", []byte("this is a text file, not a pickle\n"), "not a pickle"},
		{"truncated.pickle", data[:len(data)/2], "Could not analyse truncated.pickle"},
		{"corrupt.pickle", corrupt, "Could not analyse corrupt.pickle"},
		{"code.pickle", []byte("\x80\x02cos\nsystem\nq\x00."), "Could not analyse code.pickle"},
	}
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	for _, b := range bad {
		p := filepath.Join(dir, b.name)
		if err := os.WriteFile(p, b.content, 0o644); err != nil {
			t.Fatal(err)
		}
		evalJS[bool](tb, `(() => { for (const a of ["data-snapshot-ready", "data-snapshot-error"]) document.body.removeAttribute(a); return true; })()`)
		tb.uploadFile("#snap-file", p)
		ready, msg := snapshotOutcome(tb, 60*time.Second)
		if ready {
			t.Errorf("%s: the page shows a result", b.name)
			continue
		}
		if !strings.Contains(msg, b.want) {
			t.Errorf("%s: message %q lacks %q", b.name, msg, b.want)
		}
		t.Logf("%s: %s", b.name, msg)
	}
	tb.dropFile("#snap-drop", good)
	requireSnapshot(tb, "a good file after bad ones")
	_, want := expectedReport(t, good)
	if got := evalJS[string](tb, `document.getElementById("snap-peak-wrap").dataset.bytes`); got != strconv.FormatInt(want.PeakAllocatedBytes, 10) {
		t.Errorf("peak after recovering = %s, want %d", got, want.PeakAllocatedBytes)
	}
	tb.screenshot("snapshot-error-recovered")
	tb.requireWatched("worker")
	assertLocalOnly(t, tb, s)
	tb.assertClean()
}

// TestSnapshotGeneratedDevices loads a generated snapshot with two
// devices, an OOM, expandable segments and two streams (pickle protocol 2),
// checks both devices' peaks against the generator's truth through the
// device picker, and the OOM table.
func TestSnapshotGeneratedDevices(t *testing.T) {
	data, truth, err := gen.Bytes(gen.Scenario("everything"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "everything.pickle")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.uploadFile("#snap-file", path)
	requireSnapshot(tb, "error")
	got := evalJS[map[string]string](tb, `({...document.getElementById("snap-peak-wrap").dataset})`)
	if want := strconv.FormatInt(truth.Devices[0].PeakAllocated, 10); got["bytes"] != want || got["device"] != "0" {
		t.Errorf("first device shown = %v, want device 0 with peak %s", got, want)
	}
	oom := truth.Devices[0].OOMs[0]
	if txt := tb.text("#snap-ooms"); !strings.Contains(txt, bytesize.Format(oom.Requested, bytesize.Binary)) ||
		!strings.Contains(txt, bytesize.Format(oom.Reserved, bytesize.Binary)) {
		t.Errorf("OOM table %q lacks requested %d / reserved %d", txt, oom.Requested, oom.Reserved)
	}
	tb.setValue("#snap-device", "1")
	want := strconv.FormatInt(truth.Devices[1].PeakAllocated, 10)
	poll[bool](tb, fmt.Sprintf(`(() => { const e = document.getElementById("snap-peak-wrap"); return !!e && e.dataset.device === "1" && e.dataset.bytes === %q && !!document.body.getAttribute("data-snapshot-ready"); })()`, want), 20*time.Second)
	tb.assertClean()
}

// TestSnapshotReplaceWhileBusy drops a second file while the first one is
// still being decoded: the page shows the second file's analysis.
func TestSnapshotReplaceWhileBusy(t *testing.T) {
	big, _, err := gen.Bytes(gen.Options{Seed: 3, Layers: 8, TargetBytes: 30 << 20})
	if err != nil {
		t.Fatal(err)
	}
	bigPath := filepath.Join(t.TempDir(), "big.pickle")
	if err := os.WriteFile(bigPath, big, 0o644); err != nil {
		t.Fatal(err)
	}
	small := realSnapshotPath(t, "pt26_cs336_ctx128_forward.pickle")
	_, want := expectedReport(t, small)
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.uploadFile("#snap-file", bigPath)
	poll[bool](tb, `!!document.getElementById("snap-progress")`, 20*time.Second)
	tb.dropFile("#snap-drop", small)
	requireSnapshot(tb, "error")
	if got := evalJS[string](tb, `document.getElementById("snap-peak-wrap").dataset.bytes`); got != strconv.FormatInt(want.PeakAllocatedBytes, 10) {
		t.Errorf("peak = %s, want the second file's %d", got, want.PeakAllocatedBytes)
	}
	if name := tb.text("#snap-filename"); !strings.Contains(name, "forward") {
		t.Errorf("file shown = %q", name)
	}
	tb.assertClean()
}

// TestSnapshotCompare analyses one real snapshot, drops a second one on the
// comparison zone, and checks the deltas the page shows against
// analysis.Compare run here on the two files; the Markdown copy carries the
// comparison.
func TestSnapshotCompare(t *testing.T) {
	beforePath := realSnapshotPath(t, "pt26_cs336_ctx128_forward.pickle")
	afterPath := realSnapshotPath(t, "pt26_cs336_ctx128_fullstep.pickle")
	before, _ := expectedReport(t, beforePath)
	after, _ := expectedReport(t, afterPath)
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.dropFile("#snap-drop", beforePath)
	requireSnapshot(tb, "the page shows an error")
	// A file that is not a snapshot: a clear message, the first file stays.
	notes := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notes, []byte("this is a text file, not a pickle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb.uploadFile("#snap-compare-file", notes)
	poll[string](tb, `document.body.getAttribute("data-snapshot-compare-error") || ""`, 30*time.Second)
	if msg := tb.text("#snap-compare-error"); !strings.Contains(msg, "Could not compare with notes.txt") || !strings.Contains(msg, "not a pickle") {
		t.Errorf("bad second file: message %q", msg)
	}
	if !strings.Contains(tb.text("#snap-filename"), "forward") || evalJS[bool](tb, `!!document.getElementById("snap-error")`) {
		t.Errorf("a bad second file disturbed the first one's results")
	}

	tb.scrollTo("#snap-compare-drop")
	tb.dropFile("#snap-compare-drop", afterPath)
	v := poll[string](tb, `document.body.getAttribute("data-snapshot-compare") ? "done" : (document.body.getAttribute("data-snapshot-compare-error") ? "error" : "")`, 90*time.Second)
	if v != "done" {
		t.Fatalf("the comparison failed: %s", tb.text("#snap-compare-error"))
	}
	// A comparison lists load.TopSites sites, as the CLI's does
	// (docs/snapshot.md#defaults); the page says which limit it used.
	if got := evalJS[string](tb, `document.getElementById("snap-cmp").dataset.maxSites`); got != strconv.Itoa(load.TopSites) {
		t.Errorf("data-max-sites = %q, want load.TopSites = %d", got, load.TopSites)
	}
	want := analysis.Compare(before, after, load.TopSites)
	if len(want.Devices) != 1 {
		t.Fatalf("Compare pairs %d devices", len(want.Devices))
	}
	d := want.Devices[0]
	for key, dl := range map[string]analysis.Delta{"peak_allocated": d.PeakAllocated, "peak_reserved": d.PeakReserved,
		"final_allocated": d.FinalAllocated, "final_reserved": d.FinalReserved} {
		got := evalJS[map[string]string](tb, fmt.Sprintf(`(() => { const r = document.querySelector('#snap-cmp-0 tr[data-key=%q]'); return r ? {...r.dataset, text: r.textContent} : {}; })()`, key))
		if got["before"] != strconv.FormatInt(dl.Before, 10) || got["after"] != strconv.FormatInt(dl.After, 10) || got["delta"] != strconv.FormatInt(dl.Delta, 10) {
			t.Errorf("%s: page %v, Compare %+v", key, got, dl)
		}
		if !strings.Contains(got["text"], bytesize.Signed(dl.Delta, bytesize.Binary)) {
			t.Errorf("%s: row %q lacks the change %s", key, got["text"], bytesize.Signed(dl.Delta, bytesize.Binary))
		}
	}
	if d.PeakAllocated.Delta <= 0 {
		t.Errorf("a full step should peak higher than the forward pass alone: %+v", d.PeakAllocated)
	}
	// Categories: every one present in either file, with its change.
	var wantCats []string
	for _, c := range d.Categories {
		if c.Bytes.Before != 0 || c.Bytes.After != 0 {
			wantCats = append(wantCats, fmt.Sprintf("%s %d", c.Category, c.Bytes.Delta))
		}
	}
	gotCats := evalJS[[]string](tb, `Array.from(document.querySelectorAll('#snap-cmp-0 tr[data-category]')).map(r => r.dataset.category + " " + r.dataset.delta)`)
	if strings.Join(gotCats, "|") != strings.Join(wantCats, "|") {
		t.Errorf("categories on the page %q, Compare %q", gotCats, wantCats)
	}
	// Sites, in Compare's order, with label and change.
	var wantSites []string
	for _, st := range d.Sites {
		wantSites = append(wantSites, fmt.Sprintf("%s %d %s", st.Site, st.Bytes.Delta, bytesize.Signed(st.Bytes.Delta, bytesize.Binary)))
	}
	gotSites := evalJS[[]string](tb, `Array.from(document.querySelectorAll('#snap-cmp-0 .snap-cmp-sites tbody tr')).map(r => r.cells[0].textContent + " " + r.dataset.delta + " " + r.cells[3].textContent)`)
	if len(wantSites) == 0 || strings.Join(gotSites, "\n") != strings.Join(wantSites, "\n") {
		t.Errorf("sites on the page:\n%s\nCompare:\n%s", strings.Join(gotSites, "\n"), strings.Join(wantSites, "\n"))
	}

	tb.click("#snap-copy")
	md := poll[string](tb, `(() => { const e = document.getElementById("snap-markdown"); return e ? e.value : ""; })()`, 10*time.Second)
	if !strings.Contains(md, analysis.MarkdownComparison(want)) {
		t.Errorf("the Markdown copy lacks the comparison:\n%s", md)
	}
	tb.scrollTo("#snap-compare")
	tb.screenshot("snapshot-compare-desktop")
	tb.setViewport(375, 800)
	time.Sleep(300 * time.Millisecond)
	if w := evalJS[float64](tb, `document.documentElement.scrollWidth`); w > 376 {
		t.Errorf("page is %v px wide on a 375 px phone", w)
	}
	tb.screenshot("snapshot-compare-phone")
	tb.requireWatched("worker")
	assertLocalOnly(t, tb, s)
	tb.assertClean()
}
