package app

import (
	"oomscope/bytesize"

	"fmt"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/estimator"
)

// bucketLabels are the display names of the buckets.
var bucketLabels = map[string]string{
	estimator.BucketWeights: "Weights", estimator.BucketGradients: "Gradients", estimator.BucketOptimizer: "Optimizer states",
	estimator.BucketActivations: "Activations", estimator.BucketLogits: "Logits and loss", estimator.BucketKVCache: "KV cache",
	estimator.BucketOverhead: "Overhead",
}

// bucketColor is the CSS variable of a bucket (main.css).
func bucketColor(name string) string {
	if name == estimator.BucketKVCache {
		return "var(--c-kv)"
	}
	return "var(--c-" + name + ")"
}

// renderResults shows the verdict, the bar, the table, the answers and the
// fix ladder for the current report.
func (p *EstimatePage) renderResults() app.UI {
	rep := p.rep
	if rep == nil {
		return app.Section().Class("estimate-results")
	}
	cls := "estimate-results"
	if p.err != "" {
		cls += " estimate-stale"
	}
	return app.Section().ID("est-results").Class(cls).Aria("label", "Results").Aria("live", "polite").Body(
		app.If(p.err != "", func() app.UI {
			return app.P().ID("est-error").Class("error").Role("alert").Text(p.err)
		}),
		unitToggle(p.unit, p.setUnit),
		p.renderVerdict(),
		p.renderBar(),
		p.renderTable(),
		p.renderAnswers(),
		p.renderFixes(),
	)
}

func (p *EstimatePage) renderVerdict() app.UI {
	rep := p.rep
	g := rep.GPU
	gpus := ""
	if rep.Request.Mode == estimator.ModeTrain && rep.Request.GPUs > 1 {
		gpus = fmt.Sprintf(" (per GPU, %d GPUs)", rep.Request.GPUs)
	}
	head, cls := "Fits", "verdict-ok"
	if !rep.Fits {
		head, cls = "Does not fit", "verdict-bad"
	}
	return app.Div().ID("est-verdict").Class("estimate-verdict", cls).DataSet("fits", rep.Fits).Body(
		app.Strong().Text(head),
		app.Text(fmt.Sprintf(": %s needed%s, %s usable on %s", bytesize.Format(rep.TotalBytes, p.unit), gpus, bytesize.Format(rep.UsableBytes, p.unit), g.Name)),
		app.Div().Class("formula").Text("usable = "+rep.UsableFormula),
	)
}

// renderBar is a stacked bar of the buckets against the GPU's capacity.
func (p *EstimatePage) renderBar() app.UI {
	rep := p.rep
	scale := max(rep.TotalBytes, rep.GPU.CapacityBytes)
	if scale <= 0 {
		scale = 1
	}
	pct := func(n int64) string { return strconv.FormatFloat(float64(n)*100/float64(scale), 'f', 3, 64) + "%" }
	var segs, legend []app.UI
	var described []string
	for _, b := range rep.Details {
		if b.Bytes <= 0 {
			continue
		}
		label := bucketLabels[b.Name]
		segs = append(segs, app.Div().Class("estimate-seg").Style("width", pct(b.Bytes)).Style("background", bucketColor(b.Name)).
			Title("%s: %s", label, bytesize.Format(b.Bytes, p.unit)))
		legend = append(legend, app.Li().Body(
			app.Span().Class("estimate-swatch").Style("background", bucketColor(b.Name)),
			app.Text(fmt.Sprintf("%s %s", label, bytesize.Format(b.Bytes, p.unit))),
		))
		described = append(described, label+" "+bytesize.Format(b.Bytes, p.unit))
	}
	aria := fmt.Sprintf("%s of %s capacity: %s", bytesize.Format(rep.TotalBytes, p.unit), bytesize.Format(rep.GPU.CapacityBytes, p.unit), strings.Join(described, ", "))
	return app.Figure().Class("estimate-figure").Body(
		app.Div().ID("est-bar").Class("estimate-bar").Role("img").Aria("label", aria).Body(
			append(segs,
				app.Div().Class("estimate-mark estimate-mark-usable").Style("left", pct(rep.UsableBytes)).Title("usable after headroom"),
				app.Div().Class("estimate-mark estimate-mark-cap").Style("left", pct(rep.GPU.CapacityBytes)).Title("capacity"),
			)...,
		),
		app.Div().Class("estimate-scale muted").Body(
			app.Span().Text("0"),
			app.Span().Text(fmt.Sprintf("usable %s · capacity %s", bytesize.Format(rep.UsableBytes, p.unit), bytesize.Format(rep.GPU.CapacityBytes, p.unit))),
		),
		app.Ul().Class("estimate-legend").Body(legend...),
	)
}

