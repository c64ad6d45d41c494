//go:build e2e

package e2e

import (
	"encoding/binary"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
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

// reportFor analyses in the test what the page must show for a query.
func reportFor(t *testing.T, query string) *estimator.Advice {
	t.Helper()
	res := estimateFor(t, query)
	rep, err := estimator.Advise(res.Request)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// noEstimateError fails when the page shows its error banner or a field
// problem: every estimate check runs on a valid request.
func noEstimateError(tb *tab) {
	tb.t.Helper()
	if msg := evalJS[string](tb, `(() => { const e = document.querySelector("#est-error, .estimate-field-error"); return e ? e.textContent : ""; })()`); msg != "" {
		tb.t.Errorf("the page shows an error: %q", msg)
	}
}

// checkReadouts compares the three readouts with the estimator's.
func checkReadouts(t *testing.T, tb *tab, want *estimator.Result) {
	t.Helper()
	for _, name := range estimator.ReadoutNames {
		got := evalJS[string](tb, fmt.Sprintf(`document.querySelector('#est-readouts tr[data-readout=%q] td[data-bytes]').dataset.bytes`, name))
		if got != strconv.FormatInt(want.Readouts.Get(name), 10) {
			t.Errorf("readout %s: page %s B, estimator %d B", name, got, want.Readouts.Get(name))
		}
	}
}

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
	checkReadouts(t, tb, want)
	noEstimateError(tb)
	rep, err := estimator.Advise(want.Request)
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

	// A bad value is reported next to the field, in words, and leaves
	// the URL alone.
	before := search(tb)
	tb.setValue("#est-seq", "1e9")
	tb.waitText("#est-seq-err", `"1e9" is not a whole number: enter 1 to 16,777,216`)
	if search(tb) != before {
		t.Errorf("a bad value changed the URL: %q → %q", before, search(tb))
	}
	if d := evalJS[string](tb, `document.getElementById("est-seq").getAttribute("aria-describedby")`); !strings.Contains(d, "est-seq-err") {
		t.Errorf("the problem is not tied to the field: aria-describedby %q", d)
	}
	tb.setValue("#est-seq", "4096")
	tb.waitExpr(`!document.getElementById("est-seq-err")`)
	noEstimateError(tb)

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
	tb.click(`#est-fixes li[data-fix="activation checkpointing"] a`)
	poll[bool](tb, `location.search.includes("ckpt=full")`, 20*time.Second)
	applied := estimateFor(t, search(tb))
	waitTotal(tb, applied.TotalBytes)
	checkBuckets(t, tb, applied, bytesize.Binary)
	noEstimateError(tb)
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
	noEstimateError(tb)
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
	noEstimateError(tb)
	tb.waitText("#est-table caption", "124,439,808 params")

	// Missing keys are named.
	tb.expectErrors() // from here on, on purpose
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
		rep, err := estimator.Advise(req)
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
		if got := tb.text("#est-top-fix strong"); got != rep.Fixes[0].Name {
			t.Errorf("%s: top fix %q, the estimator's first rung %q", q, got, rep.Fixes[0].Name)
		}
		noEstimateError(tb)
	}
	tb.assertClean()
}

