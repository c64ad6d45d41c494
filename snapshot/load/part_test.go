package load

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

// TestLoadPart decodes the second half of a distinct-stacks file with
// LoadPart, as the browser's part worker does, hands the marshalled part
// to Load through Options.Split, and compares the result with a serial
// load (one core: the decoder does not split by itself): the same report
// and state, and SplitBytes says whether the decoder kept the part (see
// wantSplit). A part that does not unmarshal, or that is refused, leaves
// the result the same with no split bytes; a part request outside the
// file is an error.
func TestLoadPart(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: gen.DistinctStacks, TargetBytes: 6 << 20, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	size := int64(len(data))
	in := func() Input {
		return Input{Name: "d.pickle", R: bytes.NewReader(data), Size: size, Source: bytes.NewReader(data)}
	}
	opt := Options{Analysis: analysis.Options{TimelinePoints: TimelinePoints}}
	prev := runtime.GOMAXPROCS(1)
	want, err := Load(in(), opt)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}

	var start int64
	progress := 0
	popt := opt
	popt.Progress = func(Stage, int64, int64) { progress++ }
	b, covered, err := LoadPart(in(), size/2, popt, func(s int64) { start = s })
	if err != nil {
		t.Fatal(err)
	}
	if start < size/2 || covered <= 0 || covered > size-start || progress == 0 {
		t.Fatalf("part from %d covering %d bytes of %d (asked from %d), %d progress calls", start, covered, size, size/2, progress)
	}
	split := func(b []byte) *snapshot.Split {
		return &snapshot.Split{At: size / 2,
			Start: func() (int64, error) { return start, nil },
			Part: func() (*snapshot.Part, error) {
				p := new(snapshot.Part)
				return p, p.UnmarshalBinary(b)
			}}
	}
	opt.Split = split(b)
	got, err := Load(in(), opt)
	if err != nil {
		t.Fatal(err)
	}
	// The decoder keeps the part only where both decoders hash stacks with
	// the same seed: in WebAssembly both derive it from the file size and
	// the split place; natively each process seeds its own (maphash), so
	// a part from elsewhere is refused there (Decode's own goroutine
	// shares its seed; package snapshot's split tests cover taking).
	wantSplit := int64(0)
	if runtime.GOARCH == "wasm" {
		wantSplit = covered
	}
	if got.SplitBytes != wantSplit || NewResult(got).SplitBytes != wantSplit {
		t.Errorf("SplitBytes %d, want %d (the part covers %d)", got.SplitBytes, wantSplit, covered)
	}
	g, w := NewResult(got), NewResult(want)
	g.SplitBytes, g.DecodeMS, g.AnalyseMS, w.DecodeMS, w.AnalyseMS = 0, 0, 0, 0, 0
	if !sameJSON(t, g, w) {
		t.Error("the result with the part differs from the serial one")
	}
	d := got.Analysis.Devices[0]
	i := d.Trace.Len() * 3 / 4
	if !sameJSON(t, d.StateAt(i, StateSegments, StateSites), want.Analysis.Devices[0].StateAt(i, StateSegments, StateSites)) {
		t.Errorf("the state after entry %d differs", i)
	}

	// A damaged part: the decoder goes on alone, with the same result.
	bad := append([]byte(nil), b...)
	bad[len(bad)/2] ^= 1
	opt.Split = split(bad)
	if got, err := Load(in(), opt); err != nil || got.SplitBytes != 0 {
		t.Errorf("a damaged part: %v, %d split bytes", err, got.SplitBytes)
	} else if g := NewResult(got); !sameJSON(t, g.Report, w.Report) {
		t.Error("the result after a damaged part differs")
	}
	// A part that unmarshals but does not fit where the decoder is told it
	// starts: refused, so no split bytes.
	opt.Split = split(b)
	opt.Split.Start = func() (int64, error) { return start + 1, nil }
	if got, err := Load(in(), opt); err != nil || got.SplitBytes != 0 {
		t.Errorf("a part refused: %v, %d split bytes", err, got.SplitBytes)
	} else if g := NewResult(got); !sameJSON(t, g.Report, w.Report) {
		t.Error("the result after a refused part differs")
	}
	opt.Split = &snapshot.Split{At: size / 2, Start: func() (int64, error) { return 0, errors.New("no") },
		Part: func() (*snapshot.Part, error) { return nil, errors.New("no") }}
	if got, err := Load(in(), opt); err != nil || got.SplitBytes != 0 {
		t.Errorf("a failed split: %v, %d split bytes", err, got.SplitBytes)
	}

	for _, at := range []int64{0, -1, size} {
		if _, _, err := LoadPart(in(), at, popt, nil); err == nil || !strings.Contains(err.Error(), "d.pickle") {
			t.Errorf("a part at %d: %v", at, err)
		}
	}
	if _, _, err := LoadPart(Input{Name: "x", R: bytes.NewReader(data), Size: size}, size/2, popt, nil); err == nil {
		t.Error("a part without a Source decoded")
	}
}
