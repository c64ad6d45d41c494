package analysis

import (
	"bytes"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// TestDiagnosisLazySame checks that the diagnosis reads stacks through
// their summaries and the few frames it shows: on every pinned corpus file
// it is the same whether the decoder held every stack or kept most of them
// in the file (a tiny HoldFrames, as for a gigabyte file).
func TestDiagnosisLazySame(t *testing.T) {
	lazyStacks := 0
	for _, c := range numbersCases(t) {
		if c.data == nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			b := c.data(t)
			held, err := snapshot.DecodeBytes(b, nil)
			if err != nil {
				t.Fatal(err)
			}
			lazy, err := snapshot.Decode(bytes.NewReader(b), int64(len(b)), &snapshot.Options{Summarize: Summarizer(),
				Source: bytes.NewReader(b), HoldFrames: 32})
			if err != nil {
				t.Fatal(err)
			}
			lazyStacks += lazy.Stacks.LazyCount()
			opt := Options{TimelinePoints: 200}
			hr, lr := Analyze(held, opt).Report(), Analyze(lazy, opt).Report()
			for i := range hr.Devices {
				if g, w := mustJSON(lr.Devices[i].DiagnosisReport), mustJSON(hr.Devices[i].DiagnosisReport); g != w {
					t.Errorf("device %d: the diagnosis differs with lazy stacks:\n got %.2000s\nwant %.2000s", i, g, w)
				}
			}
		})
	}
	if lazyStacks == 0 {
		t.Error("no stack stayed in the file: the test checks nothing")
	}
}

// TestDiagnosisConcurrentSame checks that the report is the same whether
// its steps and byte-time flame graph run beside the rest (goOrRun with a
// second core; the flame graph and the sizes beside classify, earlyDiag)
// or after it, on every pinned corpus file decoded with most stacks in the
// file (read back while the rest runs), also when reported twice.
func TestDiagnosisConcurrentSame(t *testing.T) {
	if !snapshot.Concurrent() {
		t.Skip("one CPU (GOMAXPROCS=1): the analysis runs on one goroutine, there is no concurrent path to compare")
	}
	flames := 0
	for _, c := range numbersCases(t) {
		if c.data == nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			b := c.data(t)
			decode := func() *snapshot.Snapshot {
				s, err := snapshot.Decode(bytes.NewReader(b), int64(len(b)), &snapshot.Options{Summarize: Summarizer(),
					Source: bytes.NewReader(b), HoldFrames: 32})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			opt := Options{TimelinePoints: 200}
			sequentialOnly.Store(true)
			seq := Analyze(decode(), opt).Report()
			sequentialOnly.Store(false)
			pa := Analyze(decode(), opt)
			var early []*earlyDiag
			for _, d := range pa.Devices {
				early = append(early, d.early)
			}
			par := pa.Report()
			// A second report reuses the device's early diagnosis.
			again := pa.Report()
			for i := range seq.Devices {
				// The steps' early scan was made for the report's head, so
				// the report used it.
				if e := early[i]; e == nil || e.stepper(new(stepsHead(pa.Devices[i], &par.Devices[i]))) == nil {
					t.Errorf("device %d: no early scan of the steps, or made for another head", i)
				}
				if g, w := mustJSON(again.Devices[i]), mustJSON(seq.Devices[i]); g != w {
					t.Errorf("device %d: the second report differs:\n got %.2000s\nwant %.2000s", i, g, w)
				}
				if bt := seq.Devices[i].ByteTime; bt != nil && len(bt.Nodes) > 1 {
					flames++
				}
				if g, w := mustJSON(par.Devices[i]), mustJSON(seq.Devices[i]); g != w {
					t.Errorf("device %d: the report differs when the flame graph runs beside the rest:\n got %.2000s\nwant %.2000s", i, g, w)
				}
			}
		})
	}
	if flames == 0 {
		t.Error("no device has a flame graph: the test checks nothing")
	}
}

// TestEarlyDiagPanic: a panic while making a device's early diagnosis on
// its goroutine is raised again on the goroutine that asks for it.
func TestEarlyDiagPanic(t *testing.T) {
	if !concurrent() {
		t.Skip("one core: no early diagnosis")
	}
	b, _, err := gen.Bytes(gen.Scenario("training"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.DecodeBytes(b, &snapshot.Options{Summarize: Summarizer()})
	if err != nil {
		t.Fatal(err)
	}
	d := Analyze(s, Options{}).Devices[0]
	if d.early == nil {
		t.Fatal("no early diagnosis where there is a second core")
	}
	d.early.byteTime()          // done with the table
	d.allocs.start[0] = 1 << 30 // past the trace: sizes panics
	e := d.startEarly()
	defer func() {
		if r := recover(); r == nil {
			t.Error("the early diagnosis's panic was not raised again")
		}
	}()
	e.allocSizes()
}
