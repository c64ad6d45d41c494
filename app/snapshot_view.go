package app

import (
	"oomscope/bytesize"

	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/snapshot/analysis"
	"oomscope/snapshot/chart"
)

// whenText says when trace index idx (at time t) of a device with the
// given entries and first time happened.
func whenText(entries int, first int64, idx int, t int64) string {
	if idx < 0 {
		return "before the first trace entry: already live when recording started"
	}
	s := fmt.Sprintf("after entry %s of %s", bytesize.Commas(int64(idx)), bytesize.Commas(int64(entries)))
	if t > 0 && first > 0 {
		s += fmt.Sprintf(", %.3f s into the trace", float64(t-first)/1e6)
	}
	return s
}

// renderSummary shows the busiest device's peaks, which the worker sent
// before it failed.
func (p *SnapshotPage) renderSummary() app.UI {
	return app.Div().Class("cards snap-cards").ID("snap-summary").Body(p.headlineCards()...)
}

// headlineCards are the peak and reserved cards of the summary's busiest
// device, as the result's cards show them (renderCards).
func (p *SnapshotPage) headlineCards() []app.UI {
	h := p.summary[max(0, analysis.BusiestHeadline(p.summary))]
	return []app.UI{
		app.Div().DataSet("bytes", strconv.FormatInt(h.PeakAllocatedBytes, 10)).DataSet("index", h.PeakIndex).
			DataSet("device", h.Device).ID("snap-peak-wrap").Body(
			card("snap-peak", "Peak allocated", bytesize.Format(h.PeakAllocatedBytes, p.unit),
				fmt.Sprintf("%s B, %s", bytesize.Commas(h.PeakAllocatedBytes), whenText(h.Entries, h.FirstTimeUS, h.PeakIndex, h.PeakTimeUS)), "")),
		card("snap-reserved", "Peak reserved", bytesize.Format(h.PeakReservedBytes, p.unit),
			fmt.Sprintf("%s B, %s", bytesize.Commas(h.PeakReservedBytes), whenText(h.Entries, h.FirstTimeUS, h.PeakReservedIndex, 0)),
			fmt.Sprintf("at the end: %s reserved, %s allocated", bytesize.Format(h.FinalReservedBytes, p.unit), bytesize.Format(h.FinalAllocatedBytes, p.unit))),
	}
}

