package snapshot_test

import (
	"bytes"
	"testing"
	"time"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/internal/benchfile"
)

// BenchmarkSplit times the pieces of a split decode of the file
// OOMSCOPE_SPLIT_FILE (skipped when unset), for planning the browser's
// workers: the serial decode, DecodePart at SplitAt, MarshalBinary and
// UnmarshalFrom of its part, and the main decoder given the part (as
// when the part is ready when the main decoder reaches its start). Run it
// in WebAssembly with GOOS=js GOARCH=wasm go test -c and Node.
func BenchmarkSplit(b *testing.B) {
	f, size := benchfile.Open(b, "OOMSCOPE_SPLIT_FILE")
	at := snapshot.SplitAt(size)
	if at < 0 {
		at = size / 2
	}
	base := snapshot.WithSharedSeed(snapshot.WithoutSplit(&snapshot.Options{Source: f, Fold: analysis.Fold()}))
	opts := func() *snapshot.Options {
		o := *base
		return &o
	}
	for range b.N {
		t0 := time.Now()
		if _, err := f.Seek(0, 0); err != nil {
			b.Fatal(err)
		}
		if _, err := snapshot.Decode(f, size, opts()); err != nil {
			b.Fatal(err)
		}
		serial := time.Since(t0)
		t0 = time.Now()
		var start int64
		part, err := snapshot.DecodePart(f, size, at, opts(), func(s int64) { start = s })
		if err != nil {
			b.Fatal(err)
		}
		partT := time.Since(t0)
		t0 = time.Now()
		blob, err := part.MarshalBinary()
		if err != nil {
			b.Fatal(err)
		}
		marshal := time.Since(t0)
		t0 = time.Now()
		// As the browser's analysis worker: read from the blob where
		// it is (UnmarshalFrom).
		var q snapshot.Part
		if err := q.UnmarshalFrom(bytes.NewReader(blob), int64(len(blob))); err != nil {
			b.Fatal(err)
		}
		unmarshal := time.Since(t0)
		if _, err := f.Seek(0, 0); err != nil {
			b.Fatal(err)
		}
		opt, info := snapshot.WithSplitInfo(opts())
		opt.Split = &snapshot.Split{At: at, Start: func() (int64, error) { return start, nil },
			Part: func() (*snapshot.Part, error) { return &q, nil }}
		t0 = time.Now()
		if _, err := snapshot.Decode(f, size, opt); err != nil {
			b.Fatal(err)
		}
		main := time.Since(t0)
		if !snapshot.SplitTaken(info) {
			b.Fatal("the split was not taken")
		}
		b.Logf("%d bytes, at %d: serial %v; part %v (%d bytes, blob %d bytes, marshal %v, unmarshal %v); main with the part %v (taking it %v)",
			size, at, serial, partT, part.Bytes(), len(blob), marshal, unmarshal, main, snapshot.SplitMergeTime(info))
	}
}
