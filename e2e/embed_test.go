//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestEmbed puts a tool with URL parameters in an <iframe> of a page from
// another origin, as internal documentation would: the tool loads its
// state from the URL, hides the site's header in embed mode, and keeps
// embed=1 in its URL when the state changes.
func TestEmbed(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	q := "model=llama-3.1-8b&gpu=rtx-4090-24gb&method=qlora&seq=4096"
	want := estimateFor(t, q)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	docs := "http://" + ln.Addr().String()
	page := fmt.Sprintf(`<!doctype html><title>Internal docs</title><h1>Our fine-tuning budget</h1>
<iframe id="tool" src="%s/estimate?%s&embed=1" width="1000" height="900"></iframe>`, s.URL, q)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	tb := newTab(t, s)
	tb.do(chromedp.Navigate(docs + "/"))
	var frame []*chromedp.Node
	deadline := time.Now().Add(30 * time.Second)
	for len(frame) == 0 || frame[0].ContentDocument == nil {
		if time.Now().After(deadline) {
			t.Fatal("the iframe never got a document")
		}
		frame, _ = chromedp.Run(tb.ctx, chromedp.Nodes(chromedp.CSS("#tool")))
		time.Sleep(100 * time.Millisecond)
	}
	inFrame := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(tb.ctx, chromedp.Poll[string](expr, chromedp.WithPollingInFrame(frame[0]), chromedp.WithPollingTimeout(60*time.Second)))
		if err != nil {
			t.Fatalf("in the iframe, waiting for %s: %v", expr, err)
		}
		return v
	}
	total := inFrame(`(() => { const c = document.querySelector('#est-table tr[data-bucket="total"] td[data-bytes]');
		return document.body.getAttribute("data-wasm-ready") && c ? c.dataset.bytes : ""; })()`)
	if total != fmt.Sprint(want.TotalBytes) {
		t.Errorf("embedded estimate total = %s, want %d", total, want.TotalBytes)
	}
	if got := inFrame(`document.body.classList.contains("embedded") ? getComputedStyle(document.querySelector(".site-header")).display : ""`); got != "none" {
		t.Errorf("embed mode shows the site header (display %q)", got)
	}
	if got := inFrame(`getComputedStyle(document.querySelector(".privacy")).display`); got == "none" {
		t.Errorf("embed mode hides the privacy line")
	}
	// Change a control inside the frame: the state goes to the frame's URL,
	// embed=1 stays.
	inFrame(`(() => { const e = document.getElementById("est-batch"); if (!e) return "";
		Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(e, "2");
		e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); return "ok"; })()`)
	search := inFrame(`location.search.includes("batch=2") ? location.search : ""`)
	if !strings.Contains(search, "embed=1") {
		t.Errorf("the embedded page lost embed=1 from its URL: %s", search)
	}
	// Links followed inside the frame keep embed mode: the fix ladder's
	// "apply" and the navigation to another tool.
	// The href is read before the click: the app reuses the element for the
	// next state's first fix.
	href := inFrame(`(() => { const a = document.querySelector("#est-fixes a"); if (!a) return ""; const h = a.getAttribute("href"); a.click(); return h; })()`)
	inFrame(fmt.Sprintf(`location.pathname + location.search === %q && document.body.getAttribute("data-wasm-ready") ? "ok" : ""`, href))
	if got := inFrame(`location.search`); !strings.Contains(got, "embed=1") {
		t.Errorf("applying a fix inside the frame lost embed=1: %s", got)
	}
	if got := inFrame(`document.body.classList.contains("embedded") ? "yes" : "no"`); got != "yes" {
		t.Errorf("after applying a fix the frame left embed mode")
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