// renderResults shows everything known about the file. Before the
// result, from its summary on (p.res nil, p.summary set), it is the
// result's frame (its head, the "Diagnosing…" answer and the cards with
// the peaks, the other numbers to come), with the same elements in the
// same places: go-app matches children by position, and the result's
// frame then updates their text rather than mounting them all (the
// summary's cards, a tree of their own, were mounted again in the
// result's frame, with the head, the answer and the unit toggle).
func (p *SnapshotPage) renderResults() app.UI {
	d := p.device()
	skeleton := p.res == nil
	if skeleton && len(p.summary) == 0 || !skeleton && d == nil {
		return app.Text("")
	}
	// The sections after the timeline come with the result (a
	// skeleton's reveal is 0; p.reveal may be a previous file's).
	reveal := p.reveal
	if skeleton {
		reveal = 0
	}
	var devOpts []app.UI
	var about, id string
	devices := len(p.summary)
	if skeleton {
		busiest := max(0, analysis.BusiestHeadline(p.summary))
		for i, h := range p.summary {
			devOpts = append(devOpts, deviceOption(i, i == busiest, h.Device, h.Entries))
		}
		about = fmt.Sprintf("%s · %s · analysing, in this browser", bytesize.Format(p.fileSize, p.unit), traceEntries(p.summary[busiest].Entries))
		id = "snap-summary"
	} else {
		for i, dd := range p.res.Devices {
			devOpts = append(devOpts, deviceOption(i, i == p.dev, dd.Device, dd.Entries))
		}
		devices = len(p.res.Devices)
		about = fmt.Sprintf("%s · pickle protocol %d · %s · decoded in %d ms, analysed in %d ms, in this browser",
			bytesize.Format(p.fileSize, p.unit), p.res.PickleProtocol, traceEntries(d.Entries), p.res.DecodeMS, p.res.AnalyseMS)
		id = "snap-results"
	}
	sec := app.Section().ID(id).Class("snap-results")
	cards := func() app.UI { return p.summaryCards() }
	if !skeleton {
		sec = sec.DataSet("decode-ms", p.res.DecodeMS).DataSet("analyse-ms", p.res.AnalyseMS).DataSet("split-bytes", p.res.SplitBytes)
		cards = func() app.UI { return p.renderCards(d) }
	}
	return sec.Body(
		app.Div().Class("snap-head").Body(
			app.Div().Body(
				app.H2().ID("snap-filename").Text(p.fileName),
				app.P().Class("muted").Text(about),
			),
			app.Div().Class("snap-actions").Body(
				app.If(devices > 1, func() app.UI {
					return app.Label().Class("snap-device").Body(
						app.Text("Device "),
						app.Select().ID("snap-device").Disabled(skeleton).OnChange(p.onDevice).Body(devOpts...),
					)
				}),
				app.Button().ID("snap-copy").Disabled(skeleton).Text("Copy as Markdown").OnClick(p.onCopyMarkdown),
			),
		),
		unitToggle(p.unit, p.setUnit),
		// What may appear above a section holds its place while absent
		// (slot): go-app matches children by position, and a child added
		// in front of a section made it and every one after it drawn anew
		// (the timeline's SVG parsed again: 9 ms of 31-35 in the fixes'
		// stage on the 55 MB distinct-stacks file).
		slot(p.copyNote != "", func() app.UI { return app.P().Class("muted").ID("snap-copy-note").Text(p.copyNote) }),
		slot(p.markdown != "", func() app.UI {
			return app.Textarea().ID("snap-markdown").Class("snap-markdown").ReadOnly(true).Rows(10).Text(p.markdown)
		}),
		p.section(secDiagnosis, d),
		cards(),
		// The comparison's drop zone after the timeline's frame, which
		// then draws less (unless a comparison is under way or shown).
		slot(!skeleton && (reveal > timelineStage || p.cmp.phase != snapIdle), func() app.UI { return p.renderCompare() }),
		// From the summary on, the memory curve it brought (p.early),
		// the same section the result updates in place.
		app.If(skeleton && (p.early == nil || p.chart == nil), func() app.UI {
			return app.P().Class("muted").Text("Finding the allocation sites, categories and timeline…")
		}).ElseIf(skeleton, func() app.UI {
			return p.timelineView(p.early)
		}).ElseIf(reveal < timelineStage, func() app.UI {
			return app.P().Class("muted").Text("Drawing the timeline…")
		}).Else(func() app.UI { return p.timelineView(d) }),
		// One section more per stage (revealMore); each is a component
		// of its own, drawn once.
		app.If(reveal >= bucketsStage, func() app.UI { return p.section(secBuckets, d) }),
		app.If(reveal >= sitesStage, func() app.UI { return p.section(secSites, d) }),
		app.If(reveal >= stepsStage, func() app.UI { return p.section(secSteps, d) }),
		app.If(reveal >= stateStage, func() app.UI { return p.stateView(d) }),
		app.If(reveal >= stateStage, func() app.UI { return p.section(secOOMs, d) }),
		app.If(reveal >= anomaliesStage, func() app.UI { return p.section(secAnomalies, d) }),
		app.If(reveal >= setupStage, func() app.UI { return p.section(secSetup, d) }),
		app.If(reveal >= revealStages, func() app.UI { return p.section(secWarnings, d) }),
		app.If(reveal >= revealStages, func() app.UI { return p.section(secExplain, d) }),
	)
}

// traceEntries says how many trace entries a device has.
func traceEntries(n int) string {
	if n == 1 {
		return "1 trace entry"
	}
	return bytesize.Commas(int64(n)) + " trace entries"
}

// deviceOption is the device choice of device i (cuda:dev, with its
// entries).
func deviceOption(i int, selected bool, dev, entries int) app.UI {
	return app.Option().Value(strconv.Itoa(i)).Selected(selected).
		Text(fmt.Sprintf("cuda:%d (%s entries)", dev, bytesize.Commas(int64(entries))))
}

// slot is elem when shown, else an empty text node in its place, so that
// the elements after it keep their positions among their parent's
// children (an app.If that is false leaves none).
func slot(shown bool, elem func() app.UI) app.UI {
	return app.If(shown, elem).Else(func() app.UI { return app.Text("") })
}

// renderWarnings lists where the trace and the segments disagree.
func (p *SnapshotPage) renderWarnings(d *analysis.DeviceReport) app.UI {
	if len(d.Warnings) == 0 {
		return app.Text("")
	}
	var li []app.UI
	for _, w := range d.Warnings {
		li = append(li, app.Li().Text(shown(w)))
	}
	return app.Div().Class("notice").Body(app.Strong().Text("The trace and the segments disagree:"), app.Ul().Body(li...))
}

