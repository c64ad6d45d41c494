package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

// loadGenerated loads a generated scenario as the worker does.
func loadGenerated(t *testing.T, scenario string) *File {
	t.Helper()
	data, _, err := gen.Bytes(gen.Scenario(scenario))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Load(Input{Name: scenario + ".pickle", R: bytes.NewReader(data), Size: int64(len(data)), Source: bytes.NewReader(data)},
		Options{Analysis: analysis.Options{TimelinePoints: TimelinePoints}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sameJSON compares two values by their plain JSON (timelines included):
// a field lost on the way shows, while nil and empty slices, which JSON
// cannot tell apart, do not.
func sameJSON(t *testing.T, got, want any) bool {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		t.Logf("JSON differs at byte %d:\n got …%s\nwant …%s", i, g[max(0, i-80):min(len(g), i+80)], w[max(0, i-80):min(len(w), i+80)])
		return false
	}
	return true
}

// roundTrip encodes a response as the worker does and decodes it as the
// page does.
func roundTrip(t *testing.T, r Response) Response {
	t.Helper()
	js, bufs, err := EncodeResponse(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeResponse(js, bufs)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestResponsesRoundTrip sends every kind of answer of the worker through
// the encoding the worker uses and the decoding the page uses: what the
// page reads must equal what the worker had (but the largest allocations,
// which the page does not show), so that a renamed field or a timeline
// lost on the way fails here rather than only in Chromium.
func TestResponsesRoundTrip(t *testing.T) {
	f := loadGenerated(t, "everything")
	res := NewResult(f)
	if len(res.Devices) != 2 || len(res.Devices[0].Timeline) == 0 || res.Devices[0].SiteSeries == nil {
		t.Fatalf("the generated file should give 2 devices with timelines, got %+v", res.Stats)
	}
	want := *res
	rep := *want.Report
	rep.Devices = append([]analysis.DeviceReport(nil), rep.Devices...)
	for i := range rep.Devices {
		rep.Devices[i].LargestAtPeak = nil
	}
	want.Report = &rep
	got := roundTrip(t, Response{Type: ResponseResult, ID: 7, Result: res})
	if got.Type != ResponseResult || got.ID != 7 || !sameJSON(t, got.Result, &want) {
		t.Errorf("result differs after the round trip")
	}
	if len(res.Devices[0].LargestAtPeak) == 0 {
		t.Error("encoding changed the worker's own result")
	}

	d := f.Analysis.Devices[0]
	st := d.StateAt(d.Headline().PeakIndex, StateSegments, StateSites)
	z := d.Series(0, d.Trace.Len()-1, TimelinePoints, analysis.DefaultSeriesSites)
	hs := []analysis.Headline{d.Headline(), f.Analysis.Devices[1].Headline()}
	other := loadGenerated(t, "training")
	for _, r := range []Response{
		{Type: ResponseState, ID: 3, State: &st},
		{Type: ResponseSeries, ID: 4, Series: &z},
		{Type: ResponseSummary, ID: 5, Summary: hs},
		{Type: ResponseProgress, ID: 6, Progress: &Progress{Stage: StageDecode, Done: 4 << 20, Total: 1 << 30}},
		{Type: ResponseCompare, ID: 8, Comparison: Compare(f, other)},
		{Type: ResponseRank, ID: 11, Rank: func() *Rank { r := FileRank(f); return &r }()},
		{Type: ResponseRank, ID: 12, Rank: &Rank{File: "rank5.pickle", Rank: 5, Error: "rank5.pickle is not a readable memory snapshot"}},
		{Type: ResponseStart, ID: 14, Start: 123456789},
		{Type: ResponsePart, ID: 15, Part: []byte{1, 2, 3, 0, 255}, PartBytes: 1 << 33, PartMemory: 300 << 20, PartMS: map[string]int64{"start": 5, "decoded": 900}},
		ErrorResponse(9, &InternalError{Offset: 12, Stage: StageDecode, Value: "boom"}),
		ErrorResponse(10, errors.New("x.pickle is not a readable memory snapshot")),
	} {
		if got := roundTrip(t, r); !sameJSON(t, got, r) {
			t.Errorf("%s message differs after the round trip:\n got %+v\nwant %+v", r.Type, got, r)
		}
	}
	if r := ErrorResponse(1, &InternalError{}); !r.Internal {
		t.Error("an internal error is not marked as one")
	}

	rk := FileRank(f)
	if js, bufs, err := EncodeResponse(Response{Type: ResponseRank, ID: 1, Rank: &rk}); err != nil || len(bufs) != 1 ||
		strings.Contains(js, `"a":`) || rk.Line == nil || len(rk.Line.Points) == 0 {
		t.Errorf("a rank's line is not packed out of the JSON (%d buffers, %v), or the worker's row lost it", len(bufs), err)
	}
	if _, err := DecodeResponse(`{"type":"rank","id":1,"rank":{"file":"a","rank":0,"line":{"device":0,"points":null}}}`, nil); err == nil {
		t.Error("a rank's line without its buffer decoded")
	}
	if js, bufs, err := EncodeResponse(Response{Type: ResponsePart, Part: []byte("part")}); err != nil || len(bufs) != 1 || strings.Contains(js, "cGFydA") {
		t.Errorf("a part is not carried in its buffer, out of the JSON: %s, %d buffers, %v", js, len(bufs), err)
	}
	if _, err := DecodeResponse(`{"type":"part","id":1,"part_bytes":5}`, nil); err == nil {
		t.Error("a part message without its buffer decoded")
	}
	if _, err := DecodeResponse(`{"type":"series","id":1,"series":{"from":0,"to":1}}`, nil); err == nil {
		t.Error("a series without its buffer decoded")
	}
	if _, err := DecodeResponse(`{"type":"result","id":1,"result":{"devices":[{"device":0}]}}`, nil); err == nil {
		t.Error("a result without its timelines decoded")
	}
	if _, err := DecodeResponse("not json", nil); err == nil {
		t.Error("garbage decoded")
	}
}

// TestRequestsRoundTrip checks the page's requests and the refusal of an
// unknown one.
func TestRequestsRoundTrip(t *testing.T) {
	for _, r := range []Request{
		{Type: RequestAnalyze, ID: 1, Name: "a.pickle"},
		{Type: RequestCompare, ID: 2, Name: "b.pickle"},
		{Type: RequestState, ID: 3, Device: 1, Index: -1},
		{Type: RequestSeries, ID: 4, Device: 0, From: 10, To: 2000, Points: TimelinePoints},
		{Type: RequestRank, ID: 5, Name: "dir/rank3.pickle"},
		{Type: RequestWarm},
		{Type: RequestPart, ID: 7, Name: "big.pickle", At: 5 << 30},
		{Type: RequestPart, ID: 8, At: 1, Fail: PartFailCorrupt},
	} {
		got, err := DecodeRequest(EncodeRequest(r))
		if err != nil || got != r {
			t.Errorf("%+v came back as %+v (%v)", r, got, err)
		}
	}
	if _, err := DecodeRequest(`{"type":"alloc","id":1}`); err == nil || !strings.Contains(err.Error(), `unknown request "alloc"`) {
		t.Errorf("unknown request: %v", err)
	}
}

// panicReader fails the way a bug would, after some bytes.
type panicReader struct {
	r io.Reader
	n int
}

func (p *panicReader) Read(b []byte) (int, error) {
	if p.n <= 0 {
		panic("reader bug")
	}
	b = b[:min(len(b), p.n)]
	n, err := p.r.Read(b)
	p.n -= n
	return n, err
}

func TestLoadErrors(t *testing.T) {
	noData := []byte("\x80\x04}\x8c\x08segments]s.")
	data, _, err := gen.Bytes(gen.Scenario("training"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   Input
		kind error
		msg  string
	}{
		{"empty", Input{Name: "e.pickle", R: bytes.NewReader(nil), Size: 0}, nil, "e.pickle is empty"},
		{"text", Input{Name: "n.txt", R: strings.NewReader("hello"), Size: 5}, snapshot.ErrNotPickle, "n.txt is not a readable memory snapshot"},
		{"no data", Input{Name: "d.pickle", R: bytes.NewReader(noData), Size: int64(len(noData))}, ErrNoData, "d.pickle holds no trace"},
		{"truncated", Input{Name: "t.pickle", R: bytes.NewReader(data[:len(data)/2]), Size: -1}, snapshot.ErrTruncated, "truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.in, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.msg) || (tt.kind != nil && !errors.Is(err, tt.kind)) {
				t.Errorf("error %v, want %v mentioning %q", err, tt.kind, tt.msg)
			}
		})
	}
	_, err = Load(Input{Name: "p.pickle", R: &panicReader{bytes.NewReader(data), 3000}, Size: int64(len(data))}, Options{})
	var ie *InternalError
	if !errors.As(err, &ie) || ie.Stage != StageDecode || ie.Offset != 3000 || !strings.Contains(err.Error(), "please file an issue") {
		t.Errorf("a panic gave %v", err)
	}
}

// TestLoadProgressAndSummary checks the order of what Load reports: decode
// progress by bytes up to the size, the summary with the report's
// headline numbers, then the later stages.
func TestLoadProgressAndSummary(t *testing.T) {
	data, _, err := gen.Bytes(gen.Options{Seed: 3, Layers: 4, TargetBytes: 12 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	var last int64
	var summary []analysis.Headline
	f, err := Load(Input{Name: "x", R: bytes.NewReader(data), Size: int64(len(data))}, Options{
		Progress: func(st Stage, done, total int64) {
			if total != int64(len(data)) || done < last || done > total {
				t.Errorf("progress %s %d/%d after %d", st, done, total, last)
			}
			last = done
			events = append(events, string(st))
		},
		Summary: func(hs []analysis.Headline, _ [][]analysis.Point) { summary = hs; events = append(events, "summary") },
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(events, " ")
	if !strings.HasPrefix(got, "decode decode decode") || !strings.HasSuffix(got, "decode analyse summary report") || last != int64(len(data)) {
		t.Errorf("events %q, last %d of %d", got, last, len(data))
	}
	d := f.Report.Devices[0]
	if len(summary) != 1 || summary[0].PeakAllocatedBytes != d.PeakAllocatedBytes || summary[0].PeakIndex != d.PeakIndex ||
		summary[0].PeakReservedBytes != d.PeakReservedBytes || summary[0].Entries != d.Entries {
		t.Errorf("summary %+v does not match the report", summary)
	}
}

// TestOpenFileKeepsStacksInTheFile opens a distinct-stack family file from
// disk: most stacks stay in the file, and the report's displayed stacks are
// read back from it.
func TestOpenFileKeepsStacksInTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.pickle")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.WriteFamily(fh, gen.FamilyOptions{Family: gen.DistinctStacks, Iterations: 60000}); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	f, closer, err := OpenFile(path, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	st := f.Stats()
	if st.LazyStacks == 0 || st.LazyStacks > st.Stacks {
		t.Fatalf("stats %+v: want lazy stacks", st)
	}
	for _, s := range f.Report.Devices[0].TopSites {
		if len(s.Stack) == 0 || strings.HasPrefix(s.Stack[0], "(the stack could not") {
			t.Errorf("site %s: stack %q", s.Label, s.Stack)
		}
	}
}

func TestRankOf(t *testing.T) {
	for name, want := range map[string]int{
		"rank3.pickle": 3, "snapshot_rank_07.pickle": 7, "run/Rank-12.pkl": 12, "mem_snapshot_5.pickle": 5,
		"snapshot-2.pickle.gz": 2, "pt26_cs336_ctx128_fullstep.pickle": -1, "snapshot.pickle": -1, "ctx128": -1,
	} {
		if got := RankOf(name); got != want {
			t.Errorf("RankOf(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestOverview(t *testing.T) {
	const gib = 1 << 30
	h := func(alloc, res int64) []analysis.Headline {
		return []analysis.Headline{{PeakAllocatedBytes: alloc, PeakReservedBytes: res}}
	}
	o := NewOverview([]Rank{
		NewRank("r/rank3.pickle", h(40*gib, 44*gib)),
		NewRank("r/rank0.pickle", h(46*gib, 50*gib)), // rank 0 holds more
		NewRank("r/rank1.pickle", h(40*gib+100<<20, 44*gib)),
		NewRank("r/rank2.pickle", h(40*gib, 44*gib+200<<20)), // within 256 MiB
		{File: "r/rank4.pickle", Rank: 4, Error: "truncated"},
		NewRank("r/extra.pickle", h(40*gib, 44*gib)),
	})
	var order []int
	for _, r := range o.Ranks {
		order = append(order, r.Rank)
	}
	if !reflect.DeepEqual(order, []int{0, 1, 2, 3, 4, -1}) {
		t.Errorf("order %v", order)
	}
	if o.MedianAllocatedBytes != 40*gib || o.MedianReservedBytes != 44*gib {
		t.Errorf("medians %d %d", o.MedianAllocatedBytes, o.MedianReservedBytes)
	}
	for _, r := range o.Ranks {
		if r.Outlier != (r.Rank == 0) {
			t.Errorf("rank %d outlier %v %q", r.Rank, r.Outlier, r.Why)
		}
	}
	if why := strings.Join(o.Ranks[0].Why, "; "); !strings.Contains(why, "peak allocated 6.00 GiB above the median 40.00 GiB") ||
		!strings.Contains(why, "peak reserved 6.00 GiB above") {
		t.Errorf("why %q", why)
	}
	// Marking the marked rows again gives the same marks, not more.
	again := NewOverview(o.Ranks)
	if !reflect.DeepEqual(again, o) {
		t.Errorf("the overview of an overview differs:\n%+v\n%+v", again.Ranks[0], o.Ranks[0])
	}
	stale := o.Ranks[1]
	stale.Outlier, stale.Why = true, []string{"old"}
	if r := NewOverview([]Rank{stale, o.Ranks[2], o.Ranks[3]}).Ranks[0]; r.Outlier || r.Why != nil {
		t.Errorf("a stale mark stays: %v %q", r.Outlier, r.Why)
	}
	if two := NewOverview([]Rank{NewRank("a", h(1, 1)), NewRank("b", h(100*gib, 1))}); two.Ranks[0].Outlier || two.Ranks[1].Outlier {
		t.Error("outliers marked among two ranks")
	}
}

// TestFileRank checks a loaded file's overview row against the analysis
// and the report read here: the highest peaks of its devices, its size and
// its out-of-memory events (the "everything" scenario has one).
func TestFileRank(t *testing.T) {
	f := loadGenerated(t, "everything")
	r := FileRank(f)
	var alloc, res int64
	ooms := 0
	for i, d := range f.Analysis.Devices {
		h := d.Headline()
		alloc, res = max(alloc, h.PeakAllocatedBytes), max(res, h.PeakReservedBytes)
		ooms += len(f.Report.Devices[i].OOMEvents)
	}
	if r.File != "everything.pickle" || r.Bytes != f.Bytes || r.Bytes <= 0 || len(r.Devices) != 2 {
		t.Errorf("row %+v", r)
	}
	if r.PeakAllocatedBytes != alloc || r.PeakReservedBytes != res || alloc <= 0 {
		t.Errorf("peaks %d %d, want %d %d", r.PeakAllocatedBytes, r.PeakReservedBytes, alloc, res)
	}
	if r.OOMEvents != ooms || ooms == 0 {
		t.Errorf("OOM events %d, want %d (> 0)", r.OOMEvents, ooms)
	}
	// Its line follows the device of the highest peak allocated, and
	// holds that peak (the timeline keeps each bucket's extremes), in at
	// most RankPoints points at the overview's resolution.
	data, _, err := gen.Bytes(gen.Scenario("everything"))
	if err != nil {
		t.Fatal(err)
	}
	small, err := Load(Input{Name: "everything.pickle", R: bytes.NewReader(data), Size: int64(len(data))},
		Options{Analysis: analysis.Options{TimelinePoints: RankPoints}})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []Rank{r, FileRank(small)} {
		if row.Line == nil || len(row.Line.Points) < 2 {
			t.Fatalf("no line: %+v", row.Line)
		}
		var top, topRes int64
		for _, p := range row.Line.Points {
			top, topRes = max(top, p.Allocated), max(topRes, p.Reserved)
		}
		var want analysis.Headline
		for _, d := range f.Analysis.Devices {
			if h := d.Headline(); h.PeakAllocatedBytes > want.PeakAllocatedBytes {
				want = h
			}
		}
		if row.Line.Device != want.Device || top != want.PeakAllocatedBytes || topRes != want.PeakReservedBytes {
			t.Errorf("line of device %d peaks %d %d, want device %d peaks %d %d", row.Line.Device, top, topRes, want.Device,
				want.PeakAllocatedBytes, want.PeakReservedBytes)
		}
	}
	if n := len(FileRank(small).Line.Points); n > RankPoints {
		t.Errorf("%d points at the overview's resolution, want at most %d", n, RankPoints)
	}
	plain, err := Load(Input{Name: "everything.pickle", R: bytes.NewReader(data), Size: int64(len(data))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if FileRank(plain).Line != nil {
		t.Error("a file analysed without a timeline has a line")
	}
	for name, want := range map[string]bool{"rank0.pickle": true, "a.pkl": true, "b.pickle.gz": true, "notes.txt": false, "x.pickle.txt": false} {
		if IsSnapshotName(name) != want {
			t.Errorf("IsSnapshotName(%q) = %v", name, !want)
		}
	}
}

// TestRankPool simulates the pool on files of mixed sizes, each finishing
// in a time proportional to its size, and checks at every start the
// rule's promises independently of RankPool: never more than Workers files
// at once, never more than Budget bytes unless the file runs alone, files
// started in order, and every file analysed.
func TestRankPool(t *testing.T) {
	const gib = int64(1) << 30
	sizes := []int64{gib / 2, gib / 2, gib, 3 * gib, 100 << 20, 100 << 20, 1, -1, 2 * gib, gib + 1, gib / 4, 0}
	p := &RankPool{Workers: 3, Budget: 2 * gib}
	type job struct{ i, end int }
	var running []job
	next, clock, alone := 0, 0, 0
	for next < len(sizes) || len(running) > 0 {
		for next < len(sizes) && p.CanStart(sizes[next]) {
			var sum int64
			for _, j := range running {
				sum += max(sizes[j.i], 0)
			}
			sum += max(sizes[next], 0)
			if len(running) >= 3 {
				t.Fatalf("file %d started with %d running", next, len(running))
			}
			if sum > 2*gib {
				if len(running) > 0 {
					t.Fatalf("file %d started with %d B in flight, over the budget", next, sum)
				}
				alone++
			}
			p.Start(sizes[next])
			running = append(running, job{next, clock + 1 + int(max(sizes[next], 0)>>24)})
			next++
		}
		// The earliest to end finishes.
		k := 0
		for x, j := range running {
			if j.end < running[k].end {
				k = x
			}
		}
		clock = running[k].end
		p.Done(sizes[running[k].i])
		running = append(running[:k], running[k+1:]...)
		if n, b := p.Running(); n != len(running) || (n == 0 && b != 0) {
			t.Fatalf("pool says %d files, %d B; %d running", n, b, len(running))
		}
	}
	if alone != 1 { // the 3 GiB file
		t.Errorf("%d files ran alone over the budget, want 1", alone)
	}
	// Three small files fit together; a fourth waits for a worker.
	q := &RankPool{Workers: 3, Budget: 2 * gib}
	for range 3 {
		q.Start(1)
	}
	if q.CanStart(1) {
		t.Error("a fourth file started on three workers")
	}
	if (&RankPool{Workers: 2, Budget: gib}).CanStart(5*gib) != true {
		t.Error("a file over the budget does not start on an idle pool")
	}
	busy := &RankPool{Workers: 2, Budget: gib}
	busy.Start(gib / 2)
	if busy.CanStart(gib/2+1) || !busy.CanStart(gib/2) {
		t.Error("the budget is not applied to the sum in flight")
	}
}

// TestOutlierBand checks the band's edges against OutlierRule's words: more
// than 5 % and more than 256 MiB from the median.
func TestOutlierBand(t *testing.T) {
	const mib = int64(1) << 20
	for _, c := range []struct{ median, halfWidth int64 }{
		{40 << 30, 2048 * mib}, // 5 % of 40 GiB = 2 GiB > 256 MiB
		{1 << 30, 256 * mib},   // 5 % of 1 GiB = 51.2 MiB < 256 MiB
		{0, 256 * mib},
	} {
		h := func(alloc, res int64) []analysis.Headline {
			return []analysis.Headline{{PeakAllocatedBytes: alloc, PeakReservedBytes: res}}
		}
		lo, hi := OutlierBand(c.median)
		if lo != c.median-c.halfWidth || hi != c.median+c.halfWidth {
			t.Errorf("OutlierBand(%d) = %d…%d, want ±%d", c.median, lo, hi, c.halfWidth)
		}
		ranks := []Rank{NewRank("rank0", h(c.median, 0)), NewRank("rank1", h(c.median, 0)), NewRank("rank2", h(hi, 0)),
			NewRank("rank3", h(c.median, 0)), NewRank("rank4", h(hi+1, 0))}
		o := NewOverview(ranks)
		if o.MedianAllocatedBytes != c.median || o.Ranks[2].Outlier || !o.Ranks[4].Outlier {
			t.Errorf("median %d: at the band's edge outlier=%v, one byte over outlier=%v", o.MedianAllocatedBytes, o.Ranks[2].Outlier, o.Ranks[4].Outlier)
		}
	}
}

// TestDiagnosisRoundTrip loads a file as the worker does for analyze: the
// result from Options.First, then the diagnosis of the loaded file, each
// through the encoding the worker uses and the decoding the page uses.
// The first must be the whole result without its diagnoses, and the
// first with the diagnosis added (AddDiagnosis) must be the result of a
// load without Options.First (the largest allocations and the timings
// aside), as one message brought it before.
func TestDiagnosisRoundTrip(t *testing.T) {
	for _, scenario := range []string{"everything", "training"} {
		t.Run(scenario, func(t *testing.T) {
			data, _, err := gen.Bytes(gen.Scenario(scenario))
			if err != nil {
				t.Fatal(err)
			}
			var first []Response
			f, err := Load(Input{Name: scenario + ".pickle", R: bytes.NewReader(data), Size: int64(len(data)), Source: bytes.NewReader(data)},
				Options{Analysis: analysis.Options{TimelinePoints: TimelinePoints}, First: func(r *Result) {
					first = append(first, roundTrip(t, Response{Type: ResponseResult, ID: 7, Result: r}))
				}})
			if err != nil {
				t.Fatal(err)
			}
			if len(first) != 1 {
				t.Fatalf("Options.First called %d times, want once", len(first))
			}
			got := first[0].Result
			if first[0].Type != ResponseResult || first[0].ID != 7 || got == nil || !got.Diagnosing {
				t.Fatalf("first message %+v: want a result marked Diagnosing", first[0])
			}
			if got.DecodeMS != f.Decode.Milliseconds() || got.AnalyseMS > f.Analyse.Milliseconds() {
				t.Errorf("first result: decoded in %d ms, analysed in %d; the load: %d, %d", got.DecodeMS, got.AnalyseMS,
					f.Decode.Milliseconds(), f.Analyse.Milliseconds())
			}
			// The independent expectation: a plain load, as the CLI does.
			plain := NewResult(loadGenerated(t, scenario))
			want := *plain
			rep := *want.Report
			rep.Devices = append([]analysis.DeviceReport(nil), rep.Devices...)
			noDiag := rep
			noDiag.Devices = append([]analysis.DeviceReport(nil), rep.Devices...)
			for i := range rep.Devices {
				if len(rep.Devices[i].Steps) == 0 || rep.Devices[i].Diagnosis.Cause == "" {
					t.Fatalf("device %d: the plain result should have steps and a cause", i)
				}
				rep.Devices[i].LargestAtPeak = nil
				noDiag.Devices[i].LargestAtPeak = nil
				noDiag.Devices[i].DiagnosisReport = analysis.DiagnosisReport{}
			}
			want.Report = &noDiag
			want.Diagnosing, want.DecodeMS, want.AnalyseMS = true, got.DecodeMS, got.AnalyseMS // two loads' timings
			if !sameJSON(t, got, &want) {
				t.Error("the first result is not the whole result without its diagnoses")
			}

			dm := roundTrip(t, Response{Type: ResponseDiagnosis, ID: 7, Diagnosis: NewDiagnosis(f)})
			if dm.Type != ResponseDiagnosis || dm.ID != 7 || dm.Diagnosis == nil || dm.Result != nil {
				t.Fatalf("diagnosis message %+v", dm)
			}
			if err := got.AddDiagnosis(dm.Diagnosis); err != nil {
				t.Fatal(err)
			}
			if got.Diagnosing || got.AnalyseMS != f.Analyse.Milliseconds() {
				t.Errorf("after AddDiagnosis: diagnosing %v, analyse %d ms, want false, %d", got.Diagnosing, got.AnalyseMS, f.Analyse.Milliseconds())
			}
			want.Report, want.Diagnosing, want.AnalyseMS = &rep, false, got.AnalyseMS
			if !sameJSON(t, got, &want) {
				t.Error("the first result with the diagnosis added is not the whole result")
			}
			if err := got.AddDiagnosis(dm.Diagnosis); err == nil {
				t.Error("a second diagnosis was added to a whole result")
			}
		})
	}
}

// TestDiagnosisMismatch: a diagnosis that does not fit its result (other
// devices, buffers missing) is an error, not a half-merged result.
func TestDiagnosisMismatch(t *testing.T) {
	f := loadGenerated(t, "everything")
	d := NewDiagnosis(f)
	res := &Result{Report: &analysis.Report{Devices: make([]analysis.DeviceReport, len(d.Devices)+1)}, Diagnosing: true}
	if err := res.AddDiagnosis(d); err == nil || !res.Diagnosing {
		t.Errorf("a diagnosis of %d devices added to a result of %d: err %v", len(d.Devices), len(res.Devices), err)
	}
	js, bufs, err := EncodeResponse(Response{Type: ResponseDiagnosis, Diagnosis: d})
	if err != nil {
		t.Fatal(err)
	}
	if len(bufs) != len(d.Devices) {
		t.Fatalf("%d buffers for %d devices", len(bufs), len(d.Devices))
	}
	if _, err := DecodeResponse(js, bufs[1:]); err == nil {
		t.Error("a diagnosis without one of its buffers was read")
	}
	if len(d.Devices[0].Steps) == 0 {
		t.Fatal("the generated file should have steps")
	}
	if _, err := DecodeResponse(js, [][]byte{bufs[0][:len(bufs[0])/2], bufs[1]}); err == nil {
		t.Error("a diagnosis with a cut buffer was read")
	}
}
