package analysis

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var updateAnalysis = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateAnalysis {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file; got:\n%s", name, got)
	}
}

func TestMarkdownGolden(t *testing.T) {
	tests := []struct{ file, golden string }{
		{"pt26_cs336_ctx128_fullstep.pickle", "fullstep.md"},
		{"pt20_flexgen_1.3b_snapshot.pickle", "flexgen_1.3b.md"},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			r := Analyze(loadReal(t, tt.file), Options{TopSites: 5}).Report()
			golden(t, tt.golden, Markdown(r))
		})
	}
}

func TestMarkdownComparisonGolden(t *testing.T) {
	before := Analyze(loadReal(t, "pt26_cs336_ctx128_forward.pickle"), Options{})
	after := Analyze(loadReal(t, "pt26_cs336_ctx256_forward_segfree.pickle"), Options{})
	golden(t, "compare_ctx128_ctx256.md", MarkdownComparison(Compare(before, after, 6)))
}
