// Package goldenfile compares a test's output with a golden file, or rewrites
// the file when the test runs with -update. A golden file is written by the
// code under test: every one also has a test that checks a few of its
// numbers by an independent route (see cmd/oomscope/witness_*_test.go), so
// that review the diff of an -update and keep those witnesses passing.
package goldenfile

import (
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ (review the diff; the witness tests must still pass)")

// Check compares got with the file at path, or writes got there with
// -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("output differs from %s (rerun with -update to accept it, then review the diff); got:\n%.4000s", path, got)
	}
}
