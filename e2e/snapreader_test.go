//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestSnapshotWorkerReader checks that the analysis worker reads a dropped
// file through its nested reader worker (static/web/snapworker.js
// readSlice), not on its own thread, and that readSlice returns the bytes
// [off, end) of a Blob: compared with the file's bytes read here, at a
// start, a middle range crossing nothing in particular, and the end.
func TestSnapshotWorkerReader(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_fullstep.pickle")
	// A Blob of blobSize bytes, byte i being (7i+3) mod 256, made in the
	// worker; readSlice's answers are checked against this formula.
	const blobSize = 5 << 20
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.uploadFile("#snap-file", path)
	requireSnapshot(tb, "the real snapshot")
	tb.requireWatched("worker")

	targets, err := chromedp.Targets(tb.ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := chromedp.FromContext(tb.ctx)
	analysers, readers, parts := 0, 0, 0
	for _, ti := range targets {
		if ti.Type != "worker" || ti.BrowserContextID != c.BrowserContextID {
			continue
		}
		tctx, stop := context.WithTimeout(tb.ctx, 20*time.Second)
		wctx, cancel := chromedp.NewContext(tctx, chromedp.WithTargetID(ti.TargetID))
		role, err := chromedp.Run(wctx, chromedp.Evaluate[string](`self.name === readerName ? "reader" : (self.name === partName ? "part" : (go ? "analyser" : "?"))`))
		if err != nil {
			t.Fatalf("worker %s: %v", ti.URL, err)
		}
		switch role {
		case "reader":
			readers++
		case "part":
			// A part worker started ahead for the next large file
			// (split.go), with its own reader.
			parts++
		case "analyser":
			analysers++
			used, err := chromedp.Run(wctx, chromedp.Evaluate[bool](`reader !== null && !readerFailed`))
			if err != nil || !used {
				t.Errorf("the analysis worker read the file on its own thread (reader started: %v, %v)", used, err)
			}
			// Through the reader: bytes at the start, in the middle
			// (across the 4 MiB mark) and at the end of a Blob.
			for _, r := range [][2]int{{0, 10}, {4<<20 - 5, 4<<20 + 4099}, {blobSize - 7, blobSize}} {
				got, err := chromedp.Run(wctx, chromedp.Evaluate[[]int](fmt.Sprintf(`(async () => {
					const b = new Blob([new Uint8Array(%d).map((_, i) => (7 * i + 3) & 255)]);
					return Array.from(new Uint8Array(await readSlice(b, %d, %d))); })()`, blobSize, r[0], r[1]), chromedp.EvalAwaitPromise))
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != r[1]-r[0] {
					t.Fatalf("readSlice(%d, %d): %d bytes, want %d", r[0], r[1], len(got), r[1]-r[0])
				}
				for k, v := range got {
					if w := (7*(r[0]+k) + 3) % 256; v != w {
						t.Fatalf("readSlice(%d, %d): byte %d is %d, want %d", r[0], r[1], r[0]+k, v, w)
					}
				}
			}
			checkStream(t, wctx, blobSize)
		default:
			t.Errorf("worker %s is neither the analyser, its part worker nor a reader", ti.URL)
		}
		cancel()
		stop()
	}
	if analysers != 1 || parts > 1 || readers != 1+parts {
		t.Errorf("%d analysis workers, %d part workers and %d readers, want 1, at most 1 and one each", analysers, parts, readers)
	}
	tb.assertClean()
}

// checkStream checks the analysis worker's openStream (static/web/snapworker.js)
// on a Blob of blobSize bytes, byte i being (7i+3) mod 256: every byte of
// [off, end) comes once, in order, in buffers of 1000 bytes, then twice the
// one before up to 300000 (the last one the rest), each buffer given back
// once read; a stream closed after its first buffer ends (next gives null).
func checkStream(t *testing.T, wctx context.Context, blobSize int) {
	t.Helper()
	type result struct {
		N, Bad       int
		Sizes        []int
		First        int
		EndsAtClose  bool
		NoStreamFrom string
	}
	for _, r := range [][2]int{{0, blobSize}, {3, 1<<20 + 17}} {
		got, err := chromedp.Run(wctx, chromedp.Evaluate[result](fmt.Sprintf(`(async () => {
			const size = %d, off = %d, end = %d;
			const b = new Blob([new Uint8Array(size).map((_, i) => (7 * i + 3) & 255)]);
			const s = openStream(b, off, end, 1000, 300000, 2);
			if (s === null) {
				return {NoStreamFrom: "openStream returned null"};
			}
			let n = 0, bad = -1;
			const sizes = [];
			for (;;) {
				const u = await s.next();
				if (u === null) {
					break;
				}
				sizes.push(u.length);
				for (let k = 0; k < u.length; k++) {
					if (bad < 0 && u[k] !== ((7 * (off + n + k) + 3) & 255)) {
						bad = off + n + k;
					}
				}
				n += u.length;
				s.giveBack(u);
			}
			s.close();
			const s2 = openStream(b, 0, size, 1000, 4000, 2);
			const first = await s2.next();
			s2.close();
			const after = await s2.next();
			return {N: n, Bad: bad, Sizes: sizes, First: first.length, EndsAtClose: after === null};
		})()`, blobSize, r[0], r[1]), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		if got.NoStreamFrom != "" {
			t.Fatalf("openStream: %s (Chromium reads a Blob's stream with a BYOB reader)", got.NoStreamFrom)
		}
		if got.N != r[1]-r[0] || got.Bad >= 0 {
			t.Errorf("openStream(%d, %d): %d bytes, want %d; first wrong byte at %d (-1: none)", r[0], r[1], got.N, r[1]-r[0], got.Bad)
		}
		want, left := []int{}, r[1]-r[0]
		for size := 1000; left > 0; size = min(2*size, 300000) {
			want = append(want, min(size, left))
			left -= size
		}
		if fmt.Sprint(got.Sizes) != fmt.Sprint(want) {
			t.Errorf("openStream(%d, %d): buffers of %v bytes, want %v", r[0], r[1], got.Sizes, want)
		}
		if got.First != 1000 || !got.EndsAtClose {
			t.Errorf("a stream closed after its first buffer (%d bytes, want 1000): next gave null: %v", got.First, got.EndsAtClose)
		}
	}
}

// TestSnapshotStreamFails drops the real 3.2 MB snapshot while the
// analysis worker's stream of the file (snapworker.js openStream) breaks
// after its first buffer: its next buffer is refused (a read error of the
// reader) or never comes (the stream ends before the file does). The worker
// must read the rest in slices (wasm/snapworker blobReader.streamed) and
// show the file's own peak, as the analysis here finds it, and no error.
// The stream covers the file from its first MiB on (read on the worker's
// thread) and its first buffer is 2 MiB, so the break is mid-file; the test
// checks that one stream was opened and gave exactly one buffer.
func TestSnapshotStreamFails(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_fullstep.pickle")
	_, want := expectedReport(t, path)
	s := serveSite(t, distDir(t), "", "no-store")
	for _, mode := range []string{"rejects", "ends"} {
		t.Run(mode, func(t *testing.T) {
			tb := newTab(t, s)
			tb.open("/snapshot")
			poll[bool](tb, `document.body.getAttribute("data-snapshot-warm") === "drawn"`, 60*time.Second)
			wctx, cancel := analysisWorker(t, tb)
			defer cancel()
			// openStream wrapped: the first buffer passes, the next one is
			// refused or null; the real stream is closed by the worker.
			if _, err := chromedp.Run(wctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
				const open = self.openStream, mode = %q;
				self.broken = {opened: 0, given: 0};
				self.openStream = (...args) => {
					const s = open(...args);
					if (s === null) {
						return s;
					}
					self.broken.opened++;
					let asked = 0;
					return {...s, next: () => {
						if (asked++ >= 1) {
							return mode === "rejects" ? Promise.reject(new Error("planted read failure")) : Promise.resolve(null);
						}
						return s.next().then((u) => { if (u) self.broken.given++; return u; });
					}};
				};
				return true;
			})()`, mode))); err != nil {
				t.Fatal(err)
			}
			tb.dropFile("#snap-drop", path)
			requireSnapshot(tb, "the page shows an error")
			got := evalJS[string](tb, `document.getElementById("snap-peak-wrap").dataset.bytes`)
			if got != strconv.FormatInt(want.PeakAllocatedBytes, 10) {
				t.Errorf("page peak = %s B, analysis says %d B", got, want.PeakAllocatedBytes)
			}
			type counts struct{ Opened, Given int }
			broken, err := chromedp.Run(wctx, chromedp.Evaluate[counts](`({Opened: self.broken.opened, Given: self.broken.given})`))
			if err != nil {
				t.Fatal(err)
			}
			if broken.Opened != 1 || broken.Given != 1 {
				t.Errorf("%d streams opened, %d buffers given before the break; want 1 and 1 (the break was not mid-file)", broken.Opened, broken.Given)
			}
			tb.assertClean()
		})
	}
}
