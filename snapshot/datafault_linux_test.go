package snapshot_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

// TestDecodeDataShrunk: a mapped file (Options.Data) cut short while it
// is decoded faults where its pages are gone; Decode returns ErrTruncated
// instead of crashing, whether the second decoder (split by itself) or
// the first meets the fault, and returns only once the second is done.
func TestDecodeDataShrunk(t *testing.T) {
	defer snapshot.SetSplitMin(1 << 20)()
	defer snapshot.SetPartPrefix(256 << 10)()
	var buf bytes.Buffer
	if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: gen.DistinctStacks, TargetBytes: 6 << 20, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	size := int64(len(data))
	for _, c := range []struct {
		name  string
		cut   int64 // the file's length left
		split bool
	}{
		{"part faults", size * 3 / 4, true},
		{"both fault", size / 4, true},
		{"alone", size / 2, false},
	} {
		// At a page's end: the next byte faults (the rest of a page cut
		// in its middle reads as zeros, a corrupt pickle).
		c.cut &^= int64(os.Getpagesize() - 1)
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.pickle")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			fh, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			m, err := syscall.Mmap(int(fh.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
			if err != nil {
				t.Fatal(err)
			}
			defer syscall.Munmap(m)
			if err := os.Truncate(path, c.cut); err != nil {
				t.Fatal(err)
			}
			opt := &snapshot.Options{Source: fh, Fold: analysis.Fold(), Data: m}
			if !c.split {
				opt = snapshot.WithoutSplit(opt)
			}
			_, err = snapshot.Decode(noReader{t}, size, opt)
			if !errors.Is(err, snapshot.ErrTruncated) {
				t.Fatalf("Decode of a mapped file cut to %d of %d bytes: %v, want ErrTruncated", c.cut, size, err)
			}
		})
	}
}
