//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"oomscope/estimator"
)

// docsSite serves one HTML page from another origin, as internal
// documentation that embeds OOMScope would; body is set per test.
func docsSite(t *testing.T, body func() string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, `<!doctype html><html lang="en"><title>Internal docs</title><h1>Our fine-tuning budget</h1>`+body())
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// inFrame polls a JS expression inside the iframe #sel until it returns a
// non-empty string. The frame is looked up again on every try, so the
// expression also works after the frame navigated.
func inFrame(tb *tab, sel, expr string) string {
	tb.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		nodes, err := chromedp.Run(tb.ctx, chromedp.Nodes(chromedp.CSS(sel)))
		if err == nil && len(nodes) > 0 && nodes[0].ContentDocument != nil {
			v, err := chromedp.Run(tb.ctx, chromedp.Poll[string](expr, chromedp.WithPollingInFrame(nodes[0]), chromedp.WithPollingTimeout(2*time.Second)))
			if err == nil && v != "" {
				return v
			}
			last = err
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.t.Fatalf("in the iframe %s, waiting for %s: %v", sel, expr, last)
	return ""
}

// frameReady is readyJS inside a frame, as a string for inFrame.
var frameReady = `(` + readyJS + `) ? "ready" : ""`

// TestEmbed puts the tools, with URL parameters and the tracking
// parameters that shared links carry, in <iframe>s of a page from another
// origin, as internal documentation would. The estimator's iframe is the
// snippet its "Embed this page" button copies.
func TestEmbed(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	q := "model=llama-3.1-8b&gpu=rtx-4090-24gb&method=qlora&seq=4096"
	want := estimateOf(t, mustQuery(t, q))

	// The "Embed this page" button gives the snippet for the current state.
	// Tracking parameters on a shared link are never an error (open checks
	// that no error banner is shown), nor part of the embed code.
	tb := newTab(t, s)
	tb.open("/estimate?" + q + "&utm_source=newsletter&fbclid=IwAR0x")
	tb.click("#embed-this")
	snippet := poll[string](tb, `document.getElementById("embed-code").value`, 10*time.Second)
	if !evalJS[bool](tb, `!document.getElementById("embed-panel").hidden`) {
		t.Errorf("the embed code is not shown after clicking Embed this page")
	}
	src := regexpSubmatch(t, `<iframe src="([^"]+)"`, snippet)
	u, err := url.Parse(strings.ReplaceAll(src, "&amp;", "&"))
	if err != nil {
		t.Fatal(err)
	}
	if u.Query().Get("embed") != "1" || u.Query().Get("method") != "qlora" || u.Query().Get("seq") != "4096" || u.Path != "/estimate" || u.Query().Has("utm_source") {
		t.Fatalf("embed snippet %s does not hold the page's state with embed=1", snippet)
	}
	// Shared links pick up tracking parameters: none of them is an error.
	snippet = strings.Replace(snippet, "embed=1", "embed=1&amp;utm_source=newsletter&amp;fbclid=IwAR0x&amp;ref=docs", 1)
	snippet = strings.Replace(snippet, `<iframe `, `<iframe id="est" `, 1)

	// config= without model= means the custom model, not the default one.
	config := `{"model_type":"gpt2","n_embd":768,"n_layer":12,"n_head":12,"vocab_size":50257,"n_positions":1024}`
	cq := url.Values{"config": {config}, "batch": {"4"}}
	cwant := estimateOf(t, cq)
	frames := snippet +
		fmt.Sprintf(`<iframe id="cfg" title="custom" src="%s/estimate?%s&embed=1&utm_campaign=q3&gclid=x" width="400" height="700"></iframe>`, s.URL, cq.Encode()) +
		fmt.Sprintf(`<iframe id="tri" title="triage" src="%s/triage?example=frag&embed=1&utm_medium=email" width="900" height="700"></iframe>`, s.URL) +
		fmt.Sprintf(`<iframe id="snap" title="snapshot" src="%s/snapshot?embed=1&ref=wiki" width="900" height="600"></iframe>`, s.URL) +
		fmt.Sprintf(`<iframe id="guide" title="guide" src="%s/guides/read-the-message?embed=1&utm_source=x" width="900" height="600"></iframe>`, s.URL)
	docs := docsSite(t, func() string { return frames })
	tb.do(chromedp.Navigate(docs + "/"))

	for _, f := range []string{"#est", "#cfg", "#tri", "#snap", "#guide"} {
		inFrame(tb, f, frameReady)
		if msg := inFrame(tb, f, `(() => { const m = `+errorBannerJS+`; return m === "" ? "none" : m; })()`); msg != "none" {
			t.Errorf("%s: the embedded page shows an error: %s", f, msg)
		}
		if got := inFrame(tb, f, `document.documentElement.classList.contains("embedded") ? getComputedStyle(document.querySelector(".site-header")).display : "not embedded"`); got != "none" {
			t.Errorf("%s: embed mode shows the site header (display %q)", f, got)
		}
		if got := inFrame(tb, f, `getComputedStyle(document.querySelector(".privacy")).display`); got == "none" {
			t.Errorf("%s: embed mode hides the privacy line", f)
		}
		// A small link opens the same state as a full page.
		full := inFrame(tb, f, `(() => { const a = document.getElementById("open-full"); if (!a || !a.getClientRects().length) return "";
			a.focus(); return a.href; })()`)
		if strings.Contains(full, "embed=") || strings.Contains(full, "utm_") || !strings.HasPrefix(full, s.URL+"/") {
			t.Errorf("%s: the open-full-page link is %s", f, full)
		}
		// Assets and workers never carry embed=1.
		if bad := inFrame(tb, f, `JSON.stringify(performance.getEntriesByType("resource").map(e => e.name).filter(n => n.includes("embed=")))`); bad != "[]" {
			t.Errorf("%s: assets requested with embed=1: %s", f, bad)
		}
	}

	// The verdict comes first in the frame: above the form, or beside it.
	if got := inFrame(tb, "#est", `(() => { const a = document.getElementById("est-answer"), f = document.querySelector(".estimate-form");
		return a && f ? String(a.getBoundingClientRect().top <= f.getBoundingClientRect().top) : ""; })()`); got != "true" {
		t.Errorf("embedded, the estimator's verdict is not above its form")
	}
	total := inFrame(tb, "#est", totalBytesJS)
	if total != fmt.Sprint(want.TotalBytes) {
		t.Errorf("embedded estimate total = %s, want %d", total, want.TotalBytes)
	}
	// In a narrow frame (one column) too.
	if got := inFrame(tb, "#cfg", `(() => { const a = document.getElementById("est-answer"), f = document.querySelector(".estimate-form");
		return a && f ? String(a.getBoundingClientRect().bottom <= f.getBoundingClientRect().top) : ""; })()`); got != "true" {
		t.Errorf("embedded in a narrow frame, the estimator's verdict is not above its form")
	}
	if got := inFrame(tb, "#cfg", `document.getElementById("est-model").value`); got != estimator.ModelCustom {
		t.Errorf("config= without model= shows model %q, want %q", got, estimator.ModelCustom)
	}
	ctotal := inFrame(tb, "#cfg", totalBytesJS)
	if ctotal != fmt.Sprint(cwant.TotalBytes) {
		t.Errorf("embedded custom-config total = %s, want %d", ctotal, cwant.TotalBytes)
	}

	// Change a control inside the frame: the state goes to the frame's URL,
	// embed=1 stays, the tracking parameters go.
	inFrame(tb, "#est", `(() => { const e = document.getElementById("est-batch"); if (!e) return "";
		Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(e, "2");
		e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); return "ok"; })()`)
	search := inFrame(tb, "#est", `location.search.includes("batch=2") ? location.search : ""`)
	if !strings.Contains(search, "embed=1") || strings.Contains(search, "utm_") {
		t.Errorf("after an edit the embedded page's URL is %s: want embed=1 kept, tracking dropped", search)
	}
	// Links followed inside the frame stay embedded: the fix ladder's
	// "apply", and a guide's link to a tool (a static page, without the app).
	href := inFrame(tb, "#est", `(() => { const a = document.querySelector("#est-fixes a"); if (!a) return ""; const h = a.getAttribute("href"); a.click(); return h; })()`)
	inFrame(tb, "#est", fmt.Sprintf(`location.pathname + location.search === %q && (%s) ? "ok" : ""`, href, readyJS))
	if got := inFrame(tb, "#est", `location.search`); !strings.Contains(got, "embed=1") {
		t.Errorf("applying a fix inside the frame lost embed=1: %s", got)
	}
	inFrame(tb, "#guide", `(() => { const a = document.querySelector('.guide-body a[href^="/triage"]'); if (!a) return ""; a.click(); return "ok"; })()`)
	if got := inFrame(tb, "#guide", `location.pathname === "/triage" && (`+readyJS+`) ? location.search : ""`); !strings.Contains(got, "embed=1") {
		t.Errorf("a guide's link followed inside the frame lost embed=1: %q", got)
	}
	if got := inFrame(tb, "#guide", `document.documentElement.classList.contains("embedded") ? "yes" : "no"`); got != "yes" {
		t.Errorf("after following a link the frame left embed mode")
	}
	tb.screenshot("embed-docs-page")
	tb.assertClean()
	_, reqs := tb.rec.snapshot()
	for _, r := range reqs {
		if !strings.HasPrefix(r.URL, s.Origin+"/") && !strings.HasPrefix(r.URL, docs+"/") && !strings.HasPrefix(r.URL, "data:") && !strings.HasPrefix(r.URL, "blob:") {
			t.Errorf("request to another host: %s %s", r.Method, r.URL)
		}
		if r.Method != "GET" || r.PostData {
			t.Errorf("request sends data: %s %s", r.Method, r.URL)
		}
	}
}

func mustQuery(t *testing.T, q string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
