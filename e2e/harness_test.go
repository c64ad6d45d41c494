//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"oomscope/static"
)

// browserCtx is the shared Chromium, started once in TestMain.
var browserCtx context.Context

func TestMain(m *testing.M) {
	if os.Getenv("OOMSCOPE_DIST") == "" {
		fmt.Fprintln(os.Stderr, "e2e: OOMSCOPE_DIST is not set: run make e2e (it builds dist/ first)")
		os.Exit(2)
	}
	exe, err := exec.LookPath("chromium")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: chromium not found: sudo apt-get update && sudo apt-get install -y chromium")
		os.Exit(2)
	}
	profile, _ := os.MkdirTemp("", "oomscope-e2e-profile-")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1200, 900),
	)
	// OOMSCOPE_BENCH_JSFLAGS passes V8 flags to Chromium, for diagnosing
	// a benchmark (e.g. --no-liftoff: optimised WebAssembly from the
	// start); the site never depends on them.
	if f := os.Getenv("OOMSCOPE_BENCH_JSFLAGS"); f != "" {
		opts = append(opts, chromedp.Flag("js-flags", f))
	}
	// OOMSCOPE_BENCH_CHROMELOG=FILE writes Chromium's own output there
	// (what those flags print, such as --trace-wasm-compilation-times).
	if f := os.Getenv("OOMSCOPE_BENCH_CHROMELOG"); f != "" {
		if w, err := os.Create(f); err == nil {
			defer w.Close()
			opts = append(opts, chromedp.CombinedOutput(w))
		}
	}
	allocCtx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: starting chromium:", err)
		os.Exit(2)
	}
	browserCtx = ctx
	code := m.Run()
	cancelB()
	cancelA()
	os.RemoveAll(profile)
	os.Exit(code)
}

// distDir is the site built by make dist.
func distDir(t testing.TB) string {
	return os.Getenv("OOMSCOPE_DIST")
}

var buildMu sync.Mutex

// buildVariant builds the site again from dist's wasm binaries with other
// options (a sub-path, another label) into a temporary directory. It runs
// the same generator as make dist, in process.
func buildVariant(t testing.TB, base, label string) (dir, version string) {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "web"), 0o755); err != nil {
		t.Fatal(err)
	}
	wasms, _ := filepath.Glob(filepath.Join(distDir(t), "web", "*.wasm"))
	for _, w := range wasms {
		b, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "web", filepath.Base(w)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	version, err := static.Build(static.Options{Out: dir, Base: base, Label: label})
	if err != nil {
		t.Fatal(err)
	}
	return dir, version
}

// siteVersion reads the version that make dist wrote.
func siteVersion(t testing.TB, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "version.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// serverRequest is one request the test server received.
type serverRequest struct {
	Method, Path, Query string
	BodyBytes           int64
	// Sent counts the response bytes the server wrote (the body as sent,
	// compressed or not, without headers); it is set when the response
	// ends.
	Sent int64
}

// countingWriter counts the body bytes written to a response.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (w *countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n += int64(n)
	return n, err
}

// site is a built site served on 127.0.0.1 by static.Server.
type site struct {
	URL    string // origin + prefix, without trailing slash
	Origin string
	ln     net.Listener
	srv    *http.Server

	mu    sync.Mutex
	h     *static.Server
	reqs  []serverRequest
	holds map[string]chan struct{} // paths whose requests wait (hold)
}

// serveSite serves dir under prefix ("" or "/sub") with the given
// Cache-Control, until the test ends or s.close is called.
func serveSite(t testing.TB, dir, prefix, cacheControl string) *site {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &site{Origin: "http://" + ln.Addr().String(), ln: ln}
	s.URL = s.Origin + prefix
	s.h = &static.Server{Dir: dir, Prefix: prefix, CacheControl: cacheControl}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := ioCount(r)
		s.mu.Lock()
		s.reqs = append(s.reqs, serverRequest{r.Method, r.URL.Path, r.URL.RawQuery, n, 0})
		i := len(s.reqs) - 1
		h, wait := s.h, s.holds[r.URL.Path]
		s.mu.Unlock()
		if wait != nil {
			select {
			case <-wait:
			case <-r.Context().Done():
				return
			}
		}
		cw := &countingWriter{ResponseWriter: w}
		h.ServeHTTP(cw, r)
		s.mu.Lock()
		s.reqs[i].Sent = cw.n
		s.mu.Unlock()
	})}
	go s.srv.Serve(ln)
	t.Cleanup(s.close)
	return s
}