// TestEstimateServing: serve mode shows what vLLM will print, from the
// estimator, and the engine's own start-up error when the cache cannot hold
// one max_model_len request.
func TestEstimateServing(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	for _, q := range []string{
		"mode=serve&model=qwen3-14b&gpu=h100-sxm-80gb&gpu_memory_utilization=0.95&max_model_len=8192",
		"mode=serve&model=gpt-oss-120b&gpu=a100-80gb&tp=4&gpu_memory_utilization=0.8&max_model_len=16384",
		"mode=serve&model=llama-3.1-8b&gpu=rtx-4090-24gb",
	} {
		rep := reportFor(t, q)
		sv := rep.Serving
		tb.open("/estimate?" + q)
		waitTotal(tb, rep.TotalBytes)
		for key, want := range map[string]int64{
			"weights_bytes": sv.WeightsBytes, "activation_peak_bytes": sv.ActivationPeakBytes, "non_torch_bytes": sv.NonTorchBytes,
			"kv_cache_bytes": sv.KVCacheBytes, "kv_cache_tokens": sv.KVCacheTokens, "kv_blocks": sv.KVBlocks,
		} {
			got := evalJS[string](tb, fmt.Sprintf(`document.querySelector('#est-serving-table tr[data-serving=%q] td').dataset.value`, key))
			if got != strconv.FormatInt(want, 10) {
				t.Errorf("%s: %s on the page %s, estimator %d", q, key, got, want)
			}
		}
		if got := evalJS[string](tb, `document.getElementById("est-verdict").dataset.fits`); got != strconv.FormatBool(rep.Fits) {
			t.Errorf("%s: verdict fits=%s, estimator %v", q, got, rep.Fits)
		}
		hasErr := evalJS[bool](tb, `!!document.getElementById("est-engine-error")`)
		if hasErr != (sv.Error != "") {
			t.Errorf("%s: engine error shown %v, estimator %q", q, hasErr, sv.Error)
		}
		if sv.Error != "" {
			tb.waitText("#est-verdict", "cannot hold one request of max_model_len")
		}
		if log := tb.text("#est-serving-log pre"); !strings.Contains(log, fmt.Sprintf("GPU KV cache size: %s tokens", bytesize.Commas(sv.KVCacheTokens))) {
			t.Errorf("%s: log %q", q, log)
		}
		noEstimateError(tb)
	}
	tb.screenshot("estimate-serve")
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// TestEstimateFeasiblePlot: the plot's boundary points are the estimator's
// feasible region, the current setup is marked, and a point sets its
// values.
func TestEstimateFeasiblePlot(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	q := "model=llama-3.1-8b&gpu=rtx-4090-24gb&method=qlora&ckpt=full&seq=4096&batch=2"
	rep := reportFor(t, q)
	tb.open("/estimate?" + q)
	waitTotal(tb, rep.TotalBytes)
	pts := evalJS[[]any](tb, `[...document.querySelectorAll("#est-plot .estimate-plot-point")].map(a => [+a.dataset.seq, +a.dataset.batch])`)
	if len(pts) != len(rep.Feasible) {
		t.Fatalf("%d points on the plot, %d in the estimator's region", len(pts), len(rep.Feasible))
	}
	for i, p := range pts {
		xy := p.([]any)
		if int(xy[0].(float64)) != rep.Feasible[i].Seq || int(xy[1].(float64)) != rep.Feasible[i].MaxBatch {
			t.Errorf("point %d: %v, estimator %+v", i, xy, rep.Feasible[i])
		}
	}
	if got := evalJS[string](tb, `(() => { const c = document.getElementById("est-plot-current"); return c.dataset.seq + "x" + c.dataset.batch; })()`); got != "4096x2" {
		t.Errorf("current setup marked at %s", got)
	}
	// Pick the longest sequence where something fits other than the
	// current one: seq and batch follow.
	var want estimator.FeasiblePoint
	for _, p := range rep.Feasible {
		if p.MaxBatch > 0 && p.Seq != 4096 {
			want = p
		}
	}
	if want.MaxBatch == 0 {
		t.Fatalf("no boundary point to pick in %+v", rep.Feasible)
	}
	tb.click(fmt.Sprintf(`#est-plot .estimate-plot-point[data-seq="%d"]`, want.Seq))
	picked := rep.Request
	picked.Seq, picked.Batch = want.Seq, want.MaxBatch
	poll[bool](tb, fmt.Sprintf(`location.search.slice(1) === %q`, picked.QueryString()), 20*time.Second)
	at := estimateFor(t, search(tb))
	waitTotal(tb, at.TotalBytes)
	if !at.Fits {
		t.Errorf("the boundary point %+v does not fit", want)
	}
	noEstimateError(tb)
	tb.assertClean()
}

// TestEstimateAnswerFirst: on a phone the verdict and the top fix stay in
// view while the form scrolls; every control's help is there; ids are
// unique; options do not repeat a size; the answer's formula text meets
// contrast.
func TestEstimateAnswerFirst(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.setViewport(375, 800)
	q := "model=llama-3.1-70b&gpu=rtx-4090-24gb"
	rep := reportFor(t, q)
	tb.open("/estimate?" + q)
	waitTotal(tb, rep.TotalBytes)
	tb.scrollTo("#est-batch")
	tb.setValue("#est-batch", "2")
	poll[bool](tb, `location.search.includes("batch=2")`, 20*time.Second)
	at := estimateFor(t, search(tb))
	waitTotal(tb, at.TotalBytes)
	inView := evalJS[bool](tb, `(() => { const v = document.getElementById("est-verdict").getBoundingClientRect(), f = document.getElementById("est-top-fix").getBoundingClientRect();
		return v.top >= 0 && v.bottom <= innerHeight && f.top >= 0 && f.bottom <= innerHeight; })()`)
	if !inView {
		t.Errorf("after an edit on a phone the verdict and top fix are out of view")
	}
	tb.screenshot("estimate-phone-answer")
	tb.setViewport(1440, 900)
	dups := evalJS[[]any](tb, `(() => { const c = {}; document.querySelectorAll("[id]").forEach(e => c[e.id] = (c[e.id] || 0) + 1); return Object.keys(c).filter(k => c[k] > 1); })()`)
	if len(dups) > 0 {
		t.Errorf("ids used more than once: %v", dups)
	}
	// Every shown field has its help from the field table.
	for _, f := range estimator.Fields() {
		if !at.Request.Applies(f.Key) || f.Key == "config" || f.Key == "checkpoint_bytes" {
			continue
		}
		got := evalJS[string](tb, fmt.Sprintf(`(() => { const h = document.getElementById(%q); return h ? h.textContent : ""; })()`, "est-"+f.Key+"-help"))
		if !strings.HasPrefix(got, f.Help) {
			t.Errorf("%s: help %q, want the field table's", f.Key, got)
		}
	}
	labels := evalJS[[]any](tb, `[...document.querySelectorAll("#est-model option")].map(o => o.textContent)`)
	for _, l := range labels {
		s := l.(string)
		if strings.Count(s, "(") > 1 || strings.Contains(s, "1000M") {
			t.Errorf("model option %q", s)
		}
	}
	// Contrast of the answer's formula (AA: 4.5:1), opacity included.
	ratio := evalJS[float64](tb, `(() => {
		const el = document.querySelector("#est-answer .formula"), box = document.getElementById("est-answer");
		const rgb = s => s.match(/[\d.]+/g).map(Number);
		const lum = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126*r + 0.7152*g + 0.0722*b; };
		let fg = rgb(getComputedStyle(el).color), bg = rgb(getComputedStyle(box).backgroundColor);
		let a = (fg[3] ?? 1) * Number(getComputedStyle(el).opacity) * Number(getComputedStyle(box).opacity);
		fg = fg.slice(0, 3).map((v, i) => v * a + bg[i] * (1 - a));
		const [l1, l2] = [lum(fg), lum(bg)].sort((x, y) => y - x);
		return (l1 + 0.05) / (l2 + 0.05); })()`)
	if ratio < 4.5 {
		t.Errorf("answer formula contrast %.2f:1, want at least 4.5:1", ratio)
	}
	noEstimateError(tb)
	tb.assertClean()
}

// TestEstimateCheckpointAndEmpty: a dropped .safetensors header sets the
// stored weight bytes; an empty config file is an error, not the default
// model.
func TestEstimateCheckpointAndEmpty(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	dir := t.TempDir()
	// A small .safetensors file: 8-byte length, header, data.
	hdr := `{"w":{"dtype":"BF16","shape":[1000,1000],"data_offsets":[0,2000000]}}`
	data := make([]byte, 8, 8+len(hdr)+2000000)
	binary.LittleEndian.PutUint64(data, uint64(len(hdr)))
	data = append(append(data, hdr...), make([]byte, 2000000)...)
	path := filepath.Join(dir, "model.safetensors")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tb.open("/estimate?mode=infer")
	tb.uploadFile("#est-checkpoint-file", path)
	poll[bool](tb, `location.search.includes("checkpoint_bytes=2000000")`, 20*time.Second)
	want := estimateFor(t, search(tb))
	if want.Buckets.Weights != 2_000_000 {
		t.Fatalf("weights %d", want.Buckets.Weights)
	}
	waitTotal(tb, want.TotalBytes)
	tb.waitText("#est-checkpoint-said", "the config counts 8,030,261,248 params")
	noEstimateError(tb)

	empty := filepath.Join(dir, "config.json")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tb.open("/estimate?gpu=rtx-4090-24gb")
	tb.setValue("#est-model", "custom")
	poll[bool](tb, `!!document.getElementById("est-config-drop")`, 20*time.Second)
	tb.expectErrors() // an empty config.json, then an empty config=, on purpose
	tb.uploadFile("#est-config-file", empty)
	tb.waitText("#est-error", "config.json is empty")
	tb.open("/estimate?config=")
	tb.waitText("#main", "model=custom needs a config.json")
	if got := evalJS[string](tb, `document.getElementById("est-model").value`); got != "custom" {
		t.Errorf("an empty config= shows model %q, not custom", got)
	}
	tb.assertClean()
}

// BenchmarkBrowserEstimate measures, in Chromium, what one edit costs the
// page: the analysis in WebAssembly (estimate, searches, the feasible
// region, fixes; the page's data-estimate-us) and the edit-to-render time.
// Run: make bench-browser (or -bench BrowserEstimate -benchtime 1x).
func BenchmarkBrowserEstimate(b *testing.B) {
	s := serveSite(b, distDir(b), "", "no-store")
	tb := newTab(b, s)
	setups := []struct{ name, query, key, a, z string }{
		{"train default", "", "est-batch", "2", "3"},
		{"qlora 8B on a 4090", "model=llama-3.1-8b&gpu=rtx-4090-24gb&method=qlora&ckpt=full", "est-seq", "4096", "8192"},
		{"70B zero3 tp2", "model=llama-3.1-70b&gpus=16&tp=2&shard=zero3&ckpt=full", "est-batch", "2", "4"},
		{"serve gpt-oss-120b tp2", "mode=serve&model=gpt-oss-120b&tp=2", "est-max_model_len", "16384", "32768"},
	}
	type row struct {
		name                           string
		minUs, medUs, minEdit, medEdit float64
	}
	var rows []row
	for _, st := range setups {
		tb.open("/estimate?" + st.query)
		tb.waitExpr(`!!document.body.getAttribute("data-estimate-ready")`)
		var us, edit []float64
		for i := 0; i < 12; i++ {
			v := st.a
			if i%2 == 1 {
				v = st.z
			}
			n := evalJS[string](tb, `document.body.getAttribute("data-estimate-ready")`)
			start := evalJS[float64](tb, `performance.now()`)
			tb.setValue("#"+st.key, v)
			end := poll[float64](tb, fmt.Sprintf(`document.body.getAttribute("data-estimate-ready") !== %q && performance.now()`, n), 20*time.Second)
			u, _ := strconv.ParseFloat(evalJS[string](tb, `document.body.getAttribute("data-estimate-us")`), 64)
			us, edit = append(us, u), append(edit, end-start)
		}
		sort.Float64s(us)
		sort.Float64s(edit)
		rows = append(rows, row{st.name, us[0] / 1000, us[len(us)/2] / 1000, edit[0], edit[len(edit)/2]})
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n| setup | analysis min | analysis median | edit → render min | median |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&out, "| %s | %.1f ms | %.1f ms | %.0f ms | %.0f ms |\n", r.name, r.minUs, r.medUs, r.minEdit, r.medEdit)
	}
	b.Log(out.String())
	b.ReportMetric(rows[0].medUs, "ms/analysis")
}
