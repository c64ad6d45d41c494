//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"oomscope/bytesize"
	"oomscope/estimator/triage"
	"oomscope/snapshot/analysis"
)

// switchToGB clicks the GB button of the unit switch and waits for the URL
// to hold unit=gb.
func switchToGB(t *testing.T, tb *tab) {
	t.Helper()
	tb.click("#unit-gb")
	tb.waitExpr(`new URLSearchParams(location.search).get("unit") === "gb"`)
	tb.waitExpr(`(() => { const b = document.querySelector('.unit-toggle button[aria-pressed="true"]'); return !!b && b.textContent === "GB"; })()`)
}

// waitTextIs waits until the element's whole text is want.
func waitTextIs(tb *tab, sel, want string) {
	tb.t.Helper()
	tb.waitExpr(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.trim() === %q; })()`, sel, want))
}

// TestUnitsEstimate: on /estimate the switch turns GiB into GB, puts
// unit=gb in the URL, survives a reload, and switches back.
func TestUnitsEstimate(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	q := "model=llama-3.1-8b&gpu=h100-sxm-80gb&batch=3"
	tb.open("/estimate?" + q)
	want := estimateFor(t, q)
	waitTotal(tb, want.TotalBytes)
	total := `#est-table tr[data-bucket="total"] td[data-bytes]`
	if got := tb.text(total); got != bytesize.Format(want.TotalBytes, bytesize.Binary) {
		t.Errorf("total shows %q, want %s", got, bytesize.Format(want.TotalBytes, bytesize.Binary))
	}
	if got := pressedUnit(tb); got != "GiB" {
		t.Errorf("pressed unit at first = %q, want GiB", got)
	}
	switchToGB(t, tb)
	waitTextIs(tb, total, bytesize.Format(want.TotalBytes, bytesize.Decimal))
	checkBuckets(t, tb, want, bytesize.Decimal)

	tb.reload()
	waitTotal(tb, want.TotalBytes)
	checkBuckets(t, tb, want, bytesize.Decimal)
	if got := pressedUnit(tb); got != "GB" {
		t.Errorf("after a reload the pressed unit is %q", got)
	}
	if u := search(tb); !strings.Contains(u, "batch=3") || !strings.Contains(u, "unit=gb") {
		t.Errorf("URL after reload = %q", u)
	}
	tb.click("#unit-gib")
	tb.waitExpr(`!location.search.includes("unit=")`)
	waitTextIs(tb, total, bytesize.Format(want.TotalBytes, bytesize.Binary))
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// TestUnitsTriage: the same on /triage, with an example message from the
// URL so that a reload brings the text back.
func TestUnitsTriage(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/triage?example=other")
	tb.waitText("#triage-status", "Found 1")
	text := evalJS[string](tb, `document.getElementById("triage-input").value`)
	f := triage.Triage(text, triage.Options{}).Findings[0]
	var fd *triage.Field
	for i := range f.Fields {
		if f.Fields[i].Bytes != nil {
			fd = &f.Fields[i]
			break
		}
	}
	if fd == nil {
		t.Fatalf("the example has no sizes: %+v", f.Fields)
	}
	n := fd.Bytes.Int64()
	cell := fmt.Sprintf(`#triage-numbers tr[data-key=%q] td.num strong`, fd.Key)
	exact := fmt.Sprintf(`#triage-numbers tr[data-key=%q] td.num .formula`, fd.Key)
	if got := tb.text(cell); got != bytesize.Format(n, bytesize.Binary) {
		t.Errorf("%s shows %q, want %s", fd.Key, got, bytesize.Format(n, bytesize.Binary))
	}
	switchToGB(t, tb)
	waitTextIs(tb, cell, bytesize.Format(n, bytesize.Decimal))
	if got, want := tb.text(exact), bytesize.Commas(n)+" B"; got != want {
		t.Errorf("exact bytes changed with the unit: %q, want %s", got, want)
	}
	if bar, ok := triage.CardBar(&f); ok && bar.Request > 0 {
		if got, w := tb.text("#triage-req-label"), "request "+bytesize.Format(bar.Request, bytesize.Decimal); !strings.Contains(got, w) {
			t.Errorf("request label %q lacks %q", got, w)
		}
	}

	tb.reload()
	tb.waitText("#triage-status", "Found 1")
	waitTextIs(tb, cell, bytesize.Format(n, bytesize.Decimal))
	if got := pressedUnit(tb); got != "GB" {
		t.Errorf("after a reload the pressed unit is %q", got)
	}
	if u := search(tb); !strings.Contains(u, "example=other") || !strings.Contains(u, "unit=gb") {
		t.Errorf("URL after reload = %q", u)
	}
	// The estimator link carries the unit too.
	if f.Estimator != nil {
		href := evalJS[string](tb, `document.getElementById("triage-estimate-link").getAttribute("href")`)
		if !strings.HasSuffix(href, "/estimate?"+f.Estimator.Query+"&unit=gb") {
			t.Errorf("estimator link %q, want …/estimate?%s&unit=gb", href, f.Estimator.Query)
		}
	}
	tb.setViewport(375, 800)
	time.Sleep(300 * time.Millisecond)
	if w := evalJS[float64](tb, `document.documentElement.scrollWidth`); w > 376 {
		t.Errorf("page is %v px wide on a 375 px phone", w)
	}
	tb.screenshot("triage-gb-phone")
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// TestUnitsSnapshot: the same on /snapshot: every size follows the switch,
// the exact byte counts do not, and a reload keeps GB for the next file.
func TestUnitsSnapshot(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_forward.pickle")
	_, want := expectedReport(t, path)
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.dropFile("#snap-drop", path)
	requireSnapshot(tb, "the page shows an error")
	peak := "#snap-peak .snap-big"
	if got := tb.text(peak); got != bytesize.Format(want.PeakAllocatedBytes, bytesize.Binary) {
		t.Errorf("peak shows %q, want %s", got, bytesize.Format(want.PeakAllocatedBytes, bytesize.Binary))
	}
	switchToGB(t, tb)
	waitTextIs(tb, peak, bytesize.Format(want.PeakAllocatedBytes, bytesize.Decimal))
	checks := map[string]string{
		"#snap-peak":     bytesize.Commas(want.PeakAllocatedBytes) + " B",
		"#snap-reserved": bytesize.Format(want.PeakReservedBytes, bytesize.Decimal),
		"#snap-sites":    bytesize.Format(want.TopSites[0].Bytes, bytesize.Decimal),
	}
	var biggest int64
	for _, c := range analysis.Categories() {
		biggest = max(biggest, want.CategoriesAtPeak.Get(c))
	}
	checks["#snap-buckets"] = bytesize.Format(biggest, bytesize.Decimal)
	tb.waitText("#snap-state", "allocated")
	checks["#snap-state"] = bytesize.Format(want.FragmentationAtPeak.LargestFreeBlockBytes, bytesize.Decimal)
	for sel, text := range checks {
		if got := tb.text(sel); !strings.Contains(got, text) {
			t.Errorf("%s lacks %q in GB: %q", sel, text, got)
		}
	}
	// Every size but the switch's own label.
	if got := evalJS[string](tb, `(() => { const c = document.getElementById("snap-results").cloneNode(true); c.querySelector(".unit-toggle").remove(); return c.textContent; })()`); strings.Contains(got, "GiB") {
		i := strings.Index(got, "GiB")
		t.Errorf("GiB still shown in GB mode: …%s…", got[max(0, i-80):i+3])
	}

	tb.reload()
	if u := search(tb); u != "unit=gb" {
		t.Errorf("URL after reload = %q", u)
	}
	tb.dropFile("#snap-drop", path)
	requireSnapshot(tb, "the page shows an error")
	waitTextIs(tb, peak, bytesize.Format(want.PeakAllocatedBytes, bytesize.Decimal))
	if got := pressedUnit(tb); got != "GB" {
		t.Errorf("after a reload the pressed unit is %q", got)
	}
	tb.requireWatched("worker")
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}