// hold makes requests for path wait until release is called: a download
// that has not arrived yet.
func (s *site) hold(path string) (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	if s.holds == nil {
		s.holds = map[string]chan struct{}{}
	}
	s.holds[path] = ch
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.holds, path)
			s.mu.Unlock()
			close(ch)
		})
	}
}

// swap makes the server serve another directory from now on (a new deploy).
func (s *site) swap(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h = &static.Server{Dir: dir, Prefix: s.h.Prefix, CacheControl: s.h.CacheControl}
}

// close stops the server: the site is offline from now on.
func (s *site) close() { s.srv.Close() }

// requests returns a copy of what the server received so far.
func (s *site) requests() []serverRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]serverRequest(nil), s.reqs...)
}

func ioCount(r *http.Request) (int64, error) {
	var n int64
	buf := make([]byte, 32<<10)
	for {
		k, err := r.Body.Read(buf)
		n += int64(k)
		if err != nil {
			return n, nil
		}
	}
}

// pageRequest is one request a browser target sent.
type pageRequest struct {
	URL, Method string
	PostData    bool
	Target      string
}

// recorder collects what a browser target says: console, exceptions,
// failed loads and requests.
type recorder struct {
	name     string
	title    string // the target's title (a dedicated worker's name, if it has one)
	mu       sync.Mutex
	console  []string
	problems []string
	requests []pageRequest
}

// benign console lines that are not errors of ours.
var benign = []string{
	"Banner not shown", // go-app's app.js intercepts the install prompt
	missingPage,        // the 404 status of a page tests open on purpose
}

// missingPage is a path the site does not have, opened on purpose.
const missingPage = "/no/such/page"

