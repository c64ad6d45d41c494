package benchfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOpen: the file named by the variable is opened with its size; an
// unset variable skips.
func TestOpen(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.pickle")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OOMSCOPE_BENCHFILE_TEST", p)
	f, size := Open(t, "OOMSCOPE_BENCHFILE_TEST")
	if size != 5 || f.Name() != p {
		t.Errorf("Open = %s, %d; want %s, 5", f.Name(), size, p)
	}
	t.Run("unset", func(t *testing.T) {
		t.Setenv("OOMSCOPE_BENCHFILE_TEST", "")
		Open(t, "OOMSCOPE_BENCHFILE_TEST")
		t.Error("Open went on with the variable unset, want a skip")
	})
}
