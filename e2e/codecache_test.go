//go:build e2e

package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestWorkerCodeCache checks that a returning user's analysis worker gets
// the WebAssembly code the browser optimised on an earlier visit, from
// Chrome's code cache, rather than compiling snapworker.wasm again from the
// baseline compiler. Chrome keeps that code with the response the module
// was compiled from: on a first visit the worker starts before the service
// worker, compiles from the network and leaves its code with the HTTP
// cache; the second visit, answered from the service worker's cache (Cache
// Storage), compiles again and leaves its code there; the third finds it
// (trace event v8.wasm.moduleCacheHit). It fails if the service worker
// stops answering the file from its cache, or answers it in a way Chrome
// does not cache code for.
func TestWorkerCodeCache(t *testing.T) {
	dir := distDir(t)
	version := siteVersion(t, dir)
	// A browser context of its own, kept by Chrome in memory, caches code
	// as the profile does; in the profile, the workers of other tests' tabs
	// were asked for the analysis worker too (one kept the test waiting
	// for 3 minutes).
	tb := newTab(t, serveSite(t, dir, "", "no-store"))
	tb = firstVisit(t, tb, version)
	tb = firstVisit(t, tb, version)
	caching := wasmCaching(t, tb)
	tb.open("/snapshot")
	// The Go program runs (its warm-up has started): the module is compiled.
	deadline := time.Now().Add(time.Minute)
	for workerWarm(t, tb) == "undefined" {
		if time.Now().After(deadline) {
			t.Fatal("the analysis worker did not start its warm-up within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
	evs := caching()
	if !slices.ContainsFunc(evs, func(e string) bool { return strings.HasPrefix(e, "v8.wasm.moduleCacheHit /web/snapworker.wasm ") }) {
		t.Errorf("third visit: snapworker.wasm did not come from the code cache; WebAssembly code-cache events %q", evs)
	}
	tb.assertNoErrorBanner("third visit")
	tb.assertClean()
}
