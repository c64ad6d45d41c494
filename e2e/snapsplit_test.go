//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
	"oomscope/snapshot/load"
)

// TestSnapshotSplit drops a generated file of distinct stacks that the
// analysis worker decodes in two halves, the second by its part worker
// (issue #9, wasm/snapworker split.go), and checks that the page shows
// what a serial decode here gives: the Markdown report (every headline,
// site, stack and category), the peak, and the allocator state at an
// entry of the second half. The file is small (8 MiB, for the suite's
// time), so the test lowers the split point through the worker's test
// knob (self.__oomscopeSplitTest.at: the middle of the file). First the
// split is taken (the result's split bytes say how many bytes the part
// worker decoded); then the part worker fails each way it can (an error,
// a damaged part, silence, a crash): the numbers must not change, and the
// result says no part was taken.
func TestSnapshotSplit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "distinct-8MiB.pickle")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := gen.WriteFamily(f, gen.FamilyOptions{Family: gen.DistinctStacks, TargetBytes: 8 << 20, Seed: 5})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	// The serial decode: with one core the decoder does not split by
	// itself (snapshot.Concurrent).
	prev := runtime.GOMAXPROCS(1)
	want, closer, err := load.OpenFile(path, nil, load.Options{Analysis: analysis.Options{TimelinePoints: load.TimelinePoints}})
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	wantMD := analysis.Markdown(want.Report)
	dev := want.Report.Devices[want.Report.Busiest()]
	late := dev.Entries * 4 / 5 // an entry the part worker decoded
	st := want.Analysis.Devices[want.Report.Busiest()].StateAt(late, 0, 0)
	if len(want.Report.Devices) != 1 || dev.Entries < 10000 || dev.Entries != info.Entries {
		t.Fatalf("the generated file has %d devices, %d entries (gen says %d): the test does not test", len(want.Report.Devices), dev.Entries, info.Entries)
	}

	s := serveSite(t, distDir(t), "", "no-store")
	for _, tc := range []struct {
		fail  string
		stall int // ms
	}{
		{"", 0}, {load.PartFailError, 0}, {load.PartFailCorrupt, 0}, {load.PartFailSilent, 300}, {load.PartFailExit, 0},
	} {
		t.Run(cmp.Or(tc.fail, "taken"), func(t *testing.T) {
			tb := newTab(t, s)
			tb.open("/snapshot")
			knob := fmt.Sprintf(`self.__oomscopeSplitTest = {at: %d, fail: %q}`, info.Bytes/2, tc.fail)
			if tc.stall > 0 {
				knob = fmt.Sprintf(`self.__oomscopeSplitTest = {at: %d, fail: %q, stallMs: %d}`, info.Bytes/2, tc.fail, tc.stall)
			}
			inWorker[bool](t, tb, knob+`, true`)
			start := time.Now()
			tb.uploadFile("#snap-file", path)
			requireSnapshot(tb, "the split file")
			took := time.Since(start)

			// The result's split bytes, and the worker's own account.
			split := evalJS[string](tb, `document.getElementById("snap-results").dataset.splitBytes || "0"`)
			stats := inWorker[map[string]any](t, tb, `self.__oomscopeSplitStats || {}`)
			if tc.fail == "" {
				part, _ := stats["partBytes"].(float64)
				start, _ := stats["start"].(float64)
				if split == "0" || split != strconv.FormatInt(int64(part), 10) || start < float64(info.Bytes/2) || part > float64(info.Bytes)-start || part < 0.9*(float64(info.Bytes)-start) {
					t.Errorf("the split was not taken as expected: the result says %s split bytes; the worker: %v", split, stats)
				}
			} else {
				if split != "0" {
					t.Errorf("the part worker failed (%s) but the result says %s bytes came from it", tc.fail, split)
				}
				if e, _ := stats["error"].(string); e == "" || e == "the part worker was stopped" {
					t.Errorf("the worker does not say why the part was not taken: %v", stats)
				}
			}
			t.Logf("%s: %v to the result; split bytes %s; worker %v", cmp.Or(tc.fail, "taken"), took.Round(time.Millisecond), split, stats)

			if got := evalJS[string](tb, `document.getElementById("snap-peak-wrap").dataset.bytes`); got != strconv.FormatInt(dev.PeakAllocatedBytes, 10) {
				t.Errorf("page peak = %s B, the serial decode says %d B", got, dev.PeakAllocatedBytes)
			}
			tb.click("#snap-copy")
			md := poll[string](tb, `(() => { const e = document.getElementById("snap-markdown"); return e ? e.value : ""; })()`, 10*time.Second)
			if md != wantMD {
				i := 0
				for i < len(md) && i < len(wantMD) && md[i] == wantMD[i] {
					i++
				}
				t.Errorf("the page's Markdown differs from the serial decode's at byte %d:\npage: …%.300s\nwant: …%.300s", i, md[i:], wantMD[i:])
			}
			evalJS[bool](tb, fmt.Sprintf(`(() => { const e = document.getElementById("snap-index"); e.value = "%d"; e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`, late))
			poll[string](tb, fmt.Sprintf(`document.body.getAttribute("data-snapshot-state") === "%d" ? "y" : ""`, late), 20*time.Second)
			if txt := tb.text("#snap-state"); !strings.Contains(txt, fmt.Sprintf("%s live allocations", bytesize.Commas(int64(st.LiveAllocations)))) {
				t.Errorf("state after entry %d lacks %d live allocations: %q", late, st.LiveAllocations, txt)
			}
			if tc.fail != load.PartFailExit {
				tb.assertClean()
				return
			}
			// The crash of the part worker's Go program is reported in
			// its console (wasm_exec.js: "exit code: 2"), and nothing else.
			tb.assertNoErrorBanner("after the part worker's crash")
			problems, _ := tb.rec.snapshot()
			crashes := 0
			for _, r := range tb.children() {
				p, _ := r.snapshot()
				problems = append(problems, p...)
			}
			for _, p := range problems {
				if strings.Contains(p, "exit code: 2") {
					crashes++
					continue
				}
				t.Errorf("browser problem: %s", p)
			}
			if crashes != 1 {
				t.Errorf("%d crashes of the part worker reported, want 1", crashes)
			}
		})
	}
}

// inWorker evaluates expr in the tab's analysis worker.
func inWorker[T any](t testing.TB, tb *tab, expr string) T {
	t.Helper()
	wctx, cancel := analysisWorker(t, tb)
	defer cancel()
	ctx, stop := context.WithTimeout(wctx, 20*time.Second)
	defer stop()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("in the analysis worker, %s: %v", expr, err)
	}
	return v
}