func card(id, title, big, sub, formula string) app.UI {
	return app.Div().Class("card snap-card").ID(id).Body(
		app.H3().Text(title),
		app.P().Class("snap-big").Text(big),
		app.P().Class("snap-sub").Text(sub),
		app.If(formula != "", func() app.UI { return app.P().Class("formula").Text(formula) }),
	)
}

// summaryCards are the result's cards (renderCards) as the summary knows
// them: the busiest device's peaks, the rest to come.
func (p *SnapshotPage) summaryCards() app.UI {
	return app.Div().Class("cards snap-cards").Body(append(p.headlineCards(),
		card("snap-culprit", "Biggest culprit at the peak", "…", "finding the allocation sites", ""),
		card("snap-free", "Free inside reserved at the peak", "…", "finding the free blocks", "reserved − allocated"),
		card("snap-oom-card", "Out-of-memory events", "…", "reading the trace", ""),
	)...)
}

func (p *SnapshotPage) renderCards(d *analysis.DeviceReport) app.UI {
	culprit := card("snap-culprit", "Biggest culprit at the peak", "–", "nothing was live", "")
	if len(d.TopSites) > 0 {
		s := d.TopSites[0]
		culprit = card("snap-culprit", "Biggest culprit at the peak", bytesize.Format(s.Bytes, p.unit),
			fmt.Sprintf("%s · %d allocation(s) · mostly %s", shown(s.Label), s.Count, s.Category),
			"grouped by the first user frame of each allocation's stack")
	}
	f := d.FragmentationAtPeak
	oom := "none in the trace"
	if n := len(d.OOMEvents); n > 0 {
		oom = fmt.Sprintf("%d: the first asked for %s with %s free", n, bytesize.Format(d.OOMEvents[0].RequestedBytes, p.unit), bytesize.Format(d.OOMEvents[0].DeviceFreeBytes, p.unit))
	}
	peak := card("snap-peak", "Peak allocated", bytesize.Format(d.PeakAllocatedBytes, p.unit),
		fmt.Sprintf("%s B, %s", bytesize.Commas(d.PeakAllocatedBytes), whenText(d.Entries, d.FirstTimeUS, d.PeakIndex, d.PeakTimeUS)),
		fmt.Sprintf("includes %s already live before recording started", bytesize.Format(d.InitialAllocatedBytes, p.unit)))
	return app.Div().Class("cards snap-cards").Body(
		app.Div().DataSet("bytes", strconv.FormatInt(d.PeakAllocatedBytes, 10)).DataSet("index", d.PeakIndex).
			DataSet("device", d.Device).ID("snap-peak-wrap").Body(peak),
		card("snap-reserved", "Peak reserved", bytesize.Format(d.PeakReservedBytes, p.unit),
			fmt.Sprintf("%s B, %s", bytesize.Commas(d.PeakReservedBytes), whenText(d.Entries, d.FirstTimeUS, d.PeakReservedIndex, 0)),
			fmt.Sprintf("at the end: %s reserved, %s allocated", bytesize.Format(d.FinalReservedBytes, p.unit), bytesize.Format(d.FinalAllocatedBytes, p.unit))),
		culprit,
		card("snap-free", "Free inside reserved at the peak", bytesize.Format(f.FreeBytes, p.unit),
			fmt.Sprintf("largest free block %s; %s rounding waste, %s between blocks", bytesize.Format(f.LargestFreeBlockBytes, p.unit),
				bytesize.Format(f.InternalFreeBytes, p.unit), bytesize.Format(f.ExternalFreeBytes, p.unit)),
			"reserved − allocated"),
		card("snap-oom-card", "Out-of-memory events", strconv.Itoa(len(d.OOMEvents)), oom, ""),
	)
}

// catClass is the CSS class of a category's colour.
func catClass(c string) string { return chart.CategoryClass(c) }

// categoryBar draws a split of bytes by category as one stacked bar.
func categoryBar(c analysis.CategoryBytes, u bytesize.Unit) app.UI {
	total := c.Total()
	var segs []app.UI
	for _, cat := range analysis.Categories() {
		v := c.Get(cat)
		if v == 0 || total == 0 {
			continue
		}
		segs = append(segs, app.Span().Class("snap-bar-seg "+catClass(cat.String())).
			Style("width", fmt.Sprintf("%.3f%%", 100*float64(v)/float64(total))).Title("%s: %s", cat, bytesize.Format(v, u)))
	}
	return app.Div().Class("snap-bar").Aria("hidden", "true").Body(segs...)
}

