//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

// benchInput is one file of BenchmarkBrowserSnapshot.
type benchInput struct {
	name, path      string
	entries, stacks int
	bytes           int64
}

// benchInputs generates the benchmark files under dir: both families
// (gen.WriteFamily: repeated and distinct stacks) at each size in MiB of
// OOMSCOPE_BENCH_MB (default 10,55,200,1024), then the real snapshots of
// ../shared/snapshots. OOMSCOPE_BENCH_FAMILIES=real or distinct keeps one
// family; OOMSCOPE_BENCH_FILES=a.pickle,b.pickle replaces all of it.
func benchInputs(b *testing.B, dir string) []benchInput {
	var ins []benchInput
	if v := os.Getenv("OOMSCOPE_BENCH_FILES"); v != "" {
		for _, p := range strings.Split(v, ",") {
			ins = append(ins, benchInput{name: filepath.Base(p), path: p})
		}
		return ins
	}
	sizes := []int64{10, 55, 200, 1024}
	if v := os.Getenv("OOMSCOPE_BENCH_MB"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			mb, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil || mb <= 0 {
				b.Fatalf("OOMSCOPE_BENCH_MB=%q: want sizes in MiB such as 10,55,200,1024", v)
			}
			sizes = append(sizes, mb)
		}
	}
	fams := []gen.Family{gen.RealStacks, gen.DistinctStacks}
	if v := os.Getenv("OOMSCOPE_BENCH_FAMILIES"); v != "" {
		fams = []gen.Family{gen.Family(v)}
	}
	for _, mb := range sizes {
		for _, fam := range fams {
			name := fmt.Sprintf("%s-%dMiB", fam, mb)
			path := filepath.Join(dir, name+".pickle")
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			info, err := gen.WriteFamily(f, gen.FamilyOptions{Family: fam, TargetBytes: mb << 20})
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				b.Fatal(err)
			}
			ins = append(ins, benchInput{name: name, path: path, entries: info.Entries, bytes: info.Bytes})
		}
	}
	reals, _ := filepath.Glob(filepath.Join(realSnapshotDir(), "*.pickle"))
	for _, p := range reals {
		ins = append(ins, benchInput{name: strings.TrimSuffix(filepath.Base(p), ".pickle"), path: p})
	}
	return ins
}

