//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	ui "oomscope/app"
	"oomscope/content"
	"oomscope/estimator"
)

// TestContentFirst: the page is there before the WebAssembly app. While
// app.wasm is still downloading, the estimator shows its form with the
// URL's settings, the results dimmed, and a small progress badge instead of
// a curtain; once the app runs, it computes the URL's settings.
func TestContentFirst(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	release := s.hold("/web/app.wasm")
	defer release()
	tb := newTab(t, s)
	tb.setViewport(375, 800)
	q := "model=gpt2&method=lora&optimizer=adamw-8bit&ckpt=full&gpu=rtx-4090-24gb"
	tb.do(chromedp.Navigate(s.URL + "/estimate?" + q))
	poll[bool](tb, `performance.getEntriesByName("first-contentful-paint").length > 0 && !!document.querySelector("main h1") && document.readyState !== "loading"`, 20*time.Second)
	if evalJS[bool](tb, `document.body.hasAttribute("data-wasm-ready")`) {
		t.Fatal("the app ran although app.wasm is held back")
	}
	if h := tb.text("main h1"); !strings.Contains(h, "Estimate") {
		t.Errorf("before the app, the heading is %q", h)
	}
	// The loader is a badge: present, small, not covering the page.
	badge := evalJS[map[string]float64](tb, `(() => { const r = document.getElementById("app-wasm-loader").getBoundingClientRect();
		return {area: r.width * r.height / (innerWidth * innerHeight)}; })()`)
	if badge["area"] > 0.1 {
		t.Errorf("the loading badge covers %.0f%% of the screen", 100*badge["area"])
	}
	if lbl := tb.text("#app-wasm-loader-label"); !strings.Contains(lbl, "Loading") {
		t.Errorf("badge label %q", lbl)
	}
	// Each select has one selected option at most: no selected="false".
	if n := evalJS[int](tb, `[...document.querySelectorAll("select")].filter(s => s.querySelectorAll("option[selected]").length > 1).length`); n != 0 {
		t.Errorf("%d selects have several options marked selected", n)
	}
	for _, kv := range strings.Split(q, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if got := evalJS[string](tb, fmt.Sprintf(`(() => { const e = document.getElementById("est-%s"); return e ? e.value : "(none)"; })()`, k)); got != v {
			t.Errorf("before the app, the %s control shows %q, want the URL's %q", k, got, v)
		}
	}
	if op := evalJS[float64](tb, `+getComputedStyle(document.getElementById("est-results")).opacity`); op > 0.5 {
		t.Errorf("before the app, the default results are not dimmed (opacity %v)", op)
	}
	tb.screenshot("content-first-before-wasm")

	release()
	tb.waitReady()
	want := estimateOf(t, mustQuery(t, q))
	if got := poll[string](tb, totalBytesJS, 10*time.Second); got != fmt.Sprint(want.TotalBytes) {
		t.Errorf("after the app mounted, total = %s, want %d", got, want.TotalBytes)
	}
	if evalJS[bool](tb, `document.documentElement.classList.contains("state-pending")`) {
		t.Errorf("results still marked pending after the app mounted")
	}
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// TestWithoutScripts reads every page with JavaScript off, as a crawler or
// a reader with scripts blocked would: the prerendered HTML is the page,
// with the controls showing the default settings correctly, and every
// guide complete.
func TestWithoutScripts(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	if _, err := chromedp.Call(tb.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	def := estimator.DefaultRequest()
	tb.do(chromedp.Navigate(s.URL + "/estimate"))
	for _, k := range []string{"model", "gpu", "mode", "method", "dtype", "optimizer", "ckpt", "attn"} {
		want := def.Get(k)
		if got := evalJS[string](tb, fmt.Sprintf(`document.getElementById("est-%s").value`, k)); got != want {
			t.Errorf("without scripts the %s control shows %q, want the default %q", k, got, want)
		}
	}
	for _, k := range []string{"master", "autocast"} {
		want := def.Get(k) == "true"
		if got := evalJS[bool](tb, fmt.Sprintf(`(() => { const e = document.getElementById("est-%s"); return e ? e.checked : %v; })()`, k, want)); got != want {
			t.Errorf("without scripts the %s checkbox is %v, want %v", k, got, want)
		}
	}
	for _, g := range content.Guides() {
		tb.do(chromedp.Navigate(s.URL + ui.GuidesPath + "/" + g.Slug))
		body := tb.text(".guide-body")
		if !strings.Contains(strings.Join(strings.Fields(body), " "), g.Summary) {
			t.Errorf("without scripts, guide %s does not show its text", g.Slug)
		}
	}
	tb.do(chromedp.Navigate(s.URL + "/triage"))
	if h := tb.text("main h1"); h != "Triage" {
		t.Errorf("without scripts, /triage heading %q", h)
	}
}

// TestStaticPagesSkipWasm: the guides and the 404 page never load the
// WebAssembly app, and their links to tools work.
func TestStaticPagesSkipWasm(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open(ui.GuidesPath + "/measure")
	if n := evalJS[int](tb, `performance.getEntriesByType("resource").filter(e => e.name.endsWith(".wasm")).length`); n != 0 {
		t.Errorf("a guide page loaded %d wasm files", n)
	}
	// The 404 page: a designed page with the 404 status, without the app.
	tb.open(missingPage)
	if got := evalJS[int](tb, `performance.getEntriesByType("navigation")[0].responseStatus`); got != 404 {
		t.Errorf("an unknown path answers %d, want 404", got)
	}
	if got := tb.text("#nf-path"); got != missingPage {
		t.Errorf("the 404 page names the path %q, want %q", got, missingPage)
	}
	if n := evalJS[int](tb, `performance.getEntriesByType("resource").filter(e => e.name.endsWith(".wasm")).length`); n != 0 {
		t.Errorf("the 404 page loaded %d wasm files", n)
	}
	// The guide search works in the page, without the app: the index is a
	// file the generator wrote.
	tb.open(ui.GuidesPath)
	tb.setValue("#guide-q", "nccl buffers")
	got := poll[string](tb, `(() => { const a = document.querySelector("#guide-results a"); return a ? a.getAttribute("href") : ""; })()`, 10*time.Second)
	if !strings.HasPrefix(got, "/guides/multi-gpu") {
		t.Errorf("searching the guides for NCCL buffers gives %q first, want the multi-GPU guide", got)
	}
	if status := tb.text("#guide-search-status"); !strings.Contains(status, "match") {
		t.Errorf("search status %q", status)
	}
	tb.setValue("#guide-q", "zzyzx")
	tb.waitText("#guide-search-status", "No guide mentions zzyzx")

	// Code blocks have a working Copy button.
	tb.open(ui.GuidesPath + "/measure")
	tb.click(".guide-body .copy-code")
	if got := poll[string](tb, `document.querySelector(".guide-body .copy-code").textContent === "Copy" ? "" : document.querySelector(".guide-body .copy-code").textContent`, 5*time.Second); got != "Copied" {
		t.Errorf("the Copy button says %q after a click", got)
	}
	tb.clickAndWaitReload(`.guide-body a[href^="/estimate"]`)
	if !evalJS[bool](tb, `location.pathname === "/estimate" && document.body.hasAttribute("data-wasm-ready")`) {
		t.Errorf("the guide's link did not open the estimator")
	}
	// From a tool (the app routes client-side), a link to a guide is a full
	// load of the static page, not the app's "not found".
	tb.clickAndWaitReload(`header nav a[href="/guides"]`)
	if !evalJS[bool](tb, `location.pathname === "/guides" && !!document.querySelector("[data-static-page]") && !!document.getElementById("guide-list")`) {
		t.Errorf("following the Guides link from a tool did not load the guide list")
	}
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}
