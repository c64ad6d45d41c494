package analysis

import (
	"bytes"
	"testing"

	"oomscope/snapshot"
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
// second core) or after it, on every pinned corpus file decoded with most
// stacks in the file (read back while the rest runs).
func TestDiagnosisConcurrentSame(t *testing.T) {
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
			sequentialOnly = true
			seq := Analyze(decode(), opt).Report()
			sequentialOnly = false
			par := Analyze(decode(), opt).Report()
			for i := range seq.Devices {
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
