package app

import (
	"fmt"
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/load"
	"oomscope/untrusted"
)

// snapCompare is the state of the comparison with a second file.
type snapCompare struct {
	phase    snapPhase
	name     string
	size     int64
	progress float64
	err      string
	req      int // id of the compare request in flight (0: none)
	dragOver bool
	res      *load.Comparison
}

// busy reports whether the worker is reading the second file.
func (c *snapCompare) busy() bool {
	return c.phase == snapReading || c.phase == snapDecoding || c.phase == snapAnalysing
}

func (p *SnapshotPage) onCompareDragOver(ctx app.Context, e app.Event) {
	e.PreventDefault()
	p.cmp.dragOver = true
}

func (p *SnapshotPage) onCompareDragLeave(ctx app.Context, e app.Event) { p.cmp.dragOver = false }

func (p *SnapshotPage) onCompareDrop(ctx app.Context, e app.Event) {
	defer p.guardCompare("Reading the dropped file")
	e.PreventDefault()
	p.cmp.dragOver = false
	files := e.Get("dataTransfer").Get("files")
	if files.Length() == 0 {
		p.compareFailed("Nothing was dropped: drop a second snapshot.pickle file.")
		return
	}
	p.compareWith(ctx, files.Index(0))
}

func (p *SnapshotPage) onComparePick(ctx app.Context, e app.Event) {
	defer p.guardCompare("Reading the chosen file")
	files := ctx.JSSrc().Get("files")
	if files.Length() == 0 {
		return
	}
	p.compareWith(ctx, files.Index(0))
	ctx.JSSrc().Set("value", "") // choosing the same file again fires change again
}

// guardCompare turns a panic in JavaScript interop into the comparison's
// error message.
func (p *SnapshotPage) guardCompare(what string) {
	if r := recover(); r != nil {
		p.compareFailed(fmt.Sprintf("%s failed: %v", what, r))
	}
}

func (p *SnapshotPage) compareFailed(msg string) {
	p.cmp.phase, p.cmp.err, p.cmp.res = snapFailed, msg, nil
	MarkBody("data-snapshot-compare-error", strconv.Itoa(p.cmp.req))
}

// compareWith hands a second file to the worker, which analyses it and
// compares it with the file shown. The worker keeps the first analysis.
func (p *SnapshotPage) compareWith(ctx app.Context, file app.Value) {
	if p.res == nil || p.worker == nil {
		p.compareFailed("Analyse a first snapshot before comparing.")
		return
	}
	p.nextID++
	p.cmp = snapCompare{phase: snapReading, req: p.nextID,
		name: shown(file.Get("name").String()), size: int64(file.Get("size").Float())}
	MarkBody("data-snapshot-compare", "")
	MarkBody("data-snapshot-compare-error", "")
	if p.cmp.size == 0 {
		p.compareFailed(fmt.Sprintf("%s is empty (0 bytes).", p.cmp.name))
		return
	}
	p.postRequest(load.Request{Type: load.RequestCompare, ID: p.cmp.req, Name: file.Get("name").String()}, file)
}

// onCompareMsg applies a worker message about the comparison and reports
// whether it was one.
func (p *SnapshotPage) onCompareMsg(ctx app.Context, m workerMsg) bool {
	if p.cmp.req == 0 || m.ID != p.cmp.req {
		return false
	}
	switch m.Type {
	case load.ResponseProgress:
		if m.Progress != nil {
			p.cmp.phase, p.cmp.progress = progressOf(m.Progress)
		}
	case load.ResponseSummary:
	case load.ResponseCompare:
		if m.Comparison == nil {
			p.compareFailed("The comparison could not be read.")
			return true
		}
		p.cmp.phase, p.cmp.res = snapDone, m.Comparison
		if p.markdown != "" {
			p.markdown = p.markdownReport()
		}
		req := p.cmp.req
		ctx.Defer(func(app.Context) { MarkBody("data-snapshot-compare", strconv.Itoa(req)) })
	case load.ResponseError:
		p.compareFailed(fmt.Sprintf("Could not compare with %s: %s", p.cmp.name, m.Error))
	default:
		return false
	}
	return true
}

