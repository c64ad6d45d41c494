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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"

	"oomscope/snapshot/gen"
)

// BenchmarkBrowserSnapshotRanks drops OOMSCOPE_BENCH_RANKS generated ranks
// (default 16) of about OOMSCOPE_BENCH_RANK_MB MiB each (default 10; rank
// 0 runs a wider model, an outlier) on the snapshot page and prints: drop
// → first rank in the overview, drop → all ranks in it, the pool's
// workers, the highest sum of their WebAssembly memory seen while they
// work (sampled), the longest main-thread task (PerformanceObserver
// "longtask": tasks over 50 ms, 0 if none) and the longest gap between two
// frames. OOMSCOPE_BENCH_PICK=1 sets the files on the file input instead
// of dropping them; OOMSCOPE_BENCH_CORES makes the page see that many cores
// (navigator.hardwareConcurrency), which sizes its pool of workers;
// OOMSCOPE_BENCH_PROFILE=1 prints the functions that took the most of the
// page's main thread from the drop to the last rank (a CDP CPU profile,
// self time), and OOMSCOPE_BENCH_PROFILES=DIR writes that profile to
// DIR/ranks-page.cpuprofile; OOMSCOPE_BENCH_TRACE=1 the time of the main thread's trace
// events by name (style, layout, paint, script…); OOMSCOPE_BENCH_SETTLE=MS
// drops the files that many milliseconds after the page is ready (default:
// at once). make bench-browser runs it.
func BenchmarkBrowserSnapshotRanks(b *testing.B) {
	n := benchInt(b, "OOMSCOPE_BENCH_RANKS", 16, 1, 128, "1 to 128")
	mb := int64(benchInt(b, "OOMSCOPE_BENCH_RANK_MB", 10, 1, math.MaxInt, "a size in MiB"))
	dir := os.Getenv("OOMSCOPE_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	var paths []string
	var total int64
	for rank := range n {
		opt := gen.Options{Seed: uint64(rank + 1), Layers: 8, TargetBytes: mb << 20}
		if rank == 0 {
			opt.Hidden = 1024 // a model 16 times as big: hundreds of MiB more
		}
		data, _, err := gen.Bytes(opt)
		if err != nil {
			b.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("bench_rank%d.pickle", rank))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
		total += int64(len(data))
	}
	cores := int64(benchInt(b, "OOMSCOPE_BENCH_CORES", 0, 1, math.MaxInt, "a number of cores"))
	settle := benchSettle(b)
	s := serveSite(b, distDir(b), "", "no-store")
	for b.Loop() {
		tb := newTab(b, s)
		if cores > 0 { // the page sizes its pool by navigator.hardwareConcurrency
			if _, err := chromedp.Call(tb.ctx, emulation.SetHardwareConcurrencyOverride, emulation.SetHardwareConcurrencyOverrideParams{HardwareConcurrency: cores}); err != nil {
				b.Fatal(err)
			}
		}
		tb.open("/snapshot")
		time.Sleep(settle)
		evalJS[bool](tb, `(() => {
			window.__gap = {max: 0, last: performance.now(), on: true, long: 0, sum: 0};
			window.__tasks = [];
			new PerformanceObserver((l) => { for (const e of l.getEntries()) { window.__gap.long = Math.max(window.__gap.long, e.duration); window.__gap.sum += e.duration; window.__tasks.push([Math.round(e.startTime - window.__t0), Math.round(e.duration)]); } }).observe({type: "longtask"});
			const f = () => { const now = performance.now(); if (window.__gap.on) window.__gap.max = Math.max(window.__gap.max, now - window.__gap.last); window.__gap.last = now; requestAnimationFrame(f); };
			requestAnimationFrame(f);
			window.__first = 0;
			new MutationObserver(() => { if (!window.__first && document.body.getAttribute("data-ranks-done") > "0") window.__first = performance.now(); })
				.observe(document.body, {attributes: true, attributeFilter: ["data-ranks-done"]});
			window.__t0 = performance.now();
			return true; })()`)
		profile := os.Getenv("OOMSCOPE_BENCH_PROFILE") != "" || os.Getenv("OOMSCOPE_BENCH_PROFILES") != ""
		if profile {
			if _, err := chromedp.Call(tb.ctx, profiler.Enable, cdp.Empty{}); err != nil {
				b.Fatal(err)
			}
			if _, err := chromedp.Call(tb.ctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 200}); err != nil {
				b.Fatal(err)
			}
			if _, err := chromedp.Call(tb.ctx, profiler.Start, cdp.Empty{}); err != nil {
				b.Fatal(err)
			}
		}
		var trace *traceSums
		if os.Getenv("OOMSCOPE_BENCH_TRACE") != "" {
			trace = startTrace(b, tb)
		}
		if os.Getenv("OOMSCOPE_BENCH_PICK") != "" {
			tb.uploadFiles("#snap-file", paths)
		} else {
			tb.dropFiles("#snap-drop", paths)
		}
		var peakMem float64
		workers := 0
		deadline := time.Now().Add(10 * time.Minute)
		for evalJS[string](tb, `document.body.getAttribute("data-ranks-ready") || ""`) == "" {
			if time.Now().After(deadline) {
				b.Fatal("the overview did not finish in 10 minutes")
			}
			sum, k := workersMemory(tb)
			peakMem, workers = max(peakMem, sum), max(workers, k)
			time.Sleep(100 * time.Millisecond)
		}
		m := evalJS[map[string]float64](tb, `(() => { window.__gap.on = false;
			return {ready: +document.body.getAttribute("data-ranks-ready") - window.__t0, first: window.__first ? window.__first - window.__t0 : -1,
			long: window.__gap.long, sum: window.__gap.sum, gap: window.__gap.max,
			failed: document.querySelectorAll('#snap-ranks-table tr[data-state="failed"]').length,
			outliers: document.querySelectorAll('#snap-ranks-table tr[data-outlier="true"]').length}; })()`)
		if m["failed"] != 0 {
			b.Errorf("%.0f ranks failed", m["failed"])
		}
		if profile {
			printProfile(b, tb)
		}
		if trace != nil {
			trace.print(b, tb)
		}
		if os.Getenv("OOMSCOPE_BENCH_TASKS") != "" {
			b.Logf("long tasks [start ms, duration ms] %v; first rank at %.0f, all at %.0f", evalJS[[][]float64](tb, `window.__tasks`), m["first"], m["ready"])
		}
		b.ReportMetric(m["ready"], "ms/drop-to-overview")
		b.ReportMetric(m["long"], "ms/longest-task")
		fmt.Printf("\n%d ranks, %.1f MB in all: drop→first rank %.0f ms, drop→all ranks %.0f ms (%.1f MB/s), %d workers, "+
			"their wasm memory at most %.0f MB together (sampled), longest main-thread task %.0f ms (tasks over 50 ms: %.0f ms in all), "+
			"longest frame gap %.0f ms, %.0f outlier(s)\n",
			n, float64(total)/1e6, m["first"], m["ready"], float64(total)/1e3/m["ready"], workers, peakMem/1e6, m["long"], m["sum"], m["gap"], m["outliers"])
		tb.assertClean()
	}
}

