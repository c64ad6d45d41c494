package snapshot

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// smallWindow makes streamed decoding refill every few bytes.
func smallWindow(t *testing.T, n int) {
	old := streamWindow
	streamWindow = n
	t.Cleanup(func() { streamWindow = old })
}

func TestStreamRealFiles(t *testing.T) {
	smallWindow(t, 64)
	for _, rf := range realFiles {
		data := readReal(t, rf.name)
		want, err := DecodeBytes(data, nil)
		if err != nil {
			t.Fatal(err)
		}
		readers := map[string]func() io.Reader{
			"half":  func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
			"whole": func() io.Reader { return bytes.NewReader(data) },
		}
		if len(data) < 300<<10 {
			readers["onebyte"] = func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) }
		}
		for name, r := range readers {
			for _, size := range []int64{int64(len(data)), -1} {
				got, err := Decode(r(), size, nil)
				if err != nil {
					t.Fatalf("%s %s size %d: %v", rf.name, name, size, err)
				}
				if !Equal(got, want) {
					t.Errorf("%s %s size %d: %s", rf.name, name, size, Diff(want, got))
				}
			}
		}
	}
}

func TestStreamErrorsMatchBytes(t *testing.T) {
	smallWindow(t, 16)
	real := readReal(t, "pt26_cs336_ctx128_forward.pickle")
	inputs := map[string][]byte{
		"empty": nil, "json": []byte(`{"a":1}`), "text": []byte("hello"), "truncated": real[:len(real)/3],
		"global": pk("c__builtin__\neval\n"), "huge string": pk("X\xff\xff\xff\x7f"),
		"huge binunicode8": pk("\x8d\xff\xff\xff\xff\xff\xff\xff\xff"),
		"huge frame":       []byte("\x80\x04\x95\x00\x00\x00\x00\x00\x01\x00\x00N."),
		"no segments":      pk("}\x8c\x01aK\x01s"), "long line": []byte("(I" + strings.Repeat("1", 100)),
		"minimal": minimal,
	}
	for name, in := range inputs {
		_, want := DecodeBytes(in, nil)
		for _, size := range []int64{int64(len(in)), -1} {
			_, got := Decode(bytes.NewReader(in), size, nil)
			if (want == nil) != (got == nil) {
				t.Errorf("%s size %d: bytes error %v, stream error %v", name, size, want, got)
				continue
			}
			if size < 0 && errors.Is(want, ErrTruncated) && errors.Is(got, ErrTooLarge) {
				continue // unknown size: a huge declared length is refused before reading it
			}
			for _, kind := range []error{ErrEmpty, ErrNotPickle, ErrTruncated, ErrCorrupt, ErrUnsafe, ErrShape, ErrTooLarge} {
				if errors.Is(want, kind) != errors.Is(got, kind) {
					t.Errorf("%s size %d: bytes error %v, stream error %v", name, size, want, got)
				}
			}
		}
	}
}

func TestStreamGzipProgressAndReadError(t *testing.T) {
	real := readReal(t, "pt26_cs336_ctx128_fullstep.pickle")
	want, err := DecodeBytes(real, nil)
	if err != nil {
		t.Fatal(err)
	}
	z := gz(real)
	var last, calls int64
	got, err := Decode(bytes.NewReader(z), int64(len(z)), &Options{ProgressEvery: 256 << 10,
		Progress: func(done, total int64) bool {
			if done < last || total != int64(len(z)) || done > total {
				t.Errorf("progress %d/%d after %d", done, total, last)
			}
			last = done
			calls++
			return true
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !Equal(got, want) {
		t.Errorf("gzip stream differs: %s", Diff(want, got))
	}
	if calls < 3 || last != int64(len(z)) {
		t.Errorf("%d progress calls, last %d of %d", calls, last, len(z))
	}

	if _, err := Decode(io.MultiReader(bytes.NewReader(real[:5000]), iotest.ErrReader(errors.New("disk on fire"))), -1, &Options{}); err == nil ||
		!strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("read error: %v", err)
	}
	if _, err := Decode(bytes.NewReader(z[:len(z)/2]), -1, nil); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated gzip: %v", err)
	}
}

// FuzzStream checks that streamed decoding (with a tiny window, so that
// every opcode can straddle a refill) agrees with in-memory decoding.
func FuzzStream(f *testing.F) {
	for _, rf := range realFiles[:3] {
		data := readReal(f, rf.name)
		f.Add(data[:min(len(data), 8192)])
	}
	f.Add(minimal)
	f.Add(pk("(I1\nF2.5\nV\\u00e9\nS'x'\nL5L\nl"))
	f.Fuzz(func(t *testing.T, data []byte) {
		old := streamWindow
		streamWindow = 16
		defer func() { streamWindow = old }()
		want, werr := DecodeBytes(data, nil)
		for _, size := range []int64{int64(len(data)), -1} {
			got, err := Decode(iotest.HalfReader(bytes.NewReader(data)), size, nil)
			if (werr == nil) != (err == nil) {
				if size < 0 && errors.Is(werr, ErrTruncated) && (errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTooLarge)) {
					continue // unknown size: a huge declared length shows up later, or is refused
				}
				t.Fatalf("size %d: bytes error %v, stream error %v", size, werr, err)
			}
			if err == nil && !Equal(got, want) {
				t.Fatalf("size %d: %s", size, Diff(want, got))
			}
		}
	})
}
