//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// startupProbe runs in every new document before the page's scripts: it
// records when the app's loader left the page and whether it covered the
// screen (go-app's full-screen curtain, before this site made it a badge).
const startupProbe = `(() => {
	const probe = window.__probe = {curtain: false, loaderGone: 0};
	document.addEventListener("DOMContentLoaded", () => {
		const l = document.getElementById("app-wasm-loader");
		if (!l) return;
		const r = l.getBoundingClientRect();
		probe.curtain = r.width * r.height > 0.5 * innerWidth * innerHeight;
		new MutationObserver((_, o) => { if (!document.getElementById("app-wasm-loader")) { probe.loaderGone = performance.now(); o.disconnect(); } })
			.observe(document.body, {childList: true});
	});
})()`

// startupRun is what one visit measured, in ms from the navigation's start.
type startupRun struct {
	content, ready float64 // real content painted; estimator interactive
	sent           int64   // bytes the server sent for the visit (page, app, worker's precache)
	wasmGets       int     // GETs of app.wasm
	edit           float64 // median ms from an edit of the batch field to the new estimate drawn
}

// editLatency changes the estimator's micro-batch n times and returns the
// median time from the input event to the next animation frame after the
// app recomputed (data-estimate-ready changed).
func editLatency(tb *tab, n int) float64 {
	tb.t.Helper()
	return evalJS[float64](tb, fmt.Sprintf(`(async () => {
		const e = document.getElementById("est-batch"), set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
		const ms = [];
		for (let i = 0; i < %d; i++) {
			const before = document.body.getAttribute("data-estimate-ready"), t0 = performance.now();
			set.call(e, String(2 + i %% 4));
			e.dispatchEvent(new Event("input", {bubbles: true}));
			while (document.body.getAttribute("data-estimate-ready") === before) await new Promise(r => setTimeout(r, 1));
			await new Promise(r => requestAnimationFrame(r));
			ms.push(performance.now() - t0);
		}
		ms.sort((a, b) => a - b);
		return ms[ms.length >> 1];
	})()`, n))
}

// visit opens the estimator and measures it. Real content is the first
// contentful paint, unless a full-screen loader covered the page then: it
// is the moment the loader left. The estimator is interactive when the app
// mounted and computed (data-estimate-ready).
func visit(tb *tab, path string) startupRun {
	tb.t.Helper()
	tb.do(chromedp.Navigate(tb.s.URL + path))
	poll[bool](tb, `document.body && document.body.hasAttribute("data-estimate-ready") && performance.getEntriesByName("first-contentful-paint").length > 0`, 3*time.Minute)
	m := evalJS[map[string]float64](tb, `(() => ({
		fcp: performance.getEntriesByName("first-contentful-paint")[0].startTime,
		ready: +document.body.getAttribute("data-wasm-ready"),
		curtain: window.__probe.curtain ? 1 : 0, gone: window.__probe.loaderGone }))()`)
	r := startupRun{content: m["fcp"], ready: m["ready"]}
	if m["curtain"] == 1 {
		r.content = max(m["fcp"], m["gone"])
	}
	return r
}

// BenchmarkBrowserStartup measures the first and the second visit of the
// estimator on loopback: when real content is painted, when the estimator
// is interactive, how many bytes the first visit transfers in all (the
// page, the app and the service worker's precache, counted at the server)
// and how often app.wasm is downloaded. OOMSCOPE_BENCH_RUNS sets the number
// of runs (default 5; the table shows the best and the median);
// OOMSCOPE_BENCH_MBPS=1.6 throttles the browser's network to that many
// megabits per second with 40 ms latency. Run it against another build
// with OOMSCOPE_DIST=/path/to/dist (make bench-startup).
func BenchmarkBrowserStartup(b *testing.B) {
	runs := 5
	if v, err := strconv.Atoi(os.Getenv("OOMSCOPE_BENCH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	mbps, _ := strconv.ParseFloat(os.Getenv("OOMSCOPE_BENCH_MBPS"), 64)
	const path = "/estimate?model=llama-3.1-8b&gpu=rtx-4090-24gb&method=qlora&ckpt=full"
	dir := distDir(b)
	version := siteVersion(b, dir)
	var cold, warm []startupRun
	for b.Loop() {
		for range runs {
			s := serveSite(b, dir, "", "no-store")
			tb := newTab(b, s)
			if _, err := chromedp.Call(tb.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: startupProbe}); err != nil {
				b.Fatal(err)
			}
			if mbps > 0 {
				bps := mbps * 1e6 / 8
				if _, err := chromedp.Call(tb.ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
					MatchedNetworkConditions: []*network.Conditions{{Latency: 40, DownloadThroughput: bps, UploadThroughput: bps}},
				}); err != nil {
					b.Fatal(err)
				}
			}
			r := visit(tb, path)
			tb.waitOfflineReady(version)
			for _, q := range s.requests() {
				r.sent += q.Sent
				if strings.HasSuffix(q.Path, "/app.wasm") {
					r.wasmGets++
				}
			}
			cold = append(cold, r)
			w := visit(tb, path)
			w.edit = editLatency(tb, 15)
			warm = append(warm, w)
			tb.assertClean()
		}
	}
	stat := func(rs []startupRun, f func(startupRun) float64) (best, median float64) {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		sort.Float64s(v)
		return v[0], v[len(v)/2]
	}
	content := func(r startupRun) float64 { return r.content }
	ready := func(r startupRun) float64 { return r.ready }
	cb, cm := stat(cold, content)
	rb, rm := stat(cold, ready)
	wcb, wcm := stat(warm, content)
	wrb, wrm := stat(warm, ready)
	sb, _ := stat(cold, func(r startupRun) float64 { return float64(r.sent) })
	eb, em := stat(warm, func(r startupRun) float64 { return r.edit })
	b.ReportMetric(cb, "ms/content")
	b.ReportMetric(rb, "ms/interactive")
	b.ReportMetric(sb/1e6, "MB/first-visit")
	b.ReportMetric(em, "ms/edit")
	var out strings.Builder
	net := "loopback"
	if mbps > 0 {
		net = fmt.Sprintf("%.1f Mbit/s, 40 ms", mbps)
	}
	fmt.Fprintf(&out, "\nstartup of %s (%s; %d runs: best / median)\n", path, net, len(cold))
	fmt.Fprintf(&out, "first visit:  real content %6.0f / %6.0f ms   interactive %6.0f / %6.0f ms\n", cb, cm, rb, rm)
	fmt.Fprintf(&out, "second visit: real content %6.0f / %6.0f ms   interactive %6.0f / %6.0f ms\n", wcb, wcm, wrb, wrm)
	fmt.Fprintf(&out, "an edit of the micro-batch, to the new estimate drawn: %.0f / %.0f ms (median of 15 per run)\n", eb, em)
	fmt.Fprintf(&out, "first visit transfers %.2f MB in all; app.wasm downloaded %d time(s)\n", sb/1e6, cold[0].wasmGets)
	fmt.Print(out.String())
}
