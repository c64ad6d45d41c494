//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	ui "oomscope/app"
)

// axeSource is axe-core's browser bundle, installed by make axe from
// e2e/axe/package-lock.json. It is injected into pages by the tests only;
// the site never ships it.
var axeSource = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(filepath.Join("axe", "node_modules", "axe-core", "axe.min.js"))
	return string(b), err
})

// axeViolation is one failed axe rule on a page.
type axeViolation struct {
	ID, Impact, Help string
	Nodes            []string
}

// axeCheck runs axe-core on the page (WCAG 2.x A and AA rules and axe's
// best practices) and returns its serious and critical violations.
func axeCheck(tb *tab) []axeViolation {
	tb.t.Helper()
	src, err := axeSource()
	if err != nil {
		tb.t.Fatalf("axe-core is not installed (run make axe, which runs npm ci in e2e/axe): %v", err)
	}
	if !evalJS[bool](tb, `typeof axe === "object"`) {
		evalJS[bool](tb, src+";\ntrue")
	}
	out := evalJS[string](tb, `axe.run(document, {
		resultTypes: ["violations"],
		runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]},
	}).then(r => JSON.stringify(r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v => ({
		ID: v.id, Impact: v.impact, Help: v.help,
		Nodes: v.nodes.slice(0, 4).map(n => n.target.join(" ") + " — " + (n.failureSummary || "").replace(/\s+/g, " ")),
	}))))`)
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		tb.t.Fatalf("axe result: %v", err)
	}
	return vs
}

// a11yPage is a page checked by TestAccessibility; prepare brings it into
// the state to check (an example pasted, a file dropped).
type a11yPage struct {
	name, path string
	prepare    func(tb *tab)
}

// a11yPages lists every page of the site, tools with a result on screen.
func a11yPages(t *testing.T) []a11yPage {
	ps := []a11yPage{
		{"home", "/", nil},
		{"estimate", "/estimate?model=llama-3.1-8b&gpu=rtx-4090-24gb&method=lora", nil},
		{"triage", "/triage?example=frag", func(tb *tab) { tb.waitText("#triage-cause-name", "fragmentation") }},
		{"snapshot", "/snapshot", func(tb *tab) {
			tb.dropFile("#snap-drop", realSnapshotPath(tb.t, "pt20_flexgen_oom_snapshot.pickle"))
			requireSnapshot(tb, "snapshot")
		}},
		{"404", missingPage, nil},
	}
	for _, r := range ui.Routes() {
		if r.Static && r.Path != ui.NotFoundPath {
			ps = append(ps, a11yPage{routeName(r.Path), r.Path, nil})
		}
	}
	return ps
}

// TestAccessibility runs axe-core on every page, in the light and the dark
// theme, at phone and desktop widths, and fails on any serious or critical
// violation. It also writes a screenshot of each in e2e/out/.
func TestAccessibility(t *testing.T) {
	if _, err := axeSource(); err != nil {
		t.Fatalf("axe-core is not installed (run make axe): %v", err)
	}
	s := serveSite(t, distDir(t), "", "no-store")
	pages := a11yPages(t)
	for _, theme := range []string{"light", "dark"} {
		for _, width := range []int64{375, 1440} {
			t.Run(fmt.Sprintf("%s-%d", theme, width), func(t *testing.T) {
				tb := newTab(t, s)
				tb.setViewport(width, 900)
				tb.setColorScheme(theme)
				for _, p := range pages {
					tb.open(p.path)
					if p.prepare != nil {
						p.prepare(tb)
					}
					if got := evalJS[string](tb, `getComputedStyle(document.documentElement).colorScheme`); got != theme {
						t.Errorf("%s: color-scheme %q under a %s system theme", p.name, got, theme)
					}
					for _, v := range axeCheck(tb) {
						t.Errorf("%s (%s, %d px): %s %s: %s\n\t%s", p.name, theme, width, v.Impact, v.ID, v.Help, strings.Join(v.Nodes, "\n\t"))
					}
					tb.screenshot(fmt.Sprintf("page-%s-%s-%d", p.name, theme, width))
				}
				tb.assertClean()
			})
		}
	}
}

