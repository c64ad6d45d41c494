//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"oomscope/untrusted/hostile"
)

// injected counts what hostile names would have added to the page: script
// elements, images, nested SVG roots, event-handler attributes, and links
// to other hosts; the page's own markup has none of them inside main.
const injected = `(() => {
	const m = document.querySelector("main") || document.body;
	let n = m.querySelectorAll("script, img, iframe, object, embed, svg svg, foreignObject, a[href^='javascript'], a[href^='http']").length;
	for (const e of m.querySelectorAll("*")) for (const a of e.attributes) if (/^on/i.test(a.name)) n++;
	return n;
})()`

// TestSnapshotHostileNames drops a snapshot whose frame names try to
// inject HTML, SVG, Markdown and terminal escapes (hostile.Snapshot): the
// page shows them as text in its summary, tables, legend, tooltip and
// segments, adds no element or handler of theirs, and the Markdown copy
// keeps them inert.
func TestSnapshotHostileNames(t *testing.T) {
	_, data, err := hostile.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), `<img src=x onerror=alert(1)>.pickle`)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.dropFile("#snap-drop", path)
	if !waitSnapshot(tb, 90*time.Second) {
		t.Fatalf("the page shows an error: %s", tb.text("#snap-error"))
	}
	poll[string](tb, `document.body.getAttribute("data-snapshot-state") || ""`, 30*time.Second)
	// Hover the chart over the peak so the tooltip (built as HTML) shows.
	evalJS[bool](tb, `(() => { const c = document.getElementById("snap-chart"); const r = c.getBoundingClientRect();
		c.dispatchEvent(new PointerEvent("pointermove", {bubbles: true, pointerType: "mouse", clientX: r.left + r.width * 0.97, clientY: r.top + r.height * 0.9})); return true; })()`)
	tip := tb.waitText("#snap-tip", "PWN")
	if !strings.Contains(tip, `<img src=x onerror=alert("PWN")>`) {
		t.Errorf("the tooltip does not show the names as text: %.300q", tip)
	}
	for _, sel := range []string{"#snap-culprit", "#snap-sites", ".snap-legend", "#snap-state"} {
		if txt := tb.text(sel); !strings.Contains(txt, "PWN") {
			t.Errorf("%s shows no hostile name: the test does not test (%.200q)", sel, txt)
		}
	}
	if n := evalJS[float64](tb, injected); n != 0 {
		t.Errorf("the names added %v elements or handlers to the page", n)
	}
	if title := evalJS[string](tb, `document.title`); strings.Contains(title, "PWN") {
		t.Errorf("a name changed the title: %q", title)
	}
	tb.click("#snap-copy")
	md := poll[string](tb, `(() => { const e = document.getElementById("snap-markdown"); return e ? e.value : ""; })()`, 10*time.Second)
	for _, p := range hostile.MarkdownProblems(md, map[string]int{"h2": 1}) {
		t.Errorf("Markdown copy: %s", p)
	}
	if strings.ContainsAny(md, "\x1b\x07\u202e") {
		t.Errorf("the Markdown copy keeps control characters")
	}
	tb.screenshot("snapshot-hostile")
	tb.requireWatched("worker")
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}