// workersMemory sums the WebAssembly memory of the tab's workers now.
func workersMemory(tb *tab) (sum float64, n int) {
	targets, err := chromedp.Targets(tb.ctx)
	if err != nil {
		return 0, 0
	}
	c := chromedp.FromContext(tb.ctx)
	for _, ti := range targets {
		if ti.Type != "worker" || ti.BrowserContextID != c.BrowserContextID {
			continue
		}
		tctx, stop := context.WithTimeout(tb.ctx, 2*time.Second)
		wctx, cancel := chromedp.NewContext(tctx, chromedp.WithTargetID(ti.TargetID))
		v, err := chromedp.Run(wctx, chromedp.Evaluate[float64](`(typeof go === "object" && go._inst) ? go._inst.exports.mem.buffer.byteLength : 0`))
		cancel()
		stop()
		if err == nil && v > 0 { // 0: a worker's file reader (snapworker.js)
			sum += v
			n++
		}
	}
	return sum, n
}

// printProfile stops the tab's CPU profile and prints its 25 functions of
// the most self time.
func printProfile(b *testing.B, tb *tab) {
	res, err := chromedp.Call(tb.ctx, profiler.Stop, cdp.Empty{})
	if err != nil || res.Profile == nil {
		b.Fatalf("profile: %v", err)
	}
	pr := res.Profile
	if dir := os.Getenv("OOMSCOPE_BENCH_PROFILES"); dir != "" {
		// The profile itself, for a closer look (Chrome's .cpuprofile).
		data, err := json.Marshal(pr)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "ranks-page.cpuprofile"), data, 0o644)
		}
		if err != nil {
			b.Fatalf("writing the profile: %v", err)
		}
	}
	name := map[int64]string{}
	for _, n := range pr.Nodes {
		name[n.ID] = n.CallFrame.FunctionName + " " + filepath.Base(n.CallFrame.URL)
	}
	parent := map[int64]int64{}
	for _, n := range pr.Nodes {
		for _, c := range n.Children {
			parent[c] = n.ID
		}
	}
	self, incl := map[string]int64{}, map[string]int64{}
	var total int64
	for i, id := range pr.Samples {
		if i+1 >= len(pr.TimeDeltas) {
			continue
		}
		dt := pr.TimeDeltas[i+1]
		self[name[id]] += dt
		total += dt
		seen := map[string]bool{}
		for n, ok := id, true; ok; n, ok = parent[n] {
			if !seen[name[n]] {
				seen[name[n]] = true
				incl[name[n]] += dt
			}
		}
	}
	for _, m := range []struct {
		what string
		t    map[string]int64
	}{{"self", self}, {"total (callees included)", incl}} {
		keys := make([]string, 0, len(m.t))
		for k := range m.t {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return m.t[keys[i]] > m.t[keys[j]] })
		fmt.Printf("main thread, %.0f ms profiled; %s time:\n", float64(total)/1e3, m.what)
		for _, k := range keys[:min(40, len(keys))] {
			fmt.Printf("%8.1f ms  %s\n", float64(m.t[k])/1e3, k)
		}
	}
}