// TestTheme: the header's toggle cycles auto → dark → light, the choice
// survives a reload, and the chosen theme is in place before the page's
// body exists (no flash of the other theme).
func TestTheme(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.setColorScheme("light")
	// Record the page background the moment <body> appears.
	if _, err := chromedp.Call(tb.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
		new MutationObserver((_, o) => { if (document.body) { o.disconnect();
			window.__firstBG = getComputedStyle(document.documentElement).getPropertyValue("--bg").trim(); } })
			.observe(document, {childList: true, subtree: true});`}); err != nil {
		t.Fatal(err)
	}
	bg := func() string {
		return evalJS[string](tb, `getComputedStyle(document.documentElement).getPropertyValue("--bg").trim()`)
	}
	tb.open("/estimate")
	light := bg()
	if got := evalJS[string](tb, `document.documentElement.dataset.themeChoice`); got != "auto" {
		t.Errorf("first visit theme choice %q, want auto", got)
	}
	for _, want := range []string{"dark", "light", "auto"} {
		tb.click("#theme-toggle")
		if got := evalJS[string](tb, `document.documentElement.dataset.themeChoice`); got != want {
			t.Fatalf("after a click the theme is %q, want %q", got, want)
		}
		if want == "dark" && bg() == light {
			t.Errorf("the dark theme has the light background %s", light)
		}
	}
	tb.click("#theme-toggle") // dark
	dark := bg()
	for _, path := range []string{"/triage", "/guides/measure"} {
		tb.open(path)
		if got := evalJS[string](tb, `window.__firstBG`); got != dark {
			t.Errorf("%s: background when <body> appeared %q, want the chosen dark %q", path, got, dark)
		}
	}
	// With "auto", the system's dark setting applies from the start too.
	tb.click("#theme-toggle") // light
	tb.click("#theme-toggle") // auto
	tb.setColorScheme("dark")
	tb.open("/")
	if got := evalJS[string](tb, `window.__firstBG`); got != dark {
		t.Errorf("auto under a dark system: first background %q, want %q", got, dark)
	}
	tb.assertClean()
}

// TestKeyboard: focus is visible on every kind of control, including the
// label of the snapshot page's hidden file input, and code blocks can be
// scrolled from the keyboard.
func TestKeyboard(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	// Tab until the file input has the focus, as a keyboard user would.
	for i := 0; i < 40 && !evalJS[bool](tb, `document.activeElement && document.activeElement.id === "snap-file"`); i++ {
		tb.pressTab()
	}
	if !evalJS[bool](tb, `document.activeElement.id === "snap-file"`) {
		t.Fatal("the file input cannot be reached with Tab")
	}
	if got := evalJS[string](tb, `getComputedStyle(document.querySelector('label[for="snap-file"]')).outlineStyle`); got == "none" {
		t.Errorf("the Choose a file button shows no focus ring when its input has the focus")
	}
	tb.open("/guides/measure")
	if n := evalJS[int](tb, `[...document.querySelectorAll(".guide-body pre")].filter(p => p.tabIndex !== 0).length`); n != 0 {
		t.Errorf("%d code blocks cannot take the keyboard focus", n)
	}
	tb.assertClean()
}

// pressTab sends a Tab key press.
func (tb *tab) pressTab() {
	tb.t.Helper()
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
		if _, err := chromedp.Call(tb.ctx, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: typ, Key: "Tab", Code: "Tab", WindowsVirtualKeyCode: 9}); err != nil {
			tb.t.Fatal(err)
		}
	}
}

// TestSnapshotTouch: on a touch screen a tap on the timeline shows its
// tooltip, which stays after the finger lifts, and selects that moment;
// the tooltip's stack lists the user's own frames before torch's.
func TestSnapshotTouch(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_fullstep.pickle")
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.setViewport(375, 800)
	if _, err := chromedp.Call(tb.ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 1}); err != nil {
		t.Fatal(err)
	}
	tb.open("/snapshot")
	tb.uploadFile("#snap-file", path)
	requireSnapshot(tb, "snapshot")
	// On a phone the page scrolls the summary into view (smoothly) when the
	// result arrives: let that finish before aiming at the chart.
	poll[bool](tb, `new Promise(r => { const y = scrollY; setTimeout(() => r(scrollY === y), 300); })`, 10*time.Second)
	tb.scrollTo("#snap-chart")
	at := evalJS[map[string]float64](tb, `(() => { const r = document.getElementById("snap-chart").getBoundingClientRect();
		return {x: r.left + r.width * 0.5, y: r.top + r.height * 0.9}; })()`)
	before := evalJS[string](tb, `document.body.getAttribute("data-snapshot-state") || ""`)
	for _, typ := range []input.DispatchTouchEventType{input.DispatchTouchEventTypeTouchStart, input.DispatchTouchEventTypeTouchEnd} {
		p := input.DispatchTouchEventParams{Type: typ, TouchPoints: []*input.TouchPoint{}}
		if typ == input.DispatchTouchEventTypeTouchStart {
			p.TouchPoints = []*input.TouchPoint{{X: at["x"], Y: at["y"]}}
		}
		if _, err := chromedp.Call(tb.ctx, input.DispatchTouchEvent, p); err != nil {
			t.Fatal(err)
		}
	}
	tb.waitText("#snap-tip", "allocated")
	poll[bool](tb, fmt.Sprintf(`(document.body.getAttribute("data-snapshot-state") || "") !== %q`, before), 20*time.Second)
	time.Sleep(300 * time.Millisecond)
	if !evalJS[bool](tb, `!!document.getElementById("snap-tip")`) {
		t.Errorf("the tooltip of a tap vanished when the finger lifted")
	}
	tb.assertClean()
}