func (r *recorder) listen(ev any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e := ev.(type) {
	case *cdpruntime.EventConsoleAPICalled:
		var parts []string
		for _, a := range e.Args {
			var s string
			if json.Unmarshal(a.Value, &s) == nil {
				parts = append(parts, s)
			} else if len(a.Value) > 0 {
				parts = append(parts, string(a.Value))
			} else {
				parts = append(parts, a.Description)
			}
		}
		line := string(e.Type) + ": " + strings.Join(parts, " ")
		r.console = append(r.console, line)
		text := strings.Join(parts, " ")
		if e.Type == cdpruntime.ConsoleAPICalledTypeError || strings.HasPrefix(text, "panic:") || strings.HasPrefix(text, "exit code:") || strings.Contains(text, "fatal error:") {
			r.problems = append(r.problems, line)
		}
	case *cdpruntime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		r.problems = append(r.problems, "exception: "+msg)
	case *cdplog.EventEntryAdded:
		if e.Entry.Level == cdplog.EntryLevelError {
			r.problems = append(r.problems, "log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		r.requests = append(r.requests, pageRequest{e.Request.URL, e.Request.Method, e.Request.HasPostData || len(e.Request.PostDataEntries) > 0, r.name})
	}
}

func (r *recorder) snapshot() (problems []string, reqs []pageRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.problems {
		ok := false
		for _, b := range benign {
			ok = ok || strings.Contains(p, b)
		}
		if !ok {
			problems = append(problems, p)
		}
	}
	return problems, append([]pageRequest(nil), r.requests...)
}

// tab is one page in its own browser context (own cache, storage and
// service workers).
type tab struct {
	t   testing.TB
	ctx context.Context
	rec *recorder
	s   *site
	// kids records the workers and frames the page starts (targets_test.go).
	kids *children
	// errorsExpected is set by tests that show an error on purpose (and
	// check its text themselves): the error-banner check is then off.
	errorsExpected bool
}

// newTab opens an isolated tab on the shared browser.
func newTab(t testing.TB, s *site) *tab {
	t.Helper()
	return openTab(t, s, chromedp.WithNewBrowserContext())
}

// newProfileTab opens a tab in the browser's own profile (on disk, as a
// user's; newTab's are in memory, as an incognito window's). Its caches
// are shared by every such tab: each test that uses it serves its own site
// (a new origin).
func newProfileTab(t testing.TB, s *site) *tab {
	t.Helper()
	return openTab(t, s)
}

// openTab opens a tab on the shared browser with the given options.
func openTab(t testing.TB, s *site, opts ...chromedp.ContextOption) *tab {
	t.Helper()
	rec := &recorder{name: "page"}
	ctx, cancel := chromedp.NewContext(browserCtx, append(opts, chromedp.WithListener(rec.listen))...)
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelT(); cancel() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	if c := chromedp.FromContext(ctx); c.BrowserContextID == "" {
		// The profile's own context: named, as the others, for the
		// tests that tell a tab's workers by it (analysisWorker).
		info, err := chromedp.Call(ctx, target.GetTargetInfo, target.GetTargetInfoParams{})
		if err != nil {
			t.Fatal(err)
		}
		c.BrowserContextID = info.TargetInfo.BrowserContextID
	}
	tb := &tab{t: t, ctx: ctx, rec: rec, s: s, kids: &children{}}
	if err := tb.watchChildren(ctx); err != nil {
		t.Fatal(err)
	}
	return tb
}

// sibling opens another tab in tb's browser context: the same profile
// (HTTP cache, service worker, code cache), as a user's next visit in a
// new tab.
func (tb *tab) sibling() *tab {
	tb.t.Helper()
	return openTab(tb.t, tb.s, chromedp.WithExistingBrowserContext(chromedp.FromContext(tb.ctx).BrowserContextID))
}

// do runs actions and fails the test on error.
func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	if err := chromedp.Do(tb.ctx, steps...); err != nil {
		tb.t.Fatal(err)
	}
}

// evalJS evaluates a JS expression (awaiting promises) and returns its value.
func evalJS[T any](tb *tab, expr string) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// poll waits until a JS expression is truthy (awaiting a promise) and
// returns its value. It evaluates the expression afresh every 50 ms, so it
// keeps working across a page load (chromedp.Poll loses its execution
// context when the page navigates by itself).
func poll[T any](tb *tab, expr string, timeout time.Duration) T {
	tb.t.Helper()
	wrapped := `Promise.resolve((() => (` + expr + `))()).then(v => v ? JSON.stringify({v: v}) : "")`
	deadline := time.Now().Add(timeout)
	var last error
	for {
		s, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](wrapped, chromedp.EvalAwaitPromise))
		if err == nil && s != "" {
			var out struct{ V T }
			if err := json.Unmarshal([]byte(s), &out); err != nil {
				tb.t.Fatalf("poll %s: %v", expr, err)
			}
			return out.V
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) || tb.ctx.Err() != nil {
			problems, _ := tb.rec.snapshot()
			tb.t.Fatalf("waiting for %s: timeout (last error %v; page problems: %q)", expr, last, problems)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// open navigates to path (relative to the site's URL), waits until the page
// is ready (waitReady) and checks that it shows no error banner.
func (tb *tab) open(path string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(tb.s.URL + path))
	tb.waitReady()
	tb.assertNoErrorBanner("after loading " + path)
}

// readyJS is true once a page is ready for a test: the wasm app mounted
// (data-wasm-ready on <body>), or, on a static page (data-static-page: the
// guides, 404), the document loaded and app.js removed its loader without
// loading the wasm.
const readyJS = `!!document.body && document.readyState === "complete" && !document.getElementById("app-wasm-loader") &&
	(document.body.hasAttribute("data-wasm-ready") || !!document.querySelector("[data-static-page]"))`

// waitReady waits until the page is ready after a navigation or reload.
func (tb *tab) waitReady() {
	tb.t.Helper()
	poll[bool](tb, readyJS, 60*time.Second)
}

// clickAndWaitReload clicks an element that reloads or navigates the page
// by a full load, and waits for the new page to be ready.
func (tb *tab) clickAndWaitReload(sel string) {
	tb.t.Helper()
	before := evalJS[float64](tb, `performance.timeOrigin`)
	tb.click(sel)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](fmt.Sprintf(`performance.timeOrigin !== %v && (%s)`, before, readyJS)))
		if err == nil && v {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.t.Fatalf("clicking %s did not load a new page", sel)
}