// describe decodes a benchmark file natively for its entries, distinct
// stacks and the peak the page must show.
func (in *benchInput) describe(b *testing.B) {
	f, err := os.Open(in.path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	in.bytes = st.Size()
	s, err := snapshot.Decode(f, st.Size(), &snapshot.Options{Summarize: analysis.Summarizer(), Source: f})
	if err != nil {
		b.Fatal(err)
	}
	in.entries = 0
	for _, tr := range s.DeviceTraces {
		in.entries += tr.Len()
	}
	in.stacks = s.Stacks.Len()
}

// BenchmarkBrowserSnapshot hands each benchmark file (benchInputs) to the
// snapshot page in Chromium and prints, per file: its entries and distinct
// stacks, drop → summary (the headline cards drawn), drop → timeline (the
// chart drawn), drop → diagnosis (the answer drawn: data-snapshot-diagnosis;
// on a page that does not mark it, the timeline's moment), the worker's WebAssembly memory at the end (its high-water
// mark: linear memory never shrinks) and its live Go heap at the end, and
// the longest main-thread task (PerformanceObserver "longtask": only tasks
// over 50 ms are reported, so 0 means none). make bench-browser runs it.
// The file is handed over as soon as the page is ready (a cold drop: the
// worker may still be starting); OOMSCOPE_BENCH_SETTLE=MS waits that many
// milliseconds first, as a user who opens the page and then picks a file.
// OOMSCOPE_BENCH_PROFILES=DIR writes CPU profiles of the page and of the
// analysis worker (Chrome's .cpuprofile, for DevTools) there, one pair a
// file (with a settle time: the worker must be running);
// OOMSCOPE_BENCH_TRACE=1 prints the main thread's longest tasks and trace
// events (as BenchmarkBrowserSnapshotRanks). OOMSCOPE_BENCH_VISITS=N
// measures a returning user: each file is dropped on visit N, in a new tab
// of the browser's profile after N-1 visits (firstVisit) to a site of its
// own, and the code-cache events of each visit are logged (wasmCaching).
func BenchmarkBrowserSnapshot(b *testing.B) {
	dir := os.Getenv("OOMSCOPE_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	settle := benchSettle(b)
	s := serveSite(b, distDir(b), "", "no-store")
	visits := benchVisits(b)
	version := siteVersion(b, distDir(b))
	type row struct {
		in                        benchInput
		summary, timeline, long   float64
		diagnosis                 float64
		decode, analyse           float64
		wasmBytes, heapBytes, gap float64
		split                     splitStats
		err                       string
	}
	var rows []row
	for _, in := range benchInputs(b, dir) {
		in.describe(b)
		b.Run(in.name, func(b *testing.B) {
			for b.Loop() {
				var tb *tab
				if visits == 1 {
					tb = newTab(b, s)
				} else {
					// In the profile, as a user's; on a site of its own
					// (a new origin), for a first visit with nothing cached.
					tb = newProfileTab(b, serveSite(b, distDir(b), "", ""))
					for range visits - 1 {
						tb = firstVisit(b, tb, version)
					}
				}
				var caching func() []string
				if visits > 1 {
					caching = wasmCaching(b, tb)
				}
				tb.open("/snapshot")
				time.Sleep(settle)
				if caching != nil {
					b.Logf("visit %d: WebAssembly code cache before the drop %q", visits, caching())
				}
				evalJS[bool](tb, `(() => {
					window.__gap = {max: 0, last: performance.now(), on: true, long: 0};
					window.__tasks = [];
					new PerformanceObserver((l) => { for (const e of l.getEntries()) { window.__gap.long = Math.max(window.__gap.long, e.duration); window.__tasks.push([Math.round(e.startTime - window.__t0), Math.round(e.duration)]); } }).observe({type: "longtask"});
					const f = () => { const now = performance.now(); if (window.__gap.on) { window.__gap.max = Math.max(window.__gap.max, now - window.__gap.last); } window.__gap.last = now; requestAnimationFrame(f); };
					requestAnimationFrame(f);
					window.__t0 = performance.now();
					return true; })()`)
				var profs []*cpuProfile
				if pd := os.Getenv("OOMSCOPE_BENCH_PROFILES"); pd != "" {
					profs = startProfiles(b, tb, filepath.Join(pd, in.name))
				}
				var trace *traceSums
				if os.Getenv("OOMSCOPE_BENCH_TRACE") != "" {
					trace = startTrace(b, tb)
					evalJS[bool](tb, `(window.__oomscopeMarks = {}, document.addEventListener("change", () => { window.__oomscopeMarks.change = performance.timeOrigin + performance.now(); }, true), true)`)
				}
				if trace != nil {
					b.Logf("%s: worker warm-up at the hand-over: %s", in.name, workerWarm(b, tb))
				}
				tb.uploadFile("#snap-file", in.path)
				if ready, msg := snapshotOutcome(tb, 10*time.Minute); !ready {
					// Reported in the table (the page failed), not fatal:
					// the other files still run.
					rows = append(rows, row{in: in, err: msg})
					b.Errorf("%s: %s", in.name, rows[len(rows)-1].err)
					continue
				}
				m := evalJS[map[string]float64](tb, `(() => { window.__gap.on = false; const at = (k) => +document.body.getAttribute(k) || 0;
					const r = document.getElementById("snap-results").dataset;
					return {summary: at("data-snapshot-summary"), timeline: at("data-snapshot-timeline") || at("data-snapshot-ready"), t0: window.__t0,
					diagnosis: at("data-snapshot-diagnosis"),
					gap: window.__gap.max, long: window.__gap.long, decode: +r.decodeMs, analyse: +r.analyseMs}; })()`)
				r := row{in: in, summary: m["summary"] - m["t0"], timeline: m["timeline"] - m["t0"], long: m["long"], gap: m["gap"],
					decode: m["decode"], analyse: m["analyse"]}
				// A page that shows the diagnosis with the timeline (the
				// whole result in one message) may not mark it apart.
				if r.diagnosis = m["diagnosis"] - m["t0"]; m["diagnosis"] == 0 {
					r.diagnosis = r.timeline
				}
				if os.Getenv("OOMSCOPE_BENCH_TASKS") != "" {
					b.Logf("%s: long tasks [start ms, duration ms] %v; summary at %.0f, timeline at %.0f", in.name,
						evalJS[[][]float64](tb, `window.__tasks`), r.summary, r.timeline)
				}
				for _, p := range profs {
					p.stop(b)
				}
				if trace != nil {
					trace.print(b, tb)
					printMarks(b, tb, in.name)
					printSplit(b, tb, in.name)
				}
				r.wasmBytes, r.heapBytes = workerMemory(b, tb)
				r.split = workerSplit(b, tb)
				b.ReportMetric(r.summary, "ms/drop-to-summary")
				b.ReportMetric(r.timeline, "ms/drop-to-timeline")
				b.ReportMetric(r.diagnosis, "ms/drop-to-diagnosis")
				b.ReportMetric(r.long, "ms/longest-task")
				rows = append(rows, r)
				tb.assertClean()
			}
		})
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n%-34s %8s %9s %8s %14s %14s %15s %16s %12s %12s %12s %10s %9s %10s %10s %10s\n", "file", "MB", "entries", "stacks", "drop→summary",
		"drop→timeline", "drop→diagnosis", "worker dec+an", "wasm peak", "heap at end", "longest task", "frame gap", "split MB", "part at", "part peak", "idle part")
	for _, r := range rows {
		if r.err != "" {
			fmt.Fprintf(&out, "%-34s %8.1f %9d %8d failed: %s\n", r.in.name, float64(r.in.bytes)/1e6, r.in.entries, r.in.stacks, r.err)
			continue
		}
		fmt.Fprintf(&out, "%-34s %8.1f %9d %8d %11.0f ms %11.0f ms %12.0f ms %6.0f+%4.0f ms %9.0f MB %9.0f MB %9.0f ms %7.0f ms %9.1f %7.0f ms %7.0f MB %7.0f MB\n", r.in.name,
			float64(r.in.bytes)/1e6, r.in.entries, r.in.stacks, r.summary, r.timeline, r.diagnosis, r.decode, r.analyse, r.wasmBytes/1e6,
			r.heapBytes/1e6, r.long, r.gap, r.split.bytes/1e6, r.split.arrived, r.split.peak/1e6, r.split.idle/1e6)
	}
	fmt.Fprintf(&out, "(wasm peak: the worker's linear memory, which only grows; heap at end: the live Go heap after the analysis, -1 if the worker does not say; longest task: main-thread tasks over 50 ms, 0 if none)\n")
	fmt.Fprintf(&out, "(split MB: input decoded by the part worker and taken, 0 if none; part at: when its part reached the analysis worker, ms after the hand-over; part peak: the part worker's linear memory when it sent its part; idle part: that of the part worker started ahead for the next file, at the end; the workers' memory at its peak is at most wasm peak + part peak, at the end wasm peak + idle part)\n")
	if settle > 0 {
		fmt.Fprintf(&out, "(each file handed over %v after the page was ready: OOMSCOPE_BENCH_SETTLE)\n", settle)
	}
	if visits > 1 {
		fmt.Fprintf(&out, "(visit %d: each file dropped in a new tab after %d visits in the same browser context: OOMSCOPE_BENCH_VISITS)\n", visits, visits-1)
	}
	fmt.Print(out.String())
}

// benchInt is the benchmark setting in the environment variable name: def
// where unset, else an integer from lo to hi, or the benchmark fails
// saying it wants what want says.
func benchInt(b *testing.B, name string, def, lo, hi int, want string) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		b.Fatalf("%s=%q: want %s", name, v, want)
	}
	return n
}

