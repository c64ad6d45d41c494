package analysis

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"oomscope/snapshot"
)

// twoDevices builds a snapshot whose two devices allocate from stacks of
// three sites: device 0 from a.py then b.py, device 1 from c.py then
// a.py; every allocation is freed.
func twoDevices() *snapshot.Snapshot {
	b := newBuilder()
	sa := b.stack(py("a.py", 1, "fa"))
	sb := b.stack(py("b.py", 2, "fb"))
	sc := b.stack(py("c.py", 3, "fc"))
	b.ev(snapshot.ActionAlloc, 0x1000, 100, sa)
	b.ev(snapshot.ActionAlloc, 0x2000, 200, sb)
	b.ev(snapshot.ActionFreeCompleted, 0x1000, 100, sa)
	b.ev(snapshot.ActionFreeCompleted, 0x2000, 200, sb)
	var t1 snapshot.Trace
	for i, e := range []snapshot.TraceEntry{
		{Action: snapshot.ActionAlloc, Addr: 0x1000, Size: 300, Frames: sc},
		{Action: snapshot.ActionAlloc, Addr: 0x3000, Size: 50, Frames: sa},
		{Action: snapshot.ActionFreeCompleted, Addr: 0x3000, Size: 50, Frames: sa},
		{Action: snapshot.ActionFreeCompleted, Addr: 0x1000, Size: 300, Frames: sc},
	} {
		e.TimeUS = int64(5000 + i)
		t1.Append(e)
	}
	b.s.DeviceTraces = append(b.s.DeviceTraces, t1)
	return b.s
}

// TestAnalyzeSummary checks AnalyzeSummary on one goroutine (the
// browser's way: the headlines come before classify) and on two: summary
// is called once, with each device's headline as worked out by hand from
// the trace (the same as Headline's afterwards), the sites are numbered
// in allocation order device by device (a.py, b.py, then c.py), and the
// report is Analyze's, whichever way it ran.
func TestAnalyzeSummary(t *testing.T) {
	want := []Headline{
		{Device: 0, Entries: 4, PeakAllocatedBytes: 300, PeakIndex: 1, PeakTimeUS: 1001, PeakReservedIndex: -1,
			FirstTimeUS: 1000, LastTimeUS: 1003},
		{Device: 1, Entries: 4, PeakAllocatedBytes: 350, PeakIndex: 1, PeakTimeUS: 5001, PeakReservedIndex: -1,
			FirstTimeUS: 5000, LastTimeUS: 5003},
	}
	var reports []string
	for _, seq := range []bool{true, false} {
		sequentialOnly.Store(seq)
		var got [][]Headline
		a := AnalyzeSummary(twoDevices(), Options{TimelinePoints: 50}, func(hs []Headline, _ [][]Point) {
			got = append(got, slices.Clone(hs))
		})
		sequentialOnly.Store(false)
		if len(got) != 1 {
			t.Fatalf("sequential %v: summary called %d times, want once", seq, len(got))
		}
		if !reflect.DeepEqual(got[0], want) {
			t.Errorf("sequential %v: headlines\n %+v\nwant\n %+v", seq, got[0], want)
		}
		for i, d := range a.Devices {
			if h := d.Headline(); h != got[0][i] {
				t.Errorf("sequential %v: device %d's Headline %+v, the summary said %+v", seq, d.ID, h, got[0][i])
			}
		}
		var keys []string
		for _, s := range a.Sites {
			keys = append(keys, s.Key)
		}
		if len(keys) != 3 || !strings.Contains(keys[0], "a.py") || !strings.Contains(keys[1], "b.py") || !strings.Contains(keys[2], "c.py") {
			t.Errorf("sequential %v: sites %q, want a.py, b.py, c.py in this order", seq, keys)
		}
		for _, d := range a.Devices {
			if len(d.allocs.site) != d.NumAllocs() || len(d.allocs.cat) != d.NumAllocs() {
				t.Errorf("sequential %v: device %d not classified (%d sites, %d categories for %d allocations)",
					seq, d.ID, len(d.allocs.site), len(d.allocs.cat), d.NumAllocs())
			}
		}
		reports = append(reports, mustJSON(a.Report()), mustJSON(Analyze(twoDevices(), Options{TimelinePoints: 50}).Report()))
	}
	for i, r := range reports[1:] {
		if r != reports[0] {
			t.Errorf("report %d differs from the first:\n got %.1500s\nwant %.1500s", i+1, r, reports[0])
		}
	}
}