// markdownReport is the report to copy: the file's analysis and, once
// there is one, the comparison with the second file.
func (p *SnapshotPage) markdownReport() string {
	md := analysis.Markdown(p.res.Report)
	if c := p.cmp.res; c != nil {
		md += fmt.Sprintf("\nComparison of %s (before) with %s (after).\n\n", untrusted.CodeSpan(p.fileName), untrusted.CodeSpan(p.cmp.name)) +
			analysis.MarkdownComparison(c.Comparison)
	}
	return md
}

// renderCompare is the second drop zone and, once the worker answered,
// what grew between the two files.
func (p *SnapshotPage) renderCompare() app.UI {
	c := &p.cmp
	cls := "snap-drop snap-cmp-drop"
	if c.dragOver {
		cls += " snap-drop-over"
	}
	var status app.UI = app.Text("")
	switch {
	case c.busy():
		label := map[snapPhase]string{snapReading: "Reading", snapDecoding: "Decoding", snapAnalysing: "Analysing"}[c.phase]
		status = app.Div().ID("snap-compare-progress").Class("snap-progress").Aria("live", "polite").Body(
			app.P().Text(fmt.Sprintf("%s %s (%s)… %.0f %%", label, c.name, bytesize.Format(c.size, p.unit), 100*c.progress)),
			app.Progress().Max(1).Attr("value", fmt.Sprintf("%.3f", c.progress)).Aria("label", label),
		)
	case c.phase == snapFailed:
		status = app.P().ID("snap-compare-error").Class("error").Attr("role", "alert").Text(c.err)
	}
	return app.Section().ID("snap-compare").Class("snap-compare").Body(
		app.H2().Text("Compare with another snapshot"),
		app.Div().ID("snap-compare-drop").Class(cls).
			OnDragOver(p.onCompareDragOver).OnDragEnter(p.onCompareDragOver).OnDragLeave(p.onCompareDragLeave).OnDrop(p.onCompareDrop).
			Body(
				app.P().Body(
					app.Text("Drop a second snapshot here to see what grew from "),
					app.Strong().Text(p.fileName),
					app.Text(" (before) to it (after), or "),
					app.Label().For("snap-compare-file").Class("button").Text("choose the second file"),
					app.Input().Type("file").ID("snap-compare-file").Class("snap-file").Accept(".pickle,.pkl,.gz,application/octet-stream").OnChange(p.onComparePick),
				),
			),
		status,
		app.If(c.res != nil, func() app.UI { return p.renderComparison(c.res) }),
	)
}

// renderComparison shows the headline, category and site changes of each
// pair of devices.
func (p *SnapshotPage) renderComparison(c *load.Comparison) app.UI {
	if len(c.Devices) == 0 {
		return app.P().ID("snap-cmp-none").Class("muted").Text("The two snapshots have no device in common: " + c.Rule + ".")
	}
	var body []app.UI
	for i := range c.Devices {
		body = append(body, p.renderDeviceComparison(i, &c.Devices[i], len(c.Devices) > 1))
	}
	body = append(body, app.P().Class("formula").Text(c.Rule+"; change = after − before"))
	return app.Div().ID("snap-cmp").Class("snap-cmp").DataSet("max-sites", c.MaxSites).Body(body...)
}

// deltaCells are the before, after and change cells of a Delta, with the
// exact bytes on the cells and in their titles.
func (p *SnapshotPage) deltaCells(d analysis.Delta) []app.UI {
	cls := "num snap-delta"
	switch {
	case d.Delta > 0:
		cls += " snap-grew"
	case d.Delta < 0:
		cls += " snap-shrank"
	}
	return []app.UI{
		app.Td().Class("num snap-cmp-b").Title("%s B", bytesize.Commas(d.Before)).Text(bytesize.Format(d.Before, p.unit)),
		app.Td().Class("num snap-cmp-a").Title("%s B", bytesize.Commas(d.After)).Text(bytesize.Format(d.After, p.unit)),
		app.Td().Class(cls).Title("%s B", bytesize.Commas(d.Delta)).Text(bytesize.Signed(d.Delta, p.unit)),
	}
}