// benchSettle is how long a benchmark waits after the page is ready
// before it hands the files over: OOMSCOPE_BENCH_SETTLE milliseconds, 0
// where unset (a cold drop, the worker maybe still starting).
func benchSettle(b *testing.B) time.Duration {
	return time.Duration(benchInt(b, "OOMSCOPE_BENCH_SETTLE", 0, 0, math.MaxInt, "milliseconds")) * time.Millisecond
}

// benchVisits is OOMSCOPE_BENCH_VISITS: the visit the file is dropped
// on, 1 (the default: a first visit) or more (a returning user's).
func benchVisits(b *testing.B) int {
	return benchInt(b, "OOMSCOPE_BENCH_VISITS", 1, 1, math.MaxInt, "1, 2, ...")
}

// cacheWait is how long a first visit stays after the worker's warm-up:
// V8 writes a module's optimised code to the code cache once no function
// was optimised for 2 s (--wasm-caching-timeout-ms).
const cacheWait = 4 * time.Second

// firstVisit is a visit before the one measured, in tb: it opens the
// snapshot page, waits until the service worker holds the site (version)
// and the analysis worker's warm-up is done, stays cacheWait longer, logs
// the visit's code-cache events, then leaves the page (its workers end)
// and returns a new tab in the same browser context, for the next visit.
// With OOMSCOPE_BENCH_CHROMELOG it logs the log's length at that point:
// what follows is the next visit's.
func firstVisit(b testing.TB, tb *tab, version string) *tab {
	caching := wasmCaching(b, tb)
	tb.open("/snapshot")
	tb.waitOfflineReady(version)
	deadline := time.Now().Add(2 * time.Minute)
	for w := workerWarm(b, tb); w != "done"; w = workerWarm(b, tb) {
		if time.Now().After(deadline) {
			b.Fatalf("first visit: the worker's warm-up is %s after 2 minutes", w)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(cacheWait)
	tb.assertClean()
	b.Logf("earlier visit: WebAssembly code cache %q", caching())
	tb.do(chromedp.Navigate("about:blank"))
	if f := os.Getenv("OOMSCOPE_BENCH_CHROMELOG"); f != "" {
		if st, err := os.Stat(f); err == nil {
			b.Logf("next visit: Chromium's log from byte %d", st.Size())
		}
	}
	return tb.sibling()
}

// printMarks prints when the worker and the page reached each point of
// handling the file (wasm/snapworker mark, app timeMark), in milliseconds
// after the hand-over, in time order.
func printMarks(b *testing.B, tb *tab, name string) {
	page := evalJS[map[string]float64](tb, `(() => { const m = Object.assign({}, window.__oomscopeMarks || {});
		const o = performance.timeOrigin, at = (k) => +document.body.getAttribute(k) || 0;
		m.t0 = o + window.__t0; m.painted_summary = o + at("data-snapshot-summary"); m.painted_timeline = o + at("data-snapshot-timeline");
		m.painted_diagnosis = o + at("data-snapshot-diagnosis");
		return m; })()`)
	wctx, cancel := analysisWorker(b, tb)
	defer cancel()
	worker, err := chromedp.Run(wctx, chromedp.Evaluate[map[string]float64](`self.__oomscopeMarks || {}`))
	if err != nil {
		b.Fatalf("reading the worker's marks: %v", err)
	}
	t0 := page["t0"]
	type at struct {
		name string
		ms   float64
	}
	var all []at
	for k, v := range page {
		if k != "t0" && v > 0 {
			all = append(all, at{"page " + k, v - t0})
		}
	}
	for k, v := range worker {
		all = append(all, at{"worker " + k, v - t0})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ms < all[j].ms })
	var sb strings.Builder
	for _, a := range all {
		fmt.Fprintf(&sb, " %s %.0f;", a.name, a.ms)
	}
	b.Logf("%s marks (ms after hand-over):%s", name, sb.String())
}

// workerWarm says how far the analysis worker's warm-up got
// (self.__oomscopeWarm: running, done, stopped, failed: ...; undefined
// before the page asks for it).
func workerWarm(b testing.TB, tb *tab) string {
	wctx, cancel := analysisWorker(b, tb)
	defer cancel()
	v, err := chromedp.Run(wctx, chromedp.Evaluate[string](`String(self.__oomscopeWarm)`))
	if err != nil {
		b.Fatalf("reading the worker's warm-up state: %v", err)
	}
	return v
}

// analysisWorker attaches to the tab's analysis worker (the worker that
// runs Go and has no name; the file readers, snapworker.js, have
// go == null, and the part worker is named partName) and
// returns its context, to be cancelled by the caller.
func analysisWorker(b testing.TB, tb *tab) (context.Context, context.CancelFunc) {
	targets, err := chromedp.Targets(tb.ctx)
	if err != nil {
		b.Fatal(err)
	}
	c := chromedp.FromContext(tb.ctx)
	for _, ti := range targets {
		// A worker's title is its name: the readers and part workers are
		// not asked (one that was just ended may never answer).
		if ti.Type != "worker" || ti.BrowserContextID != c.BrowserContextID || ti.Title == readerWorker || ti.Title == partWorker {
			continue
		}
		wctx, cancel := chromedp.NewContext(tb.ctx, chromedp.WithTargetID(ti.TargetID))
		v, err := chromedp.Run(wctx, chromedp.Evaluate[bool](`typeof go === "object" && go !== null && self.name === ""`))
		if err == nil && v {
			return wctx, cancel
		}
		cancel()
	}
	b.Fatal("no analysis worker (with OOMSCOPE_BENCH_PROFILES, set OOMSCOPE_BENCH_SETTLE)")
	return nil, nil
}

// workerMemory reads the analysis worker's WebAssembly memory size and, if
// the worker publishes it (self.__oomscopeMem), its live Go heap.
func workerMemory(b *testing.B, tb *tab) (wasm, heap float64) {
	wctx, cancel := analysisWorker(b, tb)
	defer cancel()
	v, err := chromedp.Run(wctx, chromedp.Evaluate[map[string]float64](`({wasm: go._inst.exports.mem.buffer.byteLength, heap: self.__oomscopeMem ? self.__oomscopeMem.heapAlloc : -1})`))
	if err != nil {
		b.Fatalf("reading the worker's memory: %v", err)
	}
	return v["wasm"], v["heap"]
}

// printSplit prints the analysis worker's account of its part worker
// (self.__oomscopeSplitStats: split.go).
func printSplit(b *testing.B, tb *tab, name string) {
	wctx, cancel := analysisWorker(b, tb)
	defer cancel()
	v, err := chromedp.Run(wctx, chromedp.Evaluate[map[string]any](`self.__oomscopeSplitStats || {}`))
	if err != nil {
		b.Fatalf("reading the worker's split stats: %v", err)
	}
	b.Logf("%s split: %v", name, v)
}

// splitStats is what the analysis worker says of its part worker
// (wasm/snapworker split.go): the input bytes of the part taken, when it
// arrived (ms after the hand-over, 0 if it did not), the part worker's
// memory when it sent it, and that of the idle part worker started ahead
// for the next file.
type splitStats struct{ bytes, arrived, peak, idle float64 }

// workerSplit reads the analysis worker's split stats and the memory of
// an idle part worker (0 if none).
func workerSplit(b *testing.B, tb *tab) splitStats {
	wctx, cancel := analysisWorker(b, tb)
	defer cancel()
	t0 := evalJS[float64](tb, `performance.timeOrigin + window.__t0`)
	v, err := chromedp.Run(wctx, chromedp.Evaluate[map[string]float64](`(() => { const s = self.__oomscopeSplitStats || {}, m = self.__oomscopeMarks || {};
		return {peak: s.partMemory || 0, arrived: m.part_arrived || 0}; })()`))
	if err != nil {
		b.Fatalf("reading the worker's split stats: %v", err)
	}
	st := splitStats{peak: v["peak"]}
	if v["arrived"] > 0 {
		st.arrived = v["arrived"] - t0
	}
	st.bytes = evalJS[float64](tb, `+document.getElementById("snap-results").dataset.splitBytes || 0`)
	targets, err := chromedp.Targets(tb.ctx)
	if err != nil {
		b.Fatal(err)
	}
	c := chromedp.FromContext(tb.ctx)
	for _, ti := range targets {
		if ti.Type != "worker" || ti.BrowserContextID != c.BrowserContextID || ti.Title != partWorker {
			continue
		}
		tctx, stop := context.WithTimeout(tb.ctx, 10*time.Second)
		pctx, cancel := chromedp.NewContext(tctx, chromedp.WithTargetID(ti.TargetID))
		m, err := chromedp.Run(pctx, chromedp.Evaluate[float64](`self.name === partName ? self.__oomscopeWasmMemory() : 0`))
		cancel()
		stop()
		if err == nil && m > 0 {
			st.idle += m
		}
	}
	return st
}

// cpuProfile is a CPU profile being taken of the page or of a worker.
type cpuProfile struct {
	ctx    context.Context
	cancel context.CancelFunc
	path   string
}

// startProfiles starts CPU profiles (sampling every 100 µs) of the tab's
// page and of its analysis worker, to be written to prefix-page.cpuprofile
// and prefix-worker.cpuprofile.
func startProfiles(b *testing.B, tb *tab, prefix string) []*cpuProfile {
	wctx, cancel := analysisWorker(b, tb)
	profs := []*cpuProfile{{ctx: tb.ctx, cancel: func() {}, path: prefix + "-page.cpuprofile"},
		{ctx: wctx, cancel: cancel, path: prefix + "-worker.cpuprofile"}}
	for _, p := range profs {
		for _, step := range []func() error{
			func() error { _, err := chromedp.Call(p.ctx, profiler.Enable, cdp.Empty{}); return err },
			func() error {
				_, err := chromedp.Call(p.ctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 100})
				return err
			},
			func() error { _, err := chromedp.Call(p.ctx, profiler.Start, cdp.Empty{}); return err },
		} {
			if err := step(); err != nil {
				b.Fatalf("profiling %s: %v", p.path, err)
			}
		}
	}
	return profs
}

