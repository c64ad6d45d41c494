//go:build e2e

package e2e

import (
	"fmt"
	"net/url"
	"regexp"
	"testing"
	"time"

	"oomscope/estimator"

	"github.com/chromedp/chromedp"
)

// reload reloads the page as a user would and waits for the app to mount.
func (tb *tab) reload() {
	tb.t.Helper()
	tb.do(chromedp.Reload())
	tb.waitReady()
}

// scrollTo scrolls the element matching sel to the middle of the viewport,
// so that pointer and drag events aimed at its centre reach it.
func (tb *tab) scrollTo(sel string) {
	tb.t.Helper()
	if !evalJS[bool](tb, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.scrollIntoView({block: "center"}); return true; })()`, sel)) {
		tb.t.Fatalf("scrollTo: no element %s", sel)
	}
}

// pressedUnit returns the label of the pressed button of the GiB / GB
// switch ("" when none is pressed).
func pressedUnit(tb *tab) string {
	tb.t.Helper()
	return evalJS[string](tb, `(() => { const b = document.querySelector('.unit-toggle button[aria-pressed="true"]'); return b ? b.textContent : ""; })()`)
}

// waitExpr waits until a JS expression is true.
func (tb *tab) waitExpr(expr string) {
	tb.t.Helper()
	poll[bool](tb, expr, 20*time.Second)
}

// regexpSubmatch returns the first group of pattern in s, failing the test
// when it does not match.
func regexpSubmatch(t testing.TB, pattern, s string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("%q does not match %s", s, pattern)
	}
	return m[1]
}

// estimateOf computes what the estimator page must show for URL values q.
func estimateOf(t testing.TB, q url.Values) *estimator.Result {
	t.Helper()
	req, err := estimator.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	res, err := estimator.Estimate(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// totalBytesJS reads the estimator page's total in bytes ("" until shown).
const totalBytesJS = `(() => { const c = document.querySelector('#est-table tr[data-bucket="total"] td[data-bytes]'); return c ? c.dataset.bytes : ""; })()`