// errorBannerJS returns the text of the first error banner shown on the
// page: a visible element with role="alert" or class error-banner that
// has text ("" when there is none).
const errorBannerJS = `(() => {
	for (const e of document.querySelectorAll('[role="alert"], .error-banner')) {
		const text = e.textContent.trim();
		if (text && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden") {
			return (e.id ? "#" + e.id + ": " : "") + text;
		}
	}
	return "";
})()`

// assertNoErrorBanner fails the test when the page shows an error banner,
// unless the test declared with expectErrors that it shows errors on
// purpose. open and assertClean call it, so every page check does.
func (tb *tab) assertNoErrorBanner(where string) {
	tb.t.Helper()
	if tb.errorsExpected {
		return
	}
	if msg := evalJS[string](tb, errorBannerJS); msg != "" {
		tb.t.Errorf("%s: the page shows an error: %s", where, msg)
	}
}

// expectErrors turns the error-banner check off for a test that makes the
// page show errors on purpose and checks their text itself.
func (tb *tab) expectErrors() { tb.errorsExpected = true }

// click clicks the first element matching a CSS selector.
func (tb *tab) click(sel string) {
	tb.t.Helper()
	tb.do(chromedp.Click(chromedp.CSS(sel)))
}

// text returns the text of the first element matching a CSS selector.
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		tb.t.Fatalf("text of %s: %v", sel, err)
	}
	return v
}

// waitText waits until the element's text contains substr and returns it.
func (tb *tab) waitText(sel, substr string) string {
	tb.t.Helper()
	return poll[string](tb, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e && e.textContent.includes(%q) ? e.textContent : ""; })()`, sel, substr), 30*time.Second)
}

// setValue sets an input's, select's or textarea's value as a user would,
// firing input and change events.
func (tb *tab) setValue(sel, value string) {
	tb.t.Helper()
	ok := evalJS[bool](tb, fmt.Sprintf(`(() => {
		const e = document.querySelector(%q);
		if (!e) return false;
		const proto = Object.getPrototypeOf(e);
		const setter = Object.getOwnPropertyDescriptor(proto, "value").set;
		setter.call(e, %q);
		e.dispatchEvent(new Event("input", {bubbles: true}));
		e.dispatchEvent(new Event("change", {bubbles: true}));
		return true;
	})()`, sel, value))
	if !ok {
		tb.t.Fatalf("setValue: no element %s", sel)
	}
}

// uploadFile sets the files of an <input type=file>.
func (tb *tab) uploadFile(sel, path string) {
	tb.t.Helper()
	abs, _ := filepath.Abs(path)
	tb.do(chromedp.SetUploadFiles(chromedp.CSS(sel), []string{abs}))
}

// dropFile drags a real file from disk onto the element matching sel, as a
// user would (trusted drag events).
func (tb *tab) dropFile(sel, path string) {
	tb.t.Helper()
	abs, _ := filepath.Abs(path)
	box := evalJS[map[string]float64](tb, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return {x: r.x + r.width/2, y: r.y + r.height/2}; })()`, sel))
	data := &input.DragData{Items: []*input.DragDataItem{}, Files: []string{abs}, DragOperationsMask: 1}
	for _, typ := range []input.DispatchDragEventType{input.DispatchDragEventTypeDragEnter, input.DispatchDragEventTypeDragOver, input.DispatchDragEventTypeDrop} {
		_, err := chromedp.Call(tb.ctx, input.DispatchDragEvent, input.DispatchDragEventParams{Type: typ, X: box["x"], Y: box["y"], Data: data})
		if err != nil {
			tb.t.Fatalf("drag %s: %v", typ, err)
		}
	}
}

