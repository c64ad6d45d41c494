//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"oomscope/bytesize"
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

// TestSnapshotSummaryFirst drops a generated file (distinct stacks, 8 MiB:
// the worker's analysis after the summary takes long enough to see it) and
// checks the page's state between the summary and the result: the peaks
// as the analysis run here gives them, "Diagnosing…", no timeline and no
// culprit yet; then that the result's frame updated those elements in
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
