//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// answerStatesJS records every state of the snapshot page's answer while a
// result appears (window.__answerStates, one entry per change): whether
// the timeline is drawn, whether the answer says "Diagnosing…" (and is
// marked aria-busy), the cause shown, whether the steps are, and how many
// phase shades the timeline has.
const answerStatesJS = `(() => {
	window.__answerStates = [];
	const look = () => {
		if (!document.getElementById("snap-results")) return;
		const d = document.getElementById("snap-diagnosis"), busy = document.getElementById("snap-diagnosing");
		const st = {chart: !!document.querySelector("#snap-chart svg"), diagnosing: !!busy,
			busy: !!busy && busy.getAttribute("aria-busy") === "true",
			cause: d ? d.dataset.cause || "" : "", steps: !!document.getElementById("snap-steps"),
			shades: document.querySelectorAll("#snap-chart rect.snap-shade").length};
		const s = window.__answerStates, last = s[s.length - 1];
		if (!last || JSON.stringify(last) !== JSON.stringify(st)) s.push(st);
	};
	new MutationObserver(look).observe(document.body, {childList: true, subtree: true, attributes: true});
	return true;
})()`

// answerState is one entry of window.__answerStates.
type answerState struct {
	Chart, Diagnosing, Busy, Steps bool
	Cause                          string
	Shades                         int
}

