package app

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/diagchart"
	"oomscope/estimator"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/chart"
)

// The snapshot page's diagnosis (computed in the worker, analysis
// DiagnosisReport): the cause, the fixes with the bytes they save, the leak
// with its stack and the card at the OOM come first after the drop; the
// steps with their growth chart, the anomalies, the byte-time icicle and
// the setup for the estimator follow the timeline.

// maxStepRows is how many steps the step table lists at first (the chart
// shows them all; "List more" adds stepRowsMore rows): its 200 rows were
// most of the main thread's longest task on a trace of many steps (the
// browser's layout of the table); shownFixes how many fixes are open, the
// rest folded.
const (
	maxStepRows = 20
	shownFixes  = 3
	// stepRowsMore is how many more steps a click lists.
	stepRowsMore = 1000
)

// renderDiagnosis is the answer: cause, leak, fixes (once withFixes: they
// come a stage after the rest; the folded ones once withMore), card at
// the OOM.
func (p *SnapshotPage) renderDiagnosis(d *analysis.DeviceReport, withFixes, withMore bool) app.UI {
	dg := d.Diagnosis
	if dg.Cause == "" {
		return app.Text("")
	}
	where := ""
	if d.PeakPhase.Step >= 0 {
		where = fmt.Sprintf("The peak falls in the %s phase of step %d of %d.", d.PeakPhase.Phase, d.PeakPhase.Step, len(d.Steps))
	}
	var ev []app.UI
	for _, n := range dg.Evidence {
		ev = append(ev, app.Li().Body(app.Code().Text(n.Name), app.Text(fmt.Sprintf(" %s (%s B): %s", bytesize.Format(n.Bytes, p.unit), bytesize.Commas(n.Bytes), n.Formula.Format(p.unit)))))
	}
	return app.Section().ID("snap-diagnosis").Class("snap-diagnosis").DataSet("cause", dg.Cause).Body(
		app.H2().Text("Diagnosis"),
		app.P().ID("snap-cause").Class("diag-cause").Body(
			app.Strong().Text(causeTitle(dg.Cause)+". "),
			app.Text(upperFirst(dg.Why.Format(p.unit))+"."),
		),
		app.If(where != "", func() app.UI { return app.P().ID("snap-peak-phase").Text(where) }),
		app.Details().Class("diag-rule").Body(
			app.Summary().Text("The rule and the numbers"),
			app.P().Text(dg.Rule.Format(p.unit)+"."),
			app.Ul().Body(ev...),
		),
		p.renderLeak(d),
		app.If(withFixes, func() app.UI { return p.renderDiagFixes(d, withMore) }),
		app.If(d.OOMCard != nil, func() app.UI {
			c := d.OOMCard
			return app.Div().ID("snap-oom-bar").Body(cardBar(c.Bar, p.unit, "snap-oom", fmt.Sprintf("At the last out-of-memory event (entry %s): %s.",
				bytesize.Commas(int64(c.Index)), c.CapacityRule.Format(p.unit))))
		}),
	)
}

// renderDiagnosing is the answer's place while the worker diagnoses (the
// summary cards and the timeline are shown meanwhile).
func renderDiagnosing() app.UI {
	return app.Section().ID("snap-diagnosing").Class("snap-diagnosis").Aria("busy", "true").Aria("live", "polite").Body(
		app.H2().Text("Diagnosis"),
		app.P().Class("muted").Text("Diagnosing… finding the training steps and phases, and the cause of the peak."),
	)
}