func (p *SnapshotPage) renderBuckets(d *analysis.DeviceReport) app.UI {
	var rows, rules []app.UI
	total := max(d.CategoriesAtPeak.Total(), 1)
	for _, cat := range analysis.Categories() {
		v := d.CategoriesAtPeak.Get(cat)
		if v == 0 {
			continue
		}
		rows = append(rows, app.Tr().Body(
			app.Td().Body(app.Span().Class("snap-swatch "+catClass(cat.String())), app.Text(" "+cat.String())),
			app.Td().Class("num").Text(bytesize.Format(v, p.unit)),
			app.Td().Class("num").Text(fmt.Sprintf("%.1f %%", 100*float64(v)/float64(total))),
		))
	}
	for _, r := range d.CategoryRules {
		rules = append(rules, app.Li().Body(
			app.Span().Class("snap-swatch "+catClass(r.Category)),
			app.Text(" "),
			app.Code().Text(r.Rule),
			app.Text(fmt.Sprintf(" → %s: %s in %d allocation(s). %s", r.Category, bytesize.Format(r.Bytes, p.unit), r.Count, r.Text)),
		))
	}
	return app.Section().Class("snap-buckets").ID("snap-buckets").Body(
		app.H2().Text("What the peak holds"),
		app.P().Class("muted").Text("Each allocation live at the peak is labelled by the first rule that fits its stack and "+
			"lifetime. Stack rules look for optimizer, autograd, module-construction and forward frames; lifetime rules check "+
			"whether it outlived its phase. They are heuristics: the rule behind every byte is listed."),
		categoryBar(d.CategoriesAtPeak, p.unit),
		app.Div().Class("table-wrap").Body(app.Table().Class("snap-cat-table").Body(
			app.THead().Body(app.Tr().Body(app.Th().Text("category"), app.Th().Class("num").Text("bytes"),
				app.Th().Class("num").Text("share"))),
			app.TBody().Body(rows...),
		)),
		app.Details().Class("snap-fold").Body(
			app.Summary().Text(fmt.Sprintf("Rules that fired (%d)", len(rules))),
			app.Ul().Class("snap-rules").Body(rules...),
		),
	)
}

// stackBlock shows a displayed stack, or why there is none.
func stackBlock(lines []string, text string) app.UI {
	if len(lines) == 0 {
		return app.P().Class("muted").Text(analysis.NoStackExplanation)
	}
	return app.Pre().Class("snap-stack").TabIndex(0).Text(text)
}

// groupedStack is a stack as the sites section shows it: your own code first,
// since it is what you can change, then torch and Python, then C++.
func groupedStack(lines []string) string {
	user, lib, native := analysis.StackGroups(lines)
	var out []string
	for _, g := range []struct {
		title string
		lines []string
	}{{"your code", user}, {"torch and Python", lib}, {"C++", native}} {
		if len(g.lines) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, "— "+g.title+" —")
		out = append(out, g.lines...)
	}
	return strings.Join(shownLines(out), "\n")
}

// siteStacks holds the text of each top site's stack of one device
// (groupedStack), worked out before the sites section is shown (revealMore):
// grouping the frames (a few regular expressions per line) made the sites'
// stage one of the page's longest tasks.
type siteStacks struct {
	dev  *analysis.DeviceReport
	text []string
}

// stackSlice is how long groupStacks works before it lets the browser run
// a task of its own.
const stackSlice = 8 * time.Millisecond

// groupStacks works out the text of each site's stack, off the UI
// goroutine, in browser tasks of at most about stackSlice each: run in one
// piece, it shared a task with the frame that the Go runtime reached while
// it ran.
func groupStacks(sites []analysis.SiteBytes) []string {
	text := make([]string, len(sites))
	pause := newPacer(stackSlice, time.Now, func() { nextTask(0) })
	for i, s := range sites {
		pause()
		text[i] = groupedStack(s.Stack)
	}
	return text
}

// siteStack returns the text of the stack of d's top site i.
func (p *SnapshotPage) siteStack(d *analysis.DeviceReport, i int) string {
	if p.stacks.dev == d && i < len(p.stacks.text) {
		return p.stacks.text[i]
	}
	return groupedStack(d.TopSites[i].Stack)
}