// stop ends the profile and writes it.
func (p *cpuProfile) stop(b *testing.B) {
	defer p.cancel()
	res, err := chromedp.Call(p.ctx, profiler.Stop, cdp.Empty{})
	if err != nil || res.Profile == nil {
		b.Fatalf("profile %s: %v", p.path, err)
	}
	data, err := json.Marshal(res.Profile)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p.path, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

// wasmCaching records Chromium's WebAssembly code-cache events in tb
// (trace events v8.wasm.*: moduleCacheHit when a module's compiled code
// came from the cache, cachedModule when code was written to it, ...)
// until the returned function is called; it returns them in order, each
// as "name url" (the url, where the event has one, without the origin).
func wasmCaching(t testing.TB, tb *tab) func() []string {
	var mu sync.Mutex
	var evs []string
	done := make(chan struct{})
	err := chromedp.Listen(tb.ctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			defer mu.Unlock()
			for _, v := range e.Value {
				var te traceEvent
				if json.Unmarshal(v, &te) == nil && strings.HasPrefix(te.Name, "v8.wasm.") {
					u, _ := te.Args["url"].(string)
					if data, ok := te.Args["data"].(map[string]any); ok && u == "" {
						u, _ = data["url"].(string)
					}
					if strings.HasPrefix(te.Name, "v8.wasm.compileConsume") || strings.HasPrefix(te.Name, "v8.wasm.compileDigest") {
						continue // the bytes streamed in, many
					}
					ev := strings.TrimSpace(te.Name + " " + strings.TrimPrefix(u, tb.s.Origin))
					for _, k := range []string{"producedCacheSize", "consumedCacheSize"} {
						if n, ok := te.Args[k].(float64); ok {
							ev += fmt.Sprintf(" %.1f MB", n/1e6)
						}
					}
					evs = append(evs, ev)
				}
			}
		case *tracing.EventTracingComplete:
			close(done)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(tb.ctx, tracing.Start, tracing.StartParams{TransferMode: tracing.StartTransferModeReportEvents,
		TraceConfig: &tracing.TraceConfig{IncludedCategories: []string{"disabled-by-default-devtools.timeline"}}}); err != nil {
		t.Fatal(err)
	}
	return func() []string {
		if _, err := chromedp.Call(tb.ctx, tracing.End, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the trace did not complete")
		}
		mu.Lock()
		defer mu.Unlock()
		return evs
	}
}