// causeTitle names a triage cause for a heading.
func causeTitle(c string) string {
	switch c {
	case "other-process":
		return "Another process"
	case "non-pytorch":
		return "Memory outside PyTorch"
	}
	return upperFirst(strings.ReplaceAll(c, "-", " "))
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// renderLeak is the leak callout with the stack of its largest kept block.
func (p *SnapshotPage) renderLeak(d *analysis.DeviceReport) app.UI {
	lk := d.Leak
	if lk == nil || len(lk.Sites) == 0 {
		return app.Text("")
	}
	s := lk.Sites[0]
	return app.Div().ID("snap-leak").Class("notice diag-leak").DataSet("bytes-per-step", strconv.FormatInt(lk.BytesPerStep, 10)).Body(
		app.P().Body(
			app.Strong().Text(fmt.Sprintf("Memory leaks %s per step", bytesize.Format(lk.BytesPerStep, p.unit))),
			app.Text(fmt.Sprintf(" (%s confidence, judged on %d steps). ", lk.Confidence, lk.Steps)),
			app.Text(upperFirst(lk.Why.Format(p.unit))+"."),
		),
		app.P().Body(app.Text("Line: "), app.Code().ID("snap-leak-site").Text(shown(s.Site)),
			app.Text(fmt.Sprintf(" keeps %d block(s), %s, per step.", s.Blocks, bytesize.Format(s.BytesPerStep, p.unit)))),
		app.Details().Body(
			app.Summary().Text("Stack of one kept block"),
			app.Pre().Class("snap-stack").TabIndex(0).Text(stackText(s.Stack)),
		),
	)
}

func stackText(st []string) string {
	if len(st) == 0 {
		return analysis.NoStackExplanation
	}
	return strings.Join(shownLines(st), "\n")
}

// renderDiagFixes lists the fixes with the bytes they save, their code and
// guide link; the folded ones only withMore (their fold is there either
// way, so that nothing below it moves when they come).
func (p *SnapshotPage) renderDiagFixes(d *analysis.DeviceReport, withMore bool) app.UI {
	if len(d.Fixes) == 0 {
		return app.P().Class("muted").Text("No fix in the catalog lowers this measured peak by 0.5 % or more.")
	}
	var items, more []app.UI
	for i, f := range d.Fixes {
		if i >= shownFixes && !withMore {
			break
		}
		of := map[string]string{"peak_allocated": "off the peak", "reserved": "of reserved memory made reusable", "device": "held on the card by others"}[f.Of]
		li := app.Li().Class("card diag-fix").DataSet("fix", f.ID).DataSet("saves", strconv.FormatInt(f.SavesBytes, 10)).Body(
			app.Div().Class("diag-fix-head").Body(
				app.H4().Text(f.Title),
				app.Span().Class("diag-saves").Text(fmt.Sprintf("saves %s %s", bytesize.Format(f.SavesBytes, p.unit), of)),
			),
			app.P().Text(upperFirst(f.Why.Format(p.unit))+"."),
			&FixCode{Fix: f.Fix, ID: fmt.Sprintf("snap-fix-%d", i)},
		)
		if i < shownFixes {
			items = append(items, li)
		} else {
			more = append(more, li)
		}
	}
	return app.Div().Body(
		app.H3().Text("Fixes, cheapest first, with what each saves here"),
		app.Ol().ID("snap-fixes").Class("diag-fixes").Body(items...),
		app.If(len(d.Fixes) > shownFixes, func() app.UI {
			return app.Details().ID("snap-more-fixes").Body(
				app.Summary().Text(fmt.Sprintf("%d more fixes", len(d.Fixes)-shownFixes)),
				app.Ol().Class("diag-fixes").Attr("start", shownFixes+1).Body(more...),
			)
		}),
		app.P().Class("formula").Text(analysis.FixRule.Format(p.unit)+"."),
	)
}

// phaseShades are the shaded bands of a timeline of entries from to to
// (its first and last point): each step's phases (analysis PhaseSpans),
// coloured by phase, every other step a shade darker so that steps stand
// apart, with their classes and tooltips (class and label, made only for
// the bands drawn). A trace of many short steps has hundreds of thousands
// of spans, nearly all too narrow to draw over the whole trace, and this
// runs on the page's main thread: the spans that the timeline would not
// draw for sure (narrower than 4 of its 10,000 units, where it draws from
// 5: chart's minShade, its coordinates rounded) are only counted (hidden,
// which the timeline adds to its own count), not made into bands. Making
// them all (the 1 GiB distinct-stacks file: 194,000) and the chart's loop
// over them took the main thread 70 ms.
func phaseShades(d *analysis.DeviceReport, from, to int) (shades []chart.Shade, class, label func(k int) string, hidden int) {
	var spans []int // the spans made into shades
	width := int64(max(to-from, 0))
	for k := range d.PhaseSpans {
		sp := &d.PhaseSpans[k]
		lo, hi := max(sp.FirstEntry, from), min(sp.LastEntry, to)
		if lo > hi {
			continue
		}
		if int64(hi-lo)*10000 <= 4*width {
			hidden++
			continue
		}
		shades = append(shades, chart.Shade{From: sp.FirstEntry, To: sp.LastEntry})
		spans = append(spans, k)
	}
	class = func(k int) string {
		sp := d.PhaseSpans[spans[k]]
		if int(sp.Phase) >= len(shadeClasses) {
			return ""
		}
		return shadeClasses[sp.Phase][sp.Step&1]
	}
	label = func(k int) string {
		sp := d.PhaseSpans[spans[k]]
		return "step " + strconv.Itoa(sp.Step) + ": " + sp.Phase.String() + " (entries " + strconv.Itoa(sp.FirstEntry) + "–" + strconv.Itoa(sp.LastEntry) + ")"
	}
	return shades, class, label, hidden
}

// shadeClasses are the CSS classes of a phase's bands, by phase and by
// step parity.
var shadeClasses = func() (c [len(analysis.Phases)][2]string) {
	for _, ph := range analysis.Phases {
		c[ph] = [2]string{"shade-" + ph.String() + " shade-step-0", "shade-" + ph.String() + " shade-step-1"}
	}
	return c
}()

// renderSteps shows the steps: the growth chart and, withTable, the table
// with each phase's peak (its place is there before it comes).
func (p *SnapshotPage) renderSteps(d *analysis.DeviceReport, withTable bool) app.UI {
	if len(d.Steps) == 0 {
		return app.Section().ID("snap-steps").Body(app.H2().Text("Steps"), app.P().Class("muted").Text(upperFirst(d.StepInfo.Rule)+"."))
	}
	// Only the table's rows need their phase peaks, in an array per row
	// (a map keyed by step and phase was a third of this function on a
	// trace of many steps: the page's wasm hashes slowly).
	phases := [...]analysis.Phase{analysis.PhaseForward, analysis.PhaseBackward, analysis.PhaseOptimizer, analysis.PhaseOther}
	type rowPeaks struct {
		bytes [len(phases)]int64
		has   [len(phases)]bool
	}
	shown := min(len(d.Steps), max(p.stepRows, maxStepRows))
	if !withTable {
		shown = 0
	}
	peaks := make([]rowPeaks, shown)
	for _, pp := range d.PhasePeaks {
		if shown == 0 {
			// The chart alone: the rows' peaks are not read (a trace of
			// many steps has four a step).
			break
		}
		if pp.Step < 0 || pp.Step >= shown {
			continue
		}
		for j, ph := range phases {
			if ph == pp.Phase {
				peaks[pp.Step].bytes[j], peaks[pp.Step].has[j] = pp.PeakAllocatedBytes, true
			}
		}
	}
	// The rows carry no handlers: they are written as HTML in one piece,
	// which the browser parses far faster than go-app mounts 200 rows of
	// nine cells one element at a time (the rows of a trace of many steps
	// took a main-thread task of 280 ms).
	var b strings.Builder
	// The whole table: a <tbody> alone would lose its rows (go-app parses
	// raw HTML inside a <div>).
	b.WriteString(`<table id="snap-step-table" class="diag-steps"><thead><tr><th>step</th><th>entries</th><th>peak</th>` +
		`<th>at the end</th><th>forward</th><th>backward</th><th>optimizer</th><th>other</th><th>passes</th></tr></thead><tbody>`)
	td := func(text string) {
		b.WriteString("<td>")
		b.WriteString(html.EscapeString(text))
		b.WriteString("</td>")
	}
	for k, s := range d.Steps[:shown] {
		b.WriteString(`<tr data-step="`)
		b.WriteString(strconv.Itoa(k))
		if k == d.PeakPhase.Step {
			b.WriteString(`" class="diag-peak-step`)
		}
		b.WriteString(`">`)
		label := strconv.Itoa(k)
		if s.Partial {
			label += " (partial)"
		}
		td(label)
		td(bytesize.Commas(int64(s.FirstEntry)) + "–" + bytesize.Commas(int64(s.LastEntry)))
		td(bytesize.Format(s.PeakAllocatedBytes, p.unit))
		b.WriteString(`<td data-end="`)
		b.WriteString(strconv.FormatInt(s.EndAllocatedBytes, 10))
		b.WriteString(`">`)
		b.WriteString(html.EscapeString(bytesize.Format(s.EndAllocatedBytes, p.unit)))
		b.WriteString("</td>")
		for j, ph := range phases {
			v, ok := peaks[k].bytes[j], peaks[k].has[j]
			if !ok {
				td("–")
				continue
			}
			b.WriteString(`<td data-phase="`)
			b.WriteString(ph.String())
			b.WriteString(`">`)
			b.WriteString(html.EscapeString(bytesize.Format(v, p.unit)))
			b.WriteString("</td>")
		}
		td(passesText(s))
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>")
	more := min(len(d.Steps)-shown, stepRowsMore)
	return app.Section().ID("snap-steps").Class("snap-steps").Body(
		app.H2().Text("Steps and phases"),
		app.P().Class("muted").Text(upperFirst(d.StepInfo.Rule)+". Phases from "+d.StepInfo.Phases+"."),
		app.Div().ID("snap-step-chart").Class("diag-step-chart").Body(app.Raw(p.stepsChartSVG(d))),
		app.P().Class("muted").Text("Bars: each step's peak allocated memory; the dark mark: what was left at its end. "+
			"Step-end memory that climbs step after step is a leak; the dashed line is the leak found."),
		app.Div().Class("table-wrap").TabIndex(0).Role("region").Aria("label", "Steps").Body(
			app.If(withTable, func() app.UI { return app.Raw(b.String()) })),
		app.If(withTable && shown < len(d.Steps), func() app.UI {
			return app.P().ID("snap-steps-shown").Body(
				app.Text(fmt.Sprintf("Steps 0 to %s of %s are listed (the chart shows all). ", bytesize.Commas(int64(shown-1)), bytesize.Commas(int64(len(d.Steps))))),
				app.Button().ID("snap-steps-more").Class("secondary").Text(fmt.Sprintf("List %s more", bytesize.Commas(int64(more)))).
					// go-app keeps a button's first handler across renders:
					// it reads the count from the page, not from this render.
					OnClick(func(ctx app.Context, e app.Event) { p.stepRows = max(p.stepRows, maxStepRows) + stepRowsMore }),
			)
		}),
	)
}

// stepsChart is a device's steps' chart drawn in a unit (drawSteps).
type stepsChart struct {
	dev  *analysis.DeviceReport
	unit bytesize.Unit
	svg  string
}

// stepsChartSVG returns the SVG of device d's steps' chart in the page's
// unit, drawn once for each device and unit: the section is drawn again
// when its table comes (stepTableStage), and the chart of a trace of many
// steps took 8 ms of CPU to lay out each time. The reveal draws it ahead,
// in a task of its own (revealMore).
func (p *SnapshotPage) stepsChartSVG(d *analysis.DeviceReport) string {
	if p.steps.dev != d || p.steps.unit != p.unit {
		p.steps = stepsChart{dev: d, unit: p.unit, svg: drawSteps(d, p.unit)}
	}
	return p.steps.svg
}

// drawSteps draws device d's steps' chart in unit u: each step's peak and
// end, and the leak found.
func drawSteps(d *analysis.DeviceReport, u bytesize.Unit) string {
	in := diagchart.Input{Unit: u, Steps: make([]diagchart.Step, 0, len(d.Steps))}
	for _, s := range d.Steps {
		in.Steps = append(in.Steps, diagchart.Step{Peak: s.PeakAllocatedBytes, End: s.EndAllocatedBytes, Partial: s.Partial})
	}
	if lk := d.Leak; lk != nil {
		in.LeakPerStep = lk.BytesPerStep
		for k, s := range d.Steps {
			if !s.Partial {
				in.LeakFrom = k
				break
			}
		}
	}
	return diagchart.Layout(in).SVG()
}

func passesText(s analysis.Step) string {
	t := fmt.Sprintf("%d backward", s.MicroBatches)
	if s.EvalPasses > 0 {
		t += fmt.Sprintf(", %d eval", s.EvalPasses)
	}
	return t
}

// renderAnomalies lists pending frees and long-lived allocations, and
// draws the byte-time icicle.
func (p *SnapshotPage) renderAnomalies(d *analysis.DeviceReport) app.UI {
	an := d.Anomalies
	list := func(title, id string, sites []analysis.AnomalySite) app.UI {
		if len(sites) == 0 {
			return app.Text("")
		}
		var li []app.UI
		for _, s := range sites {
			li = append(li, app.Li().DataSet("bytes", strconv.FormatInt(s.Bytes, 10)).Body(
				app.Code().Text(shown(s.Site)), app.Text(": "+upperFirst(s.Why.Format(p.unit))+"."),
				app.Details().Body(app.Summary().Text("Stack"), app.Pre().Class("snap-stack").TabIndex(0).Text(stackText(s.Stack))),
			))
		}
		return app.Div().ID(id).Body(app.H3().Text(title), app.Ul().Body(li...))
	}
	return app.Section().ID("snap-anomalies").Class("snap-anomalies").Body(
		app.H2().Text("What else holds memory"),
		list("Frees waiting on another stream", "snap-pending", an.PendingFrees),
		list("Long-lived allocations no step explains", "snap-long-lived", an.LongLived),
		app.If(len(an.PendingFrees)+len(an.LongLived) == 0, func() app.UI {
			return app.P().Class("muted").Text("No pending frees and no long-lived allocations outside the model state.")
		}),
		app.P().Class("formula").Text(an.Rule.Format(p.unit)+"."),
		p.renderIcicle(d.ByteTime),
	)
}

// renderIcicle draws the allocation stacks weighted by bytes × lifetime.
func (p *SnapshotPage) renderIcicle(bt *analysis.ByteTime) app.UI {
	if bt == nil || len(bt.Nodes) == 0 {
		return app.Text("")
	}
	nodes := make([]diagchart.Node, len(bt.Nodes))
	for i, n := range bt.Nodes {
		nodes[i] = diagchart.Node{Name: n.Name, Parent: n.Parent, Weight: n.Weight}
	}
	cells := diagchart.Icicle(nodes, 0.004, 28)
	depth := 0
	for _, c := range cells {
		depth = max(depth, c.Depth+1)
	}
	// Written as HTML in one piece (the cells have no handlers): go-app
	// mounting hundreds of cells one element at a time was most of a long
	// main-thread task.
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="icicle" style="height: %dpx">`, 18*depth)
	for _, c := range cells {
		name := html.EscapeString(shown(c.Name))
		fmt.Fprintf(&b, `<div class="icicle-cell" style="left: %.4f%%; width: %.4f%%; top: %dpx" title="%s — %.1f %% of the byte-time">%s</div>`,
			100*c.X, 100*c.W, 18*c.Depth, name, 100*c.Share, name)
	}
	b.WriteString("</div>")
	unit := map[string]string{"byte_seconds": "bytes × seconds", "byte_entries": "bytes × trace entries (the trace has no times)"}[bt.Unit]
	return app.Div().ID("snap-icicle").Body(
		app.H3().Text("What holds memory longest"),
		app.P().Class("muted").Text("Allocation stacks, outermost frame on top, each as wide as its share of "+unit+
			": long-lived big blocks dominate, short temporaries vanish. Hover a frame for its share."),
		app.Raw(b.String()),
	)
}

// renderSetup compares the measured model state with the estimator's and
// links to the estimator with the setup.
func (p *SnapshotPage) renderSetup(d *analysis.DeviceReport) app.UI {
	s := d.Setup
	if s == nil {
		return app.Text("")
	}
	var rows []app.UI
	for _, b := range s.CompareBuckets(p.setupModel) {
		rows = append(rows, app.Tr().DataSet("bucket", b.Bucket).Body(
			app.Td().Text(b.Bucket),
			app.Td().Text(bytesize.Format(b.MeasuredBytes, p.unit)),
			app.Td().Text(bytesize.Format(b.EstimatedBytes, p.unit)),
			app.Td().Class("muted").Text(b.Why),
		))
	}
	query := s.Query
	var opts []app.UI
	opts = append(opts, app.Option().Value("").Text("the model shown above, or pick one"))
	for _, m := range estimator.Models() {
		opts = append(opts, app.Option().Value(m.ID).Selected(p.setupModel == m.ID).Text(m.Name))
	}
	if p.setupModel != "" {
		query = withModel(query, p.setupModel)
	}
	models := "No catalog model has this size and these weight shapes: pick yours."
	if len(s.Models) > 0 {
		var names []string
		for _, m := range s.Models {
			names = append(names, fmt.Sprintf("%s (%s, %+.1f %%)", m.Name, m.Dtype, m.OffPercent))
		}
		models = "Matching catalog models: " + strings.Join(names, ", ") + "."
	}
	return app.Section().ID("snap-setup").Class("snap-setup").Body(
		app.H2().Text("Compare with the estimator"),
		app.P().Text(upperFirst(s.Why.Format(p.unit))+"."),
		app.P().ID("snap-setup-models").Text(models),
		app.If(len(rows) > 0, func() app.UI {
			return app.Div().Class("table-wrap").TabIndex(0).Role("region").Aria("label", "Measured and estimated").Body(app.Table().ID("snap-setup-buckets").Body(
				app.THead().Body(app.Tr().Body(app.Th().Text("bucket"), app.Th().Text("measured"), app.Th().Text("estimated"), app.Th().Text("why they differ"))),
				app.TBody().Body(rows...),
			))
		}),
		app.P().Body(
			app.Label().Body(app.Text("Model "), app.Select().ID("snap-setup-model").OnChange(p.onSetupModel).Body(opts...)),
			app.Text(" "),
			app.A().ID("snap-estimate-link").Class("button").Href(Href("/estimate?"+query)).Text("Open in the estimator"),
		),
	)
}

func (p *SnapshotPage) onSetupModel(ctx app.Context, e app.Event) {
	p.setupModel = ctx.JSSrc().Get("value").String()
}

// withModel sets model= in an /estimate query.
func withModel(query, model string) string {
	var parts []string
	for _, kv := range strings.Split(query, "&") {
		if kv != "" && !strings.HasPrefix(kv, "model=") {
			parts = append(parts, kv)
		}
	}
	return strings.Join(append([]string{"model=" + model}, parts...), "&")
}

// scrollToAnswer brings the element with the given id into view on narrow
// screens, where the answer would otherwise sit below the drop zone.
func scrollToAnswer(id string) {
	defer func() { recover() }() // a missing element or API is no error
	w := app.Window()
	if w.Get("innerWidth").Int() >= 760 {
		return
	}
	if el := w.Get("document").Call("getElementById", id); el.Truthy() {
		el.Call("scrollIntoView", map[string]any{"block": "start"})
	}
}