func (p *SnapshotPage) renderSites(d *analysis.DeviceReport) app.UI {
	var rows []app.UI
	for i, s := range d.TopSites {
		rows = append(rows, app.Tr().Body(
			app.Td().Class("num").Text(strconv.Itoa(i+1)),
			app.Td().Class("snap-site").Body(app.Details().Body(
				app.Summary().Text(shown(s.Label)),
				app.P().Class("muted").Text(fmt.Sprintf("%d allocation(s), mostly %s. Stack of the largest (%s), labelled by rule %s:",
					s.Count, s.Category, bytesize.Format(s.LargestBytes, p.unit), s.Rule)),
				stackBlock(s.Stack, p.siteStack(d, i)),
			)),
			app.Td().Class("num").Text(bytesize.Format(s.Bytes, p.unit)),
			app.Td().Class("num snap-wide").Text(strconv.Itoa(s.Count)),
			app.Td().Class("snap-wide").Body(app.Span().Class("snap-swatch "+catClass(s.Category)), app.Text(" "+s.Category)),
		))
	}
	return app.Section().Class("snap-sites").ID("snap-sites").Body(
		app.H2().Text("Top allocation sites at the peak"),
		app.P().Class("muted").Text(analysis.SiteRuleText+". Open a row for its stack."),
		app.Div().Class("table-wrap").Body(app.Table().Body(
			app.THead().Body(app.Tr().Body(app.Th().Class("num").Text("#"), app.Th().Text("site"), app.Th().Class("num").Text("bytes"),
				app.Th().Class("num snap-wide").Text("count"), app.Th().Class("snap-wide").Text("category"))),
			app.TBody().Body(rows...),
		)),
	)
}

func (p *SnapshotPage) renderOOMs(d *analysis.DeviceReport) app.UI {
	if len(d.OOMEvents) == 0 {
		return app.Text("")
	}
	var rows []app.UI
	for _, o := range d.OOMEvents {
		idx := o.Index
		top := ""
		if len(o.TopSites) > 0 {
			top = shown(o.TopSites[0].Label) + " (" + bytesize.Format(o.TopSites[0].Bytes, p.unit) + ")"
		}
		rows = append(rows, app.Tr().Body(
			app.Td().Class("num").Text(bytesize.Commas(int64(o.Index))),
			app.Td().Class("num").Text(bytesize.Format(o.RequestedBytes, p.unit)),
			app.Td().Class("num").Text(bytesize.Format(o.DeviceFreeBytes, p.unit)),
			app.Td().Class("num").Text(bytesize.Format(o.AllocatedBytes, p.unit)),
			app.Td().Class("num").Text(bytesize.Format(o.ReservedBytes, p.unit)),
			app.Td().Class("num").Text(bytesize.Format(o.LargestFreeBlockBytes, p.unit)),
			app.Td().Text(top),
			app.Td().Body(app.Button().Class("secondary").Text("Show state").OnClick(func(ctx app.Context, e app.Event) {
				p.requestState(ctx, idx)
			})),
		))
	}
	return app.Section().Class("snap-ooms").ID("snap-ooms").Body(
		app.H2().Text("Out-of-memory events"),
		app.P().Class("muted").Text("The allocator raised OutOfMemoryError here. If the largest free block inside reserved "+
			"memory is smaller than the request while plenty is free, fragmentation is to blame "+
			"(try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)."),
		foldLong(len(rows), "events", app.Div().Class("table-wrap").TabIndex(0).Role("region").Aria("label", "Out-of-memory events").Body(app.Table().Body(
			app.THead().Body(app.Tr().Body(app.Th().Class("num").Text("entry"), app.Th().Class("num").Text("requested"),
				app.Th().Class("num").Text("device free"), app.Th().Class("num").Text("allocated"), app.Th().Class("num").Text("reserved"),
				app.Th().Class("num").Text("largest free block"), app.Th().Text("biggest site"), app.Th())),
			app.TBody().Body(rows...),
		))),
	)
}

// foldLong shows a table of n rows as it is when it is short, and folded
// into a <details> when it is long: the answer stays near the top.
func foldLong(n int, what string, table app.UI) app.UI {
	if n <= 5 {
		return table
	}
	return app.Details().Class("snap-fold").Body(app.Summary().Text(fmt.Sprintf("Show all %d %s", n, what)), table)
}

func (p *SnapshotPage) renderExplain() app.UI {
	keys := []string{"peak_allocated_bytes", "peak_index", "peak_reserved_bytes", "final_allocated_bytes",
		"final_reserved_bytes", "initial_allocated", "categories_at_peak", "top_sites", "fragmentation"}
	var items []app.UI
	for _, k := range keys {
		if v, ok := p.res.Explain[k]; ok {
			items = append(items, app.Dt().Body(app.Code().Text(k)), app.Dd().Text(v))
		}
	}
	return app.Details().Class("snap-explain").Body(
		app.Summary().Text("How these numbers are computed"),
		app.Dl().Body(items...),
	)
}