// TestSnapshotDiagnosisAfterTimeline drops a real snapshot whose diagnosis
// the worker holds back 600 ms (its test knob self.__oomscopeDiagnosisTest,
// wasm/snapworker): the worker sends the result without the diagnoses
// first, and the page must draw the summary and the timeline with
// "Diagnosing…" (aria-busy) in the answer's place, never an empty answer
// or two, no steps and no phase shades yet; then the diagnosis as the
// analysis run here makes it (cause, peak phase, one shade per phase span,
// the fixes). Then the diagnosis fails (the knob's fail, a panic in the
// worker as a bug would be): the page shows the error, not "Diagnosing…"
// for ever; and a file dropped after it is analysed whole.
func TestSnapshotDiagnosisAfterTimeline(t *testing.T) {
	path := realSnapshotPath(t, "pt26_cs336_ctx128_fullstep.pickle")
	_, want := expectedReport(t, path)
	if want.Diagnosis.Cause == "" || len(want.PhaseSpans) == 0 || len(want.Steps) == 0 {
		t.Fatalf("the analysis should diagnose %s with steps and phases: the test would test nothing", path)
	}
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/snapshot")
	tb.waitText("#snap-private", "never leaves your browser")

	// 1. Held back: the intermediate state can be seen.
	inWorker[bool](t, tb, `self.__oomscopeDiagnosisTest = {delayMs: 600}, true`)
	evalJS[bool](tb, answerStatesJS)
	tb.uploadFile("#snap-file", path)
	requireSnapshot(tb, "with the diagnosis held back")
	tb.assertNoErrorBanner("after the diagnosis")
	states := evalJS[[]answerState](tb, `window.__answerStates`)
	t.Logf("%d states of the answer: %+v", len(states), states)
	waited := false
	for k, st := range states {
		if st.Diagnosing == (st.Cause != "") {
			t.Errorf("state %d: diagnosing %v with cause %q: the answer is empty or shown twice", k, st.Diagnosing, st.Cause)
		}
		if st.Diagnosing != st.Busy {
			t.Errorf("state %d: diagnosing %v but aria-busy %v", k, st.Diagnosing, st.Busy)
		}
		if st.Cause != "" && st.Cause != want.Diagnosis.Cause {
			t.Errorf("state %d: cause %q, want %q", k, st.Cause, want.Diagnosis.Cause)
		}
		if st.Diagnosing && (st.Steps || st.Shades > 0) {
			t.Errorf("state %d: steps or phase shades shown before the diagnosis", k)
		}
		if k > 0 && states[k-1].Cause != "" && st.Diagnosing {
			t.Errorf("state %d: Diagnosing… again after the cause", k)
		}
		waited = waited || st.Diagnosing && st.Chart
	}
	if !waited {
		t.Error("the timeline was never drawn while the answer said Diagnosing…")
	}
	if got := evalJS[string](tb, `document.getElementById("snap-diagnosis").dataset.cause`); got != want.Diagnosis.Cause {
		t.Errorf("cause %q, want %q", got, want.Diagnosis.Cause)
	}
	if want.PeakPhase.Step >= 0 {
		where := fmt.Sprintf("The peak falls in the %s phase of step %d of %d.", want.PeakPhase.Phase, want.PeakPhase.Step, len(want.Steps))
		if got := tb.text("#snap-peak-phase"); got != where {
			t.Errorf("peak phase %q, want %q", got, where)
		}
	}
	// The shades come with the diagnosis, in a task after it: one band
	// per phase span, drawn or counted among those too narrow to draw.
	shaded := poll[string](tb, fmt.Sprintf(`(() => {
		const n = document.querySelectorAll("#snap-chart rect.snap-shade").length, h = document.getElementById("snap-shades-hidden");
		const hidden = h ? parseInt(h.textContent, 10) : 0;
		return n > 0 && n + hidden === %d ? n + "+" + hidden : ""; })()`, len(want.PhaseSpans)), 20*time.Second)
	t.Logf("shades drawn + too narrow: %s of %d phase spans", shaded, len(want.PhaseSpans))
	poll[bool](tb, `!!document.getElementById("snap-steps")`, 20*time.Second)
	if len(want.Fixes) > 0 {
		poll[bool](tb, `!!document.getElementById("snap-fix-0-code")`, 20*time.Second)
	}
	if txt := tb.text("#snap-results"); strings.Contains(txt, "Diagnosing…") {
		t.Error("the results still say Diagnosing…")
	}
	tb.assertNoErrorBanner("with the diagnosis shown")

	// 2. The diagnosis fails: the error, alone.
	inWorker[bool](t, tb, `self.__oomscopeDiagnosisTest = {delayMs: 300, fail: "on purpose"}, true`)
	tb.expectErrors()
	// The state can last a single frame (the error follows the result's
	// frame when the page drew it late, on a loaded machine), which a poll
	// over the DevTools connection may miss: an observer records it.
	evalJS[bool](tb, `(window.__sawDiagnosing = false, new MutationObserver(() => {
		if (document.getElementById("snap-diagnosing")) window.__sawDiagnosing = true;
	}).observe(document.body, {childList: true, subtree: true}), true)`)
	tb.uploadFile("#snap-file", path)
	poll[bool](tb, `window.__sawDiagnosing`, 20*time.Second)
	ready, msg := snapshotOutcome(tb, 20*time.Second)
	if ready {
		t.Fatal("the page says ready although the diagnosis failed")
	}
	if !strings.Contains(msg, "internal error") || !strings.Contains(msg, "diagnosis test: on purpose") {
		t.Errorf("error banner %q: want the worker's internal error", msg)
	}
	if evalJS[bool](tb, `!!document.getElementById("snap-diagnosing") || !!document.getElementById("snap-results")`) {
		t.Error("the page still shows the result without its diagnosis beside the error")
	}

	// 3. The page stays usable: the next file is analysed whole.
	inWorker[bool](t, tb, `delete self.__oomscopeDiagnosisTest, true`)
	tb.uploadFile("#snap-file", path)
	requireSnapshot(tb, "after the failed diagnosis")
	if got := evalJS[string](tb, `document.getElementById("snap-diagnosis").dataset.cause`); got != want.Diagnosis.Cause {
		t.Errorf("after the failure: cause %q, want %q", got, want.Diagnosis.Cause)
	}
	if evalJS[bool](tb, `!!document.getElementById("snap-error")`) {
		t.Errorf("after the failure: the page still shows the error %q", tb.text("#snap-error"))
	}
	tb.assertClean()
}
