//go:build e2e

package e2e

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"oomscope/bytesize"
	"oomscope/estimator"
)

// estimateFor computes in the test what the page must show for a query.
func estimateFor(t *testing.T, query string) *estimator.Result {
	t.Helper()
	v, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	v.Del("unit")
	req, err := estimator.ParseQuery(v)
	if err != nil {
		t.Fatalf("ParseQuery(%q): %v", query, err)
	}
	res, err := estimator.Estimate(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// pageBytes reads the byte count of a bucket row ("total" for the total).
func pageBytes(tb *tab, bucket string) int64 {
	tb.t.Helper()
	s := evalJS[string](tb, fmt.Sprintf(`(() => { const c = document.querySelector('#est-table tr[data-bucket=%q] td[data-bytes]'); return c ? c.dataset.bytes : ""; })()`, bucket))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		tb.t.Fatalf("bucket %s: data-bytes %q", bucket, s)
	}
	return n
}

// pageSize reads the size text of a bucket row.
func pageSize(tb *tab, bucket string) string {
	tb.t.Helper()
	return evalJS[string](tb, fmt.Sprintf(`document.querySelector('#est-table tr[data-bucket=%q] td[data-bytes]').textContent`, bucket))
}

// waitTotal waits until the page's total equals want.
func waitTotal(tb *tab, want int64) {
	tb.t.Helper()
	poll[bool](tb, fmt.Sprintf(`(() => { const c = document.querySelector('#est-table tr[data-bucket="total"] td[data-bytes]'); return !!c && c.dataset.bytes === %q; })()`, strconv.FormatInt(want, 10)), 20*time.Second)
}

// checkBuckets compares every bucket on the page with the estimator's.
func checkBuckets(t *testing.T, tb *tab, want *estimator.Result, unit bytesize.Unit) {
	t.Helper()
	for _, name := range estimator.BucketNames {
		if got := pageBytes(tb, name); got != want.Buckets.Get(name) {
			t.Errorf("%s: page shows %d B, estimator says %d B", name, got, want.Buckets.Get(name))
		}
		if got, w := pageSize(tb, name), bytesize.Format(want.Buckets.Get(name), unit); got != w {
			t.Errorf("%s: page shows %q, want %q", name, got, w)
		}
	}
	if got := pageBytes(tb, "total"); got != want.TotalBytes {
		t.Errorf("total: page shows %d B, estimator says %d B", got, want.TotalBytes)
	}
	if got := evalJS[string](tb, `document.getElementById("est-verdict").dataset.fits`); got != strconv.FormatBool(want.Fits) {
		t.Errorf("verdict fits=%s, estimator says %v", got, want.Fits)
	}
}

func search(tb *tab) string { return evalJS[string](tb, `location.search.slice(1)`) }

// TestEstimatePage opens a shared link, checks the numbers against the
// estimator, changes controls, switches units, and reloads offline.
func TestEstimatePage(t *testing.T) {
	dir := distDir(t)
	s := serveSite(t, dir, "", "no-store")
	tb := newTab(t, s)
	q := "model=llama-3.1-8b&gpu=h100-sxm-80gb&seq=4096&ckpt=full"
	tb.open("/estimate?" + q)
	want := estimateFor(t, q)
	waitTotal(tb, want.TotalBytes)
	checkBuckets(t, tb, want, bytesize.Binary)
	rep, err := estimator.Analyze(want.Request)
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := estimator.LookupGPU(rep.SmallestGPU); !strings.Contains(tb.text("#est-smallest dd"), g.Name) {
		t.Errorf("smallest GPU shows %q, want %s", tb.text("#est-smallest dd"), g.Name)
	}
	if got := tb.text("#est-max-seq dd"); !strings.HasPrefix(got, strconv.Itoa(rep.MaxSeq)+" tokens") {
		t.Errorf("max seq shows %q, want %d tokens", got, rep.MaxSeq)
	}

	// A number field: the URL and the numbers follow.
	tb.setValue("#est-batch", "4")
	poll[bool](tb, `location.search.includes("batch=4")`, 20*time.Second)
	want4 := estimateFor(t, search(tb))
	if want4.Request.Batch != 4 || want4.TotalBytes == want.TotalBytes {
		t.Fatalf("URL %q does not hold the new batch", search(tb))
	}
	waitTotal(tb, want4.TotalBytes)
	checkBuckets(t, tb, want4, bytesize.Binary)

	// A select: method LoRA shows the LoRA fields and changes the numbers.
	tb.setValue("#est-method", "lora")
	poll[bool](tb, `location.search.includes("method=lora") && !!document.getElementById("est-lora_rank")`, 20*time.Second)
	wantLoRA := estimateFor(t, search(tb))
	waitTotal(tb, wantLoRA.TotalBytes)
	checkBuckets(t, tb, wantLoRA, bytesize.Binary)

	// A bad value is reported next to the field and leaves the URL alone.
	before := search(tb)
	tb.setValue("#est-seq", "")
	tb.waitText("#main", "not a whole number")
	if search(tb) != before {
		t.Errorf("a bad value changed the URL: %q → %q", before, search(tb))
	}
	tb.setValue("#est-seq", "4096")

	// GB instead of GiB.
	tb.click("#unit-gb")
	poll[bool](tb, `location.search.includes("unit=gb")`, 20*time.Second)
	poll[bool](tb, `document.querySelector('#est-table tr[data-bucket="total"] td[data-bytes]').textContent.endsWith(" GB")`, 20*time.Second)
	checkBuckets(t, tb, wantLoRA, bytesize.Decimal)
	tb.screenshot("estimate")

	// Offline reload of the same URL restores the same state.
	tb.waitOfflineReady(siteVersion(t, dir))
	shared := search(tb)
	tb.goOffline()
	tb.open("/estimate?" + shared)
	waitTotal(tb, wantLoRA.TotalBytes)
	checkBuckets(t, tb, wantLoRA, bytesize.Decimal)
	if got := evalJS[string](tb, `document.getElementById("est-method").value`); got != "lora" {
		t.Errorf("offline reload: method control shows %q", got)
	}

	// Phone width: no horizontal scrolling of the page itself.
	tb.setViewport(375, 800)
	tb.open("/estimate?" + shared)
	waitTotal(tb, wantLoRA.TotalBytes)
	if w := evalJS[float64](tb, `document.documentElement.scrollWidth`); w > 376 {
		t.Errorf("page is %v px wide on a 375 px phone", w)
	}
	tb.screenshot("estimate-phone")
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// TestEstimateControlsLabelled: every control has a label (keyboard and
// screen-reader use), and the fix links apply their request.
func TestEstimateControlsLabelled(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	q := "model=llama-3.1-70b&gpu=a100-80gb&dtype=fp32&batch=4&seq=4096"
	tb.open("/estimate?" + q)
	want := estimateFor(t, q)
	waitTotal(tb, want.TotalBytes)
	unlabelled := evalJS[[]any](tb, `[...document.querySelectorAll("#main input, #main select, #main textarea, #main button")]
		.filter(e => !(e.labels && e.labels.length) && !e.getAttribute("aria-label") && !e.textContent.trim()).map(e => e.id || e.outerHTML)`)
	if len(unlabelled) > 0 {
		t.Errorf("controls without a label: %v", unlabelled)
	}
	// The fix ladder: the last rung fits, and applying it loads its numbers.
	n := evalJS[float64](tb, `document.querySelectorAll("#est-fixes li").length`)
	if n < 5 {
		t.Fatalf("fix ladder has %v rungs", n)
	}
	tb.click("#est-fixes li:nth-child(3) a")
	poll[bool](tb, `location.search.includes("ckpt=full")`, 20*time.Second)
	applied := estimateFor(t, search(tb))
	waitTotal(tb, applied.TotalBytes)
	checkBuckets(t, tb, applied, bytesize.Binary)
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// TestEstimateInferenceAndCustomGPU: a link with a GPU capacity (as the
// triage page makes) selects "custom capacity"; inference shows a KV cache.
func TestEstimateInferenceAndCustomGPU(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	q := "model=qwen2.5-7b&gpu=22.03GiB&batch=2&seq=8192"
	tb.open("/estimate?" + q)
	want := estimateFor(t, q)
	waitTotal(tb, want.TotalBytes)
	checkBuckets(t, tb, want, bytesize.Binary)
	if got := evalJS[string](tb, `document.getElementById("est-gpu").value + " " + document.getElementById("est-gpu-capacity").value`); got != "custom 22.03GiB" {
		t.Errorf("GPU controls show %q", got)
	}
	tb.setValue("#est-mode", "infer")
	poll[bool](tb, `location.search.includes("mode=infer") && !!document.getElementById("est-kv_dtype")`, 20*time.Second)
	infer := estimateFor(t, search(tb))
	if infer.Buckets.KVCache == 0 {
		t.Fatalf("no KV cache for %q", search(tb))
	}
	waitTotal(tb, infer.TotalBytes)
	checkBuckets(t, tb, infer, bytesize.Binary)
	tb.setValue("#est-gpu-capacity", "40GiB")
	poll[bool](tb, `location.search.includes("gpu=40GiB")`, 20*time.Second)
	waitTotal(tb, estimateFor(t, search(tb)).TotalBytes)
	tb.screenshot("estimate-infer")
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// TestEstimateCustomConfig drops a real config.json and pastes another.
func TestEstimateCustomConfig(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/estimate?gpu=rtx-4090-24gb")
	tb.setValue("#est-model", "custom")
	poll[bool](tb, `!!document.getElementById("est-config-drop")`, 20*time.Second)
	tb.dropFile("#est-config-drop", "../estimator/testdata/configs/gpt2.json")
	poll[bool](tb, `location.search.includes("config=")`, 20*time.Second)
	want := estimateFor(t, search(tb))
	if want.Params != 124_439_808 {
		t.Fatalf("the URL's config gives %d params", want.Params)
	}
	waitTotal(tb, want.TotalBytes)
	checkBuckets(t, tb, want, bytesize.Binary)
	tb.waitText("#est-table caption", "124,439,808 params")

	// Missing keys are named.
	tb.setValue("#est-config", `{"model_type": "llama", "hidden_size": 64}`)
	tb.waitText("#est-error", "missing required keys: num_hidden_layers")
	tb.screenshot("estimate-custom")
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// TestEstimateNoFixEnough: when even the last rung of the ladder does not
// fit, the page says so; when one does, it does not.
func TestEstimateNoFixEnough(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	for _, q := range []string{"model=llama-3.1-405b&gpu=rtx-4090-24gb", "model=llama-3.1-8b&gpu=rtx-4090-24gb"} {
		v, _ := url.ParseQuery(q)
		req, err := estimator.ParseQuery(v)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := estimator.Analyze(req)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Fixes) == 0 {
			t.Fatalf("%s: the setup fits, no ladder to test", q)
		}
		tb.open("/estimate?" + q)
		waitTotal(tb, rep.TotalBytes)
		want := !rep.Fixes[len(rep.Fixes)-1].Fits
		if got := evalJS[bool](tb, `!!document.getElementById("est-no-fix")`); got != want {
			t.Errorf("%s: 'no fix is enough' shown = %v, want %v", q, got, want)
		}
		if n := evalJS[float64](tb, `document.querySelectorAll("#est-fixes li").length`); int(n) != len(rep.Fixes) {
			t.Errorf("%s: %v rungs on the page, %d from the estimator", q, n, len(rep.Fixes))
		}
	}
	tb.assertClean()
}