// screenshot writes e2e/out/<name>.png.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	png, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	os.MkdirAll("out", 0o755)
	if err := os.WriteFile(filepath.Join("out", name+".png"), png, 0o644); err != nil {
		tb.t.Error(err)
	}
}

// setViewport resizes the page, e.g. 375×800 for a phone.
func (tb *tab) setViewport(w, h int64) {
	tb.t.Helper()
	tb.do(chromedp.EmulateViewport(w, h))
}

// setColorScheme makes the page see the system's colour scheme as "light"
// or "dark" (prefers-color-scheme), as a user's system setting would.
func (tb *tab) setColorScheme(scheme string) {
	tb.t.Helper()
	_, err := chromedp.Call(tb.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	})
	if err != nil {
		tb.t.Fatal(err)
	}
}

// assertClean fails the test on console errors, exceptions and Go panics
// seen so far in the page and its service workers, and on an error banner
// shown now.
func (tb *tab) assertClean() {
	tb.t.Helper()
	tb.assertNoErrorBanner("at the end of the test")
	problems, _ := tb.rec.snapshot()
	for _, r := range tb.children() {
		p, _ := r.snapshot()
		problems = append(problems, p...)
	}
	for _, p := range problems {
		tb.t.Errorf("browser problem: %s", p)
	}
}

// waitOfflineReady waits until the service worker controls the page and its
// cache for version holds every file of the site.
func (tb *tab) waitOfflineReady(version string) {
	tb.t.Helper()
	poll[bool](tb, fmt.Sprintf(`(async () => {
		const reg = await navigator.serviceWorker.ready;
		if (!navigator.serviceWorker.controller) return false;
		const c = await caches.open("app-" + %q);
		const keys = (await c.keys()).map(r => new URL(r.url).pathname);
		return keys.some(k => k.endsWith("/web/app.wasm")) && keys.some(k => k.endsWith("/estimate"));
	})()`, version), 60*time.Second)
}

// goOffline closes the server and tells the browser it is offline.
func (tb *tab) goOffline() {
	tb.t.Helper()
	tb.s.close()
	if _, err := chromedp.Call(tb.ctx, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}); err != nil {
		tb.t.Fatal(err)
	}
}

// assertLocalOnly fails on any request (page, its workers, service workers
// and frames from their start, server) to another host, any method but GET,
// and any request that carries data.
func assertLocalOnly(t testing.TB, tb *tab, s *site) {
	t.Helper()
	for _, v := range localOnlyViolations(tb, s) {
		t.Error(v)
	}
}

// localOnlyViolations lists what assertLocalOnly fails on.
func localOnlyViolations(tb *tab, s *site) []string {
	var out []string
	_, reqs := tb.rec.snapshot()
	for _, r := range tb.children() {
		_, q := r.snapshot()
		reqs = append(reqs, q...)
	}
	if len(reqs) == 0 {
		out = append(out, "no request was recorded: the recorder is not working")
	}
	for _, r := range reqs {
		local := strings.HasPrefix(r.URL, s.Origin+"/") || strings.HasPrefix(r.URL, "data:") || strings.HasPrefix(r.URL, "blob:")
		if !local {
			out = append(out, fmt.Sprintf("%s request to another host: %s %s", r.Target, r.Method, r.URL))
		}
		if r.Method != "GET" || r.PostData {
			out = append(out, fmt.Sprintf("%s request sends data: %s %s (post data %v)", r.Target, r.Method, r.URL, r.PostData))
		}
	}
	for _, r := range s.requests() {
		if r.Method != "GET" || r.BodyBytes != 0 {
			out = append(out, fmt.Sprintf("server got %s %s with %d body bytes", r.Method, r.Path, r.BodyBytes))
		}
	}
	return out
}