// traceRound counts the traces written (OOMSCOPE_BENCH_TRACEFILE).
var traceRound int

// traceSums adds up the durations of the main thread's trace events.
type traceSums struct {
	mu   sync.Mutex
	main map[int64]bool // thread ids of CrRendererMain
	dur  map[string]float64
	evs  []traceEvent
	done chan struct{}
}

type traceEvent struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Dur  float64        `json:"dur"`
	TDur float64        `json:"tdur"` // thread (CPU) time
	TS   float64        `json:"ts"`
	Tid  int64          `json:"tid"`
	Args map[string]any `json:"args"`
}

// startTrace starts a devtools timeline trace of the tab.
func startTrace(b *testing.B, tb *tab) *traceSums {
	ts := &traceSums{main: map[int64]bool{}, dur: map[string]float64{}, done: make(chan struct{})}
	err := chromedp.Listen(tb.ctx, func(ev any) {
		switch e := ev.(type) {
		case *tracing.EventDataCollected:
			ts.mu.Lock()
			for _, v := range e.Value {
				var te traceEvent
				if json.Unmarshal(v, &te) == nil {
					ts.evs = append(ts.evs, te)
				}
			}
			ts.mu.Unlock()
		case *tracing.EventTracingComplete:
			close(ts.done)
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := chromedp.Call(tb.ctx, tracing.Start, tracing.StartParams{TransferMode: tracing.StartTransferModeReportEvents,
		// v8.wasm and v8.wasm.turbofan: the WebAssembly compiles
		// (printWasmCompiles).
		TraceConfig: &tracing.TraceConfig{IncludedCategories: []string{"toplevel", "devtools.timeline", "blink", "v8.execute",
			"v8.wasm", "disabled-by-default-v8.wasm.turbofan", "disabled-by-default-v8.wasm.detailed"}}}); err != nil {
		b.Fatal(err)
	}
	return ts
}

// print ends the trace and prints the main thread's 20 event names of the
// most time (events nest: a parent's time holds its children's).
func (ts *traceSums) print(b *testing.B, tb *tab) {
	if _, err := chromedp.Call(tb.ctx, tracing.End, cdp.Empty{}); err != nil {
		b.Fatal(err)
	}
	select {
	case <-ts.done:
	case <-time.After(30 * time.Second):
		b.Fatal("the trace did not complete")
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if path := os.Getenv("OOMSCOPE_BENCH_TRACEFILE"); path != "" {
		// The events themselves, for a closer look (one JSON array; each
		// file's trace replaces the one before).
		if data, err := json.Marshal(ts.evs); err == nil {
			os.WriteFile(path, data, 0o644)
			// And a copy a round, FILE.1, FILE.2, ...
			traceRound++
			os.WriteFile(fmt.Sprintf("%s.%d", path, traceRound), data, 0o644)
		}
	}
	for _, e := range ts.evs {
		if e.Ph == "M" && e.Name == "thread_name" && e.Args["name"] == "CrRendererMain" {
			ts.main[e.Tid] = true
		}
	}
	// The main thread's tasks by their CPU time (thread clock), which
	// other processes on the machine do not lengthen, unlike the long
	// tasks' wall time.
	var tasks, over int
	var cpu, longest float64
	var top []traceEvent // the tasks of the most CPU
	for _, e := range ts.evs {
		if e.Ph == "X" && ts.main[e.Tid] {
			ts.dur[e.Name] += e.Dur
			if e.Name == "ThreadControllerImpl::RunTask" || e.Name == "RunTask" {
				tasks++
				cpu += e.TDur
				longest = max(longest, e.TDur)
				top = append(top, e)
				if e.TDur > 50e3 {
					over++
				}
			}
		}
	}
	fmt.Printf("main thread: %d tasks, %.0f ms of CPU in all, the longest %.1f ms of CPU, %d over 50 ms of CPU\n",
		tasks, cpu/1e3, longest/1e3, over)
	sort.Slice(top, func(i, j int) bool { return top[i].TDur > top[j].TDur })
	var t0 float64
	for _, e := range ts.evs {
		if ts.main[e.Tid] && e.Ph == "X" && (t0 == 0 || e.TS < t0) {
			t0 = e.TS
		}
	}
	for _, task := range top[:min(3, len(top))] {
		fmt.Printf("  task at %.0f ms: %.1f ms CPU, %.1f ms wall: %s\n", (task.TS-t0)/1e3, task.TDur/1e3, task.Dur/1e3,
			ts.inTask(task, 6, func(e traceEvent) string { return e.Name }))
	}
	// The tasks of the most wall time: what the long-task observer
	// counts (over 50 ms), with their CPU and what ran in them.
	sort.Slice(top, func(i, j int) bool { return top[i].Dur > top[j].Dur })
	for _, task := range top[:min(5, len(top))] {
		if task.Dur < 30e3 {
			break
		}
		fmt.Printf("  long (wall) task at %.0f ms: %.1f ms wall, %.1f ms CPU: %s\n", (task.TS-t0)/1e3, task.Dur/1e3, task.TDur/1e3,
			ts.inTask(task, 10, traceDetail))
	}
	keys := make([]string, 0, len(ts.dur))
	for k := range ts.dur {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return ts.dur[keys[i]] > ts.dur[keys[j]] })
	fmt.Printf("main thread trace events (nested), total ms:\n")
	for _, k := range keys[:min(20, len(keys))] {
		fmt.Printf("%8.1f ms  %s\n", ts.dur[k]/1e3, k)
	}
	ts.printWasmCompiles()
}

// printWasmCompiles prints, for the time traced, the CPU time of each
// thread that ran WebAssembly (the page's main thread, the workers) and
// what the browser spent compiling it: functions compiled on their first
// call (baseline code, on the calling thread) and functions optimised
// (on background threads, which share the cores with the page and the
// workers). A first file whose hot functions the warm-ups left to be
// optimised shows many optimising compiles here.
func (ts *traceSums) printWasmCompiles() {
	names := map[int64]string{}
	for _, e := range ts.evs {
		if e.Ph == "M" && e.Name == "thread_name" {
			names[e.Tid], _ = e.Args["name"].(string)
		}
	}
	cpu := map[int64]float64{}
	lazy := map[int64][2]float64{} // count, CPU µs
	var opt, optCPU float64
	for _, e := range ts.evs {
		if e.Ph != "X" {
			continue
		}
		switch e.Name {
		case "ThreadControllerImpl::RunTask", "RunTask":
			cpu[e.Tid] += e.TDur
		case "wasm.CompileLazy":
			l := lazy[e.Tid]
			lazy[e.Tid] = [2]float64{l[0] + 1, l[1] + e.TDur}
		case "V8.WasmOptimization":
			opt++
			optCPU += e.TDur
		}
	}
	var parts []string
	for tid, l := range lazy {
		parts = append(parts, fmt.Sprintf("%s %d: %.0f ms of CPU, %.0f first-call compiles (%.1f ms)", names[tid], tid, cpu[tid]/1e3, l[0], l[1]/1e3))
	}
	sort.Strings(parts)
	fmt.Printf("wasm: %.0f functions optimised (%.0f ms of CPU on background threads); %s\n", opt, optCPU/1e3, strings.Join(parts, "; "))
}

// inTask lists what ran on the main thread within task, by name(event),
// with its wall ms: the n names of the most time, the most first.
func (ts *traceSums) inTask(task traceEvent, n int, name func(traceEvent) string) string {
	in := map[string]float64{}
	for _, e := range ts.evs {
		if e.Ph == "X" && ts.main[e.Tid] && e.TS >= task.TS && e.TS+e.Dur <= task.TS+task.Dur && e.Name != task.Name {
			in[name(e)] += e.Dur
		}
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return in[keys[i]] > in[keys[j]] })
	var parts []string
	for _, k := range keys[:min(n, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, in[k]/1e3))
	}
	return strings.Join(parts, ", ")
}

// traceDetail names a trace event with what it ran, where the event
// says: the event type of a dispatch, the function of a call.
func traceDetail(e traceEvent) string {
	d, _ := e.Args["data"].(map[string]any)
	if d == nil {
		return e.Name
	}
	for _, k := range []string{"type", "functionName"} {
		if v, ok := d[k].(string); ok && v != "" {
			return e.Name + "(" + v + ")"
		}
	}
	return e.Name
}