// renderTable lists every bucket with its size and formula.
func (p *EstimatePage) renderTable() app.UI {
	rep := p.rep
	var rows []app.UI
	for _, b := range rep.Details {
		var terms app.UI
		if len(b.Terms) > 1 {
			var items []app.UI
			for _, t := range b.Terms {
				items = append(items, app.Li().Body(
					app.Span().Class("estimate-term-size").Text(bytesize.Format(t.Bytes, p.unit)),
					app.Text(" "+t.Name+": "+t.Formula),
				))
			}
			terms = app.Details().Body(
				app.Summary().Text(fmt.Sprintf("%d terms", len(b.Terms))),
				app.Ul().Class("estimate-terms").Body(items...),
			)
		}
		share := ""
		if rep.TotalBytes > 0 {
			share = fmt.Sprintf("%.1f %%", float64(b.Bytes)*100/float64(rep.TotalBytes))
		}
		rows = append(rows, app.Tr().DataSet("bucket", b.Name).Body(
			app.Th().Scope("row").Body(
				app.Span().Class("estimate-swatch").Style("background", bucketColor(b.Name)),
				app.Text(bucketLabels[b.Name]),
			),
			app.Td().Class("num").DataSet("bytes", b.Bytes).Text(bytesize.Format(b.Bytes, p.unit)),
			app.Td().Class("num").Text(share),
			app.Td().Body(app.Div().Class("formula").Text(b.Formula), terms),
		))
	}
	rows = append(rows, app.Tr().Class("estimate-total").DataSet("bucket", "total").Body(
		app.Th().Scope("row").Text("Total"),
		app.Td().Class("num").DataSet("bytes", rep.TotalBytes).Text(bytesize.Format(rep.TotalBytes, p.unit)),
		app.Td().Class("num").Text("100 %"),
		app.Td().Body(app.Div().Class("formula").Text("sum of the buckets: the estimated peak per GPU")),
	))
	return app.Div().Class("table-wrap").Body(
		app.Table().ID("est-table").Class("estimate-table").Body(
			app.Caption().Text(fmt.Sprintf("Where the memory goes: %s, %s params (%s trainable)", rep.Model.Name, bytesize.Commas(rep.Params), bytesize.Commas(rep.TrainableParams))),
			app.THead().Body(app.Tr().Body(
				app.Th().Scope("col").Text("Bucket"),
				app.Th().Scope("col").Class("num").Text("Size"),
				app.Th().Scope("col").Class("num").Text("Share"),
				app.Th().Scope("col").Text("Formula"),
			)),
			app.TBody().Body(rows...),
		),
	)
}

// renderAnswers gives the smallest GPU, GPUs under ZeRO-3, and the largest
// batch and sequence.
func (p *EstimatePage) renderAnswers() app.UI {
	rep := p.rep
	r := rep.Request
	var items []app.UI
	add := func(id, term string, def app.UI) {
		items = append(items, app.Div().ID(id).Class("estimate-answer").Body(app.Dt().Text(term), app.Dd().Body(def)))
	}
	if rep.SmallestGPU != "" {
		g, _ := estimator.LookupGPU(rep.SmallestGPU)
		next := r
		next.GPU = g.ID
		add("est-smallest", "Smallest GPU that fits", app.Span().Body(
			app.A().Href(p.href(next)).Text(g.Name),
			app.Text(" ("+bytesize.Format(g.CapacityBytes, p.unit)+")"),
		))
	} else {
		add("est-smallest", "Smallest GPU that fits", app.Text("none in the catalog: see the fixes below"))
	}
	if r.Mode == estimator.ModeTrain {
		if n := rep.GPUsNeeded; n == 1 {
			add("est-gpus", "GPUs needed under ZeRO-3", app.Text("1: it fits on one "+rep.GPU.Name))
		} else if n > 1 {
			next := r
			next.GPUs, next.Shard = n, estimator.ShardZero3
			add("est-gpus", "GPUs needed under ZeRO-3", app.A().Href(p.href(next)).Text(fmt.Sprintf("%d × %s", n, rep.GPU.Name)))
		} else {
			add("est-gpus", "GPUs needed under ZeRO-3", app.Text("no number is enough: activations and logits are not sharded"))
		}
	}
	batch := "none: batch 1 does not fit"
	if rep.MaxBatch > 0 {
		batch = strconv.Itoa(rep.MaxBatch)
	}
	add("est-max-batch", "Largest micro-batch that fits", app.Text(batch))
	seq := fmt.Sprintf("%d tokens at batch %d", rep.MaxSeq, r.Batch)
	if rep.MaxSeq == 0 {
		seq = fmt.Sprintf("none at batch %d", r.Batch)
	}
	if rep.Model.MaxPositions > 0 {
		seq += fmt.Sprintf(" (the model's context is %d)", rep.Model.MaxPositions)
	}
	add("est-max-seq", "Longest sequence that fits", app.Text(seq))
	return app.Dl().Class("estimate-answers").Body(items...)
}

// renderFixes is the fix ladder, cheapest first, each on top of the last.
func (p *EstimatePage) renderFixes() app.UI {
	rep := p.rep
	if len(rep.Fixes) == 0 {
		return app.Div()
	}
	var items []app.UI
	for _, f := range rep.Fixes {
		badge, cls := "still too big", "estimate-badge verdict-bad"
		if f.Fits {
			badge, cls = "fits", "estimate-badge verdict-ok"
		}
		items = append(items, app.Li().DataSet("fix", f.Name).Body(
			app.Div().Class("estimate-fix-head").Body(
				app.Strong().Text(f.Name),
				app.Span().Class(cls).Text(badge),
			),
			app.Div().Class("formula").Text(f.Change),
			app.Div().Body(
				app.Text(fmt.Sprintf("saves %s → total %s · ", bytesize.Format(f.SavesBytes, p.unit), bytesize.Format(f.TotalBytes, p.unit))),
				app.A().Href(p.href(f.Request)).Aria("label", "Apply "+f.Name+" and the fixes before it").Text("apply"),
			),
		))
	}
	var enough app.UI = app.Text("")
	if last := rep.Fixes[len(rep.Fixes)-1]; !last.Fits {
		enough = app.P().ID("est-no-fix").Class("error").Text("No fix in the ladder makes it fit this GPU: pick a larger GPU, or shard over more GPUs (set GPUs and ZeRO-3).")
	}
	return app.Section().Class("estimate-fixes").Aria("label", "Fixes").Body(
		app.H2().Text("Fixes, cheapest first"),
		app.P().Class("muted").Text("Each fix applies on top of the ones above it; the totals are cumulative, and the ladder stops at the first that fits."),
		app.Ol().ID("est-fixes").Body(items...),
		enough,
	)
}
