package load

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

// summaryInputs are the files of TestSummaryTimelines: the real snapshots
// of ../shared/snapshots, a generated file of two devices and one of the
// distinct-stacks family (most stacks left in the file).
func summaryInputs(t *testing.T) map[string][]byte {
	t.Helper()
	in := map[string][]byte{}
	paths, _ := filepath.Glob("../../../shared/snapshots/*.pickle")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		in[filepath.Base(p)] = b
	}
	if len(paths) == 0 {
		t.Log("no real snapshots in ../shared/snapshots: generated files only")
	}
	every, _, err := gen.Bytes(gen.Scenario("everything"))
	if err != nil {
		t.Fatal(err)
	}
	in["everything"] = every
	var distinct bytes.Buffer
	if _, err := gen.WriteFamily(&distinct, gen.FamilyOptions{Family: gen.DistinctStacks, TargetBytes: 3 << 20, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	in["distinct-3MiB"] = distinct.Bytes()
	return in
}

// TestSummaryTimelines loads each file as the worker does and sends its
// summary message, timelines included, through the worker's encoding and
// the page's decoding at the moment Load hands it over (before the
// report): each device's timeline must come out equal to the Timeline of
// the result of a second, independent load of the same bytes (without a
// summary, as the CLI and the tests load), to the result's own timeline
// after its round trip, and to the device's Series over the whole trace
// (which replays the trace again, state by state); and it must hold the
// headline's exact peaks. A comparison's load (no timeline points) sends
// empty timelines.
func TestSummaryTimelines(t *testing.T) {
	for name, data := range summaryInputs(t) {
		t.Run(name, func(t *testing.T) {
			var sent *Response
			var result *Response
			f, err := Load(Input{Name: name, R: bytes.NewReader(data), Size: int64(len(data)), Source: bytes.NewReader(data)}, Options{
				Analysis:      analysis.Options{TimelinePoints: TimelinePoints},
				EarlyTimeline: 1, // these files are smaller than EarlyTimelineEntries
				Summary: func(hs []analysis.Headline, tls [][]analysis.Point) {
					r := roundTrip(t, Response{Type: ResponseSummary, ID: 2, Summary: hs, Timelines: tls})
					sent = &r
				},
				First: func(res *Result) {
					r := roundTrip(t, Response{Type: ResponseResult, ID: 2, Result: res})
					result = &r
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if sent == nil || result == nil {
				t.Fatal("no summary or no result")
			}
			other, err := Load(Input{Name: name, R: bytes.NewReader(data), Size: int64(len(data)), Source: bytes.NewReader(data)},
				Options{Analysis: analysis.Options{TimelinePoints: TimelinePoints}})
			if err != nil {
				t.Fatal(err)
			}
			want := other.Report.Devices
			if len(sent.Summary) != len(want) || len(sent.Timelines) != len(want) || len(result.Result.Devices) != len(want) {
				t.Fatalf("summary of %d devices with %d timelines, result of %d, want %d", len(sent.Summary), len(sent.Timelines),
					len(result.Result.Devices), len(want))
			}
			drawn := 0
			for i, w := range want {
				got := sent.Timelines[i]
				if !slices.Equal(got, w.Timeline) {
					t.Errorf("device %d: the summary's timeline (%d points) differs from the independent load's result (%d points)",
						w.Device, len(got), len(w.Timeline))
				}
				if !slices.Equal(got, result.Result.Devices[i].Timeline) {
					t.Errorf("device %d: the summary's timeline differs from the result message's", w.Device)
				}
				n := w.Entries
				if n == 0 {
					if got != nil {
						t.Errorf("device %d has no entries but a timeline of %d points", w.Device, len(got))
					}
					continue
				}
				drawn++
				if series := f.Analysis.Devices[i].Series(-1, n-1, TimelinePoints, 1).Points; !slices.Equal(got, series) {
					t.Errorf("device %d: the summary's timeline differs from the Series over the whole trace", w.Device)
				}
				var maxA, maxR int64
				for _, p := range got {
					maxA, maxR = max(maxA, p.Allocated), max(maxR, p.Reserved)
				}
				h := sent.Summary[i]
				if maxA != h.PeakAllocatedBytes || maxR != h.PeakReservedBytes || got[0].Index != -1 || got[len(got)-1].Index != n-1 {
					t.Errorf("device %d: timeline of entries %d…%d peaks at %d allocated, %d reserved; the headline says %d, %d over entries -1…%d",
						w.Device, got[0].Index, got[len(got)-1].Index, maxA, maxR, h.PeakAllocatedBytes, h.PeakReservedBytes, n-1)
				}
			}
			if drawn == 0 {
				t.Fatal("no device with a timeline: the test tests nothing")
			}

			// A comparison's second file is loaded without timeline
			// points: its summary carries none, and still decodes.
			var cmp *Response
			if _, err := Load(Input{Name: name, R: bytes.NewReader(data), Size: int64(len(data))}, Options{
				EarlyTimeline: 1,
				Summary: func(hs []analysis.Headline, tls [][]analysis.Point) {
					r := roundTrip(t, Response{Type: ResponseSummary, ID: 3, Summary: hs, Timelines: tls})
					cmp = &r
				},
			}); err != nil {
				t.Fatal(err)
			}
			if cmp == nil || len(cmp.Summary) != len(want) || slices.ContainsFunc(cmp.Timelines, func(p []analysis.Point) bool { return p != nil }) {
				t.Errorf("a load without timeline points sent the summary %+v", cmp)
			}
		})
	}
}

// TestSummaryMessageChecks: a summary's timelines travel in its buffers,
// out of the JSON, one per device; a summary whose buffers do not match
// its devices, or whose timeline has site bands, is refused.
func TestSummaryMessageChecks(t *testing.T) {
	hs := []analysis.Headline{{Device: 0, Entries: 2}, {Device: 1, Entries: 2}}
	pts := []analysis.Point{{Index: -1}, {Index: 0, TimeUS: 7, Allocated: 512, Reserved: 2048}, {Index: 1, Allocated: 1 << 40, Reserved: 1 << 41}}
	js, bufs, err := EncodeResponse(Response{Type: ResponseSummary, Summary: hs, Timelines: [][]analysis.Point{nil, pts}})
	if err != nil || len(bufs) != 2 || bytes.Contains([]byte(js), []byte(`"a":`)) {
		t.Fatalf("summary: %s, %d buffers, %v: want the timelines out of the JSON, a buffer per device", js, len(bufs), err)
	}
	r, err := DecodeResponse(js, bufs)
	if err != nil || len(r.Timelines) != 2 || r.Timelines[0] != nil || !slices.Equal(r.Timelines[1], pts) {
		t.Errorf("decoded timelines %v, %v; want none, then %v", r.Timelines, err, pts)
	}
	if _, err := DecodeResponse(js, bufs[:1]); err == nil {
		t.Error("a summary of two devices with one buffer decoded")
	}
	banded := analysis.PackSeries(pts, &analysis.SiteSeries{Values: [][]int64{{1, 2, 3}}})
	if _, err := DecodeResponse(js, [][]byte{bufs[0], banded}); err == nil {
		t.Error("a summary's timeline with site bands decoded")
	}
	if _, _, err := EncodeResponse(Response{Type: ResponseSummary, Summary: hs[:1], Timelines: [][]analysis.Point{nil, pts}}); err == nil {
		t.Error("a summary with more timelines than devices encoded")
	}
}

// TestEarlyTimeline: a summary carries the timelines only for files of at
// least Options.EarlyTimeline trace entries (all devices together; 0:
// EarlyTimelineEntries), counted here from the result, not the headlines.
func TestEarlyTimeline(t *testing.T) {
	data, _, err := gen.Bytes(gen.Scenario("everything"))
	if err != nil {
		t.Fatal(err)
	}
	load := func(early int) (hs []analysis.Headline, tls [][]analysis.Point, entries int) {
		f, err := Load(Input{Name: "everything", R: bytes.NewReader(data), Size: int64(len(data))}, Options{
			Analysis:      analysis.Options{TimelinePoints: TimelinePoints},
			EarlyTimeline: early,
			Summary:       func(h []analysis.Headline, p [][]analysis.Point) { hs, tls = h, p },
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Report.Devices {
			entries += d.Entries
		}
		return hs, tls, entries
	}
	_, _, n := load(1)
	if n < 2 || n >= EarlyTimelineEntries {
		t.Fatalf("%d entries: the test needs a file of two or more, under EarlyTimelineEntries (%d)", n, EarlyTimelineEntries)
	}
	for _, c := range []struct {
		early int
		want  bool
	}{{0, false}, {1, true}, {n - 1, true}, {n, true}, {n + 1, false}} {
		hs, tls, _ := load(c.early)
		if len(hs) < 2 {
			t.Fatalf("EarlyTimeline %d: %d headlines, want the file's two devices", c.early, len(hs))
		}
		if got := len(tls) == len(hs) && !slices.ContainsFunc(tls, func(p []analysis.Point) bool { return len(p) == 0 }); got != c.want || !c.want && tls != nil {
			t.Errorf("EarlyTimeline %d, %d entries: timelines %d (%v), want them: %v", c.early, n, len(tls), tls != nil, c.want)
		}
	}
}
