package snapshot_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
)

// noReader fails the test that reads it: a decoder given Options.Data
// must not read its io.Reader.
type noReader struct{ t *testing.T }

func (r noReader) Read([]byte) (int, error) {
	r.t.Error("the reader was read although Options.Data holds the input")
	return 0, errors.New("read")
}

// TestDecodeData: a decode that takes its windows from the whole input in
// memory (Options.Data, the CLI's mapped file) is the serial decode of the
// same bytes read through a reader, split by itself (distinct family) or
// not, with small windows; it never reads the reader nor writes Data, and
// it hands back (DataDone) stretches within the file that cover all of
// it. Data of
// another length, or gzip input, is read through the reader as before.
func TestDecodeData(t *testing.T) {
	defer snapshot.SetSplitMin(1 << 20)()
	defer snapshot.SetPartPrefix(256 << 10)()
	inputs := splitInputs(t, 3, 6)
	for _, window := range []int{64 << 10, 16} {
		defer snapshot.SetStreamWindow(window)()
		for name, data := range inputs {
			if window < 1<<10 && !strings.HasPrefix(name, "distinct") {
				continue // slow
			}
			t.Run(fmt.Sprintf("%s/window%d", name, window), func(t *testing.T) {
				size := int64(len(data))
				serial, err := snapshot.Decode(bytes.NewReader(data), size, splitOptions(data, 0))
				if err != nil {
					t.Fatal(err)
				}
				whole := slices.Clone(data)
				var mu sync.Mutex
				var done [][2]int64
				opt, info := snapshot.WithSplitInfo(&snapshot.Options{Source: bytes.NewReader(data), Fold: analysis.Fold(),
					Data: whole, DataDone: func(from, to int64) {
						mu.Lock()
						done = append(done, [2]int64{from, to})
						mu.Unlock()
					}})
				s, err := snapshot.Decode(noReader{t}, size, opt)
				if err != nil {
					t.Fatal(err)
				}
				sameDecode(t, serial, s)
				if !bytes.Equal(whole, data) {
					t.Fatal("Data was written to")
				}
				if snapshot.Concurrent() && strings.HasPrefix(name, "distinct") && !snapshot.SplitTaken(info) {
					t.Error("the split was not taken: the part's window is not tested")
				}
				// Within the file; together, all of it (the rest is handed
				// back at the end).
				covered := make([]bool, size)
				for _, d := range done {
					if d[0] < 0 || d[0] >= d[1] || d[1] > size {
						t.Fatalf("stretch [%d, %d) handed back, file of %d bytes", d[0], d[1], size)
					}
					for i := d[0]; i < d[1]; i++ {
						covered[i] = true
					}
				}
				if i := slices.Index(covered, false); i >= 0 {
					t.Fatalf("byte %d of %d never handed back (%d stretches)", i, size, len(done))
				}
			})
		}
	}
	// Not used: Data of another length than the input, gzip input.
	data := splitInputs(t, 1, 1)["distinct-1"]
	want, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), splitOptions(data, 0))
	if err != nil {
		t.Fatal(err)
	}
	short := snapshot.WithoutSplit(&snapshot.Options{Source: bytes.NewReader(data), Fold: analysis.Fold(), Data: data[:len(data)-1]})
	if got, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), short); err != nil {
		t.Fatal(err)
	} else {
		sameDecode(t, want, got)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	zopt := &snapshot.Options{Data: gz.Bytes()}
	got, err := snapshot.Decode(bytes.NewReader(gz.Bytes()), int64(gz.Len()), zopt)
	if err != nil {
		t.Fatal(err)
	}
	if want, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), nil); err != nil {
		t.Fatal(err)
	} else if !snapshot.Equal(want, got) {
		t.Fatalf("gzip input with Data: %s", snapshot.Diff(want, got))
	}
}

// TestDecodeDataWaits: a decode that fails early (corrupt bytes a
// quarter in) returns only once its second decoder, busy with the second
// half, is done: no stretch of Data is handed back after Decode returned
// (the caller then unmaps it).
func TestDecodeDataWaits(t *testing.T) {
	if !snapshot.Concurrent() {
		t.Skip("one core: no second decoder")
	}
	defer snapshot.SetSplitMin(1 << 20)()
	defer snapshot.SetPartPrefix(256 << 10)()
	defer snapshot.SetStreamWindow(4 << 10)()
	data := splitInputs(t, 8, 5)["distinct-5"]
	for round := range 5 {
		bad := slices.Clone(data)
		for i := range 256 {
			bad[len(bad)/4+round*1000+i] = 0xff // no such opcode
		}
		var returned, late atomic.Bool
		opt := &snapshot.Options{Source: bytes.NewReader(bad), Fold: analysis.Fold(), Data: bad,
			DataDone: func(from, to int64) {
				if returned.Load() {
					late.Store(true)
				}
			}}
		_, err := snapshot.Decode(noReader{t}, int64(len(bad)), opt)
		returned.Store(true)
		if err == nil {
			t.Fatal("a corrupt file was decoded")
		}
		time.Sleep(20 * time.Millisecond)
		if late.Load() {
			t.Fatal("Data was handed back after Decode returned: the second decoder was still running")
		}
	}
}
