//go:build e2e

package e2e

import (
	"fmt"
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

// controlsShown lists the text nodes and attribute values under the
// elements sel matches that hold a control character (C0 but tab and
// newline, DEL, C1), a bidirectional control or a byte-order mark: text
// from a file or paste must reach the page through untrusted.Line. Form
// fields (the pasted text itself) are left out.
func controlsShown(tb *tab, sel string) []string {
	return evalJS[[]string](tb, fmt.Sprintf(`(() => {
	const bad = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
	const out = [];
	for (const root of document.querySelectorAll(%q)) {
		const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
		for (let n = w.nextNode(); n; n = w.nextNode())
			if (bad.test(n.data) && !n.parentElement.closest("textarea, input")) out.push(n.parentElement.tagName + ": " + JSON.stringify(n.data.slice(0, 60)));
		for (const e of [root, ...root.querySelectorAll("*")]) for (const a of e.attributes)
			if (bad.test(a.value)) out.push(e.tagName + "@" + a.name + ": " + JSON.stringify(a.value.slice(0, 60)));
	}
	return out;
})()`, sel))
}

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
	path := filepath.Join(t.TempDir(), "<img src=x onerror=alert(1)>\u202eelkcip\u202c\x1b[31m.pickle")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.dropFile("#snap-drop", path)
	requireSnapshot(tb, "the page shows an error")
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
	// Control and bidi characters of the names and the file name never
	// reach the page, in any view: the whole analysis is revealed, and the
	// stacks are in the DOM though folded.
	tb.waitText("#snap-filename", "elkcip")
	if bad := controlsShown(tb, "main"); len(bad) > 0 {
		t.Errorf("%d texts on the page keep control or bidi characters, e.g. %q", len(bad), bad[:min(5, len(bad))])
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
	// The same file as the comparison's second: the Markdown copy names both
	// files, and still adds nothing but the comparison's own heading.
	tb.scrollTo("#snap-compare-drop")
	tb.dropFile("#snap-compare-drop", path)
	if v := poll[string](tb, `document.body.getAttribute("data-snapshot-compare") ? "done" : (document.body.getAttribute("data-snapshot-compare-error") ? "error" : "")`, 90*time.Second); v != "done" {
		t.Fatalf("the comparison failed: %s", tb.text("#snap-compare-error"))
	}
	tb.click("#snap-copy")
	md = poll[string](tb, `(() => { const e = document.getElementById("snap-markdown"); return e && e.value.includes("Comparison") ? e.value : ""; })()`, 10*time.Second)
	for _, p := range hostile.MarkdownProblems(md, map[string]int{"h2": 2}) {
		t.Errorf("Markdown copy with the comparison: %s", p)
	}
	if strings.ContainsAny(md, "\x1b\x07\u202e") {
		t.Errorf("the Markdown copy with the comparison keeps control characters")
	}
	tb.screenshot("snapshot-hostile")
	tb.requireWatched("worker")
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// TestTriageHostilePaste pastes every hostile name around a PyTorch 2.3
// message whose device index came out as a control byte (0x02, the GPU
// number printed as a character): the page shows the message's phrases
// without the control byte and no text of the paste keeps a control or
// bidi character.
func TestTriageHostilePaste(t *testing.T) {
	var b strings.Builder
	for _, n := range hostile.Names() {
		b.WriteString(n.Text + "\n")
	}
	b.WriteString("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU \x02 has a total capacity of 79.15 GiB of which 3.00 MiB is free. " +
		"Including non-PyTorch memory, this process has 79.14 GiB memory in use. Of the allocated memory 77.00 GiB is allocated by PyTorch, and 500.00 MiB is reserved by PyTorch but unallocated.\n")
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/triage")
	tb.setValue("#triage-input", b.String())
	tb.waitText("#triage-status", "Found 1 out-of-memory message")
	if phrases := tb.text("#triage-numbers"); !strings.Contains(phrases, "GPU has a total capacity of 79.15 GiB") {
		t.Errorf("the numbers do not show the phrase without its control byte: %.300q", phrases)
	}
	if bad := controlsShown(tb, ".triage-result"); len(bad) > 0 {
		t.Errorf("%d texts keep control or bidi characters, e.g. %q", len(bad), bad[:min(5, len(bad))])
	}
	if n := evalJS[float64](tb, injected); n != 0 {
		t.Errorf("the paste added %v elements or handlers to the page", n)
	}
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}
