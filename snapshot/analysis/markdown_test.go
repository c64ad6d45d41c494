package analysis

import (
	"path/filepath"
	"strings"
	"testing"

	"oomscope/internal/goldenfile"
	"oomscope/snapshot/gen"
	"oomscope/untrusted/hostile"
)

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), []byte(got))
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

// TestMarkdownHostileNames renders the report of a snapshot whose frames
// are named to break out of Markdown and HTML (hostile.Names) and checks
// the rendered report has only its own structure; the golden file shows
// how each name is written.
func TestMarkdownHostileNames(t *testing.T) {
	s, _, err := hostile.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	an := Analyze(s, Options{TopSites: 8})
	r := an.Report()
	md := Markdown(r)
	golden(t, "hostile.md", md)
	d := r.Devices[0]
	want := map[string]int{"h2": 1, "h3": 2 + btoi(len(d.OOMEvents) > 0) + btoi(len(d.Warnings) > 0) + btoi(d.Diagnosis.Cause != ""),
		"details": min(3, len(d.TopSites)) + diagnosisDetails(&d), "li": len(d.Warnings)}
	for _, p := range hostile.MarkdownProblems(md, want) {
		t.Errorf("report: %s", p)
	}
	hostileLabels := 0
	for _, site := range d.TopSites {
		if strings.Contains(site.Label, "PWN") {
			hostileLabels++
		}
	}
	if hostileLabels < 3 {
		t.Fatalf("only %d of the top sites carry a hostile name: the test does not test", hostileLabels)
	}
	plain, _, err := gen.Snapshot(gen.Scenario("oom"))
	if err != nil {
		t.Fatal(err)
	}
	cmp := MarkdownComparison(Compare(Analyze(plain, Options{}), an, 8))
	golden(t, "hostile_compare.md", cmp)
	for _, p := range hostile.MarkdownProblems(cmp, map[string]int{"h2": 1, "details": 0}) {
		t.Errorf("comparison: %s", p)
	}
}

// diagnosisDetails is how many <details> the diagnosis section writes: the
// code of the first three fixes and the stacks of the first three leak
// sites.
func diagnosisDetails(d *DeviceReport) int {
	n := min(3, len(d.Fixes))
	if d.Leak != nil {
		n += min(3, len(d.Leak.Sites))
	}
	return n
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
