package load

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"oomscope/snapshot/gen"
)

// TestMapFile: on Linux a regular file is mapped whole, with its bytes; a
// stretch let go still reads the same bytes (the page cache's); an empty
// file is not mapped. Elsewhere nothing is mapped.
func TestMapFile(t *testing.T) {
	dir := t.TempDir()
	want := make([]byte, 3<<20+123)
	for i := range want {
		want[i] = byte(i*7 + i>>12)
	}
	fh := writeOpen(t, filepath.Join(dir, "f"), want)
	data, done, unmap := mapFile(fh, int64(len(want)))
	if runtime.GOOS != "linux" {
		if data != nil || unmap != nil {
			t.Fatal("mapped where there is no mmap")
		}
		return
	}
	if data == nil || done == nil || unmap == nil {
		t.Fatal("a regular file was not mapped")
	}
	defer unmap()
	if !bytes.Equal(data, want) {
		t.Fatal("the mapping's bytes differ from the file's")
	}
	done(0, 1<<20+5)
	done(1<<20+5, 2<<20)
	done(3<<20, int64(len(want)))
	if !bytes.Equal(data, want) {
		t.Fatal("after letting stretches go, the mapping's bytes differ from the file's")
	}
	if d, _, u := mapFile(writeOpen(t, filepath.Join(dir, "empty"), nil), 0); d != nil || u != nil {
		t.Fatal("an empty file was mapped")
	}
}

// writeOpen writes b to the file path and opens it for reading, closed
// when the test ends.
func writeOpen(t *testing.T, path string, b []byte) *os.File {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	return fh
}

// TestOpenFileMapped: a file opened from disk (mapped on Linux, decoded in
// place) gives the report of the same bytes loaded through a reader, on
// both families, the distinct one past the split decode's threshold.
func TestOpenFileMapped(t *testing.T) {
	for _, fam := range []gen.Family{gen.DistinctStacks, gen.RealStacks} {
		var buf bytes.Buffer
		if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: fam, TargetBytes: 50 << 20}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), string(fam)+".pickle")
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		f, closer, err := OpenFile(path, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(f.Report)
		closer.Close()
		if err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		r, err := Load(Input{Name: path, R: bytes.NewReader(b), Size: int64(len(b)), Source: bytes.NewReader(b)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(r.Report)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: the mapped file's report differs from the reader's (%d vs %d bytes)", fam, len(got), len(want))
		}
	}
}