func deltaHead(first string) app.UI {
	return app.THead().Body(app.Tr().Body(
		app.Th().Text(first), app.Th().Class("num snap-cmp-b").Text("before"),
		app.Th().Class("num snap-cmp-a").Text("after"), app.Th().Class("num").Text("change"),
	))
}

func (p *SnapshotPage) renderDeviceComparison(i int, d *analysis.DeviceComparison, several bool) app.UI {
	row := func(key, label string, v analysis.Delta) app.UI {
		return app.Tr().DataSet("key", key).DataSet("before", v.Before).DataSet("after", v.After).DataSet("delta", v.Delta).Body(
			append([]app.UI{app.Th().Scope("row").Text(label)}, p.deltaCells(v)...)...)
	}
	head := []app.UI{
		row("peak_allocated", "Peak allocated", d.PeakAllocated),
		row("peak_reserved", "Peak reserved", d.PeakReserved),
		row("final_allocated", "Allocated at the end", d.FinalAllocated),
		row("final_reserved", "Reserved at the end", d.FinalReserved),
	}
	var cats []app.UI
	for _, cd := range d.Categories {
		if cd.Bytes.Before == 0 && cd.Bytes.After == 0 {
			continue
		}
		cats = append(cats, app.Tr().DataSet("category", cd.Category).DataSet("delta", cd.Bytes.Delta).Body(
			append([]app.UI{app.Th().Scope("row").Body(
				app.Span().Class("snap-swatch "+catClass(cd.Category)), app.Text(" "+cd.Category))}, p.deltaCells(cd.Bytes)...)...))
	}
	var sites []app.UI
	for _, s := range d.Sites {
		cells := append([]app.UI{app.Td().Class("snap-site").Text(shown(s.Site))}, p.deltaCells(s.Bytes)...)
		cells = append(cells, app.Td().Class("num snap-wide").Text(fmt.Sprintf("%d → %d", s.CountBefore, s.CountAfter)))
		sites = append(sites, app.Tr().DataSet("delta", s.Bytes.Delta).Body(cells...))
	}
	title := fmt.Sprintf("%s → %s", p.fileName, p.cmp.name)
	if several {
		title += fmt.Sprintf(" (cuda:%d → cuda:%d)", d.DeviceBefore, d.DeviceAfter)
	}
	return app.Div().Class("snap-cmp-device").ID(fmt.Sprintf("snap-cmp-%d", i)).Body(
		app.H3().Class("snap-cmp-title").Text(title),
		app.P().Class("muted snap-cmp-narrow").Text("A narrow screen shows fewer columns: turn the phone sideways to see before and after."),
		app.Div().Class("table-wrap").Body(app.Table().Class("snap-cmp-head").Body(
			app.Caption().Text("Headline numbers"),
			deltaHead(""),
			app.TBody().Body(head...),
		)),
		app.Div().Class("table-wrap").Body(app.Table().Class("snap-cmp-cats").Body(
			app.Caption().Text("By category, at each snapshot's peak"),
			deltaHead("category"),
			app.TBody().Body(cats...),
		)),
		app.If(len(sites) == 0, func() app.UI {
			return app.P().Class("muted").Text("No allocation site changed at the peak.")
		}),
		app.If(len(sites) > 0, func() app.UI {
			return app.Div().Class("table-wrap").Body(app.Table().Class("snap-cmp-sites").Body(
				app.Caption().Text("By allocation site, at each snapshot's peak: biggest growth first, then the biggest shrinks"),
				app.THead().Body(app.Tr().Body(
					app.Th().Text("site"), app.Th().Class("num snap-cmp-b").Text("before"), app.Th().Class("num snap-cmp-a").Text("after"),
					app.Th().Class("num").Text("change"), app.Th().Class("num snap-wide").Text("count"),
				)),
				app.TBody().Body(sites...),
			))
		}),
	)
}
