// Package benchfile opens the snapshot file a benchmark of the snapshot
// packages is pointed at by an environment variable (OOMSCOPE_DECODE_FILE
// and the like): such benchmarks run on big generated or user files that
// the repository does not hold.
package benchfile

import (
	"os"
	"testing"
)

// Open opens the file named by the environment variable env, closed when
// b's benchmark ends, and returns it with its size; b is skipped when env
// is unset and fails when the file cannot be opened.
func Open(b testing.TB, env string) (*os.File, int64) {
	b.Helper()
	path := os.Getenv(env)
	if path == "" {
		b.Skip(env + " not set")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	return f, st.Size()
}
