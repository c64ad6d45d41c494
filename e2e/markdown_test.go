//go:build e2e

package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSnapshotMarkdownEqualsCLI: the Markdown report the snapshot page's
// copy button gives is byte for byte what `oomscope snapshot --markdown`
// prints for the same file (one set of defaults: docs/snapshot.md#defaults).
func TestSnapshotMarkdownEqualsCLI(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_fullstep.pickle")
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./cmd/oomscope", "snapshot", "--markdown", abs)
	cmd.Dir = ".."
	cli, err := cmd.Output()
	if err != nil {
		t.Fatalf("oomscope snapshot --markdown: %v", err)
	}

	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.dropFile("#snap-drop", path)
	requireSnapshot(tb, "the page shows an error")
	tb.click("#snap-copy")
	md := poll[string](tb, `(() => { const e = document.getElementById("snap-markdown"); return e ? e.value : ""; })()`, 10*time.Second)
	if md != string(cli) {
		t.Errorf("the page's Markdown differs from the CLI's:\npage:\n%.1500s\ncli:\n%.1500s", md, cli)
	}
	tb.assertClean()
}
