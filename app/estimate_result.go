package app

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/estimator"
)

// bucketLabels are the display names of the buckets.
var bucketLabels = map[string]string{
	estimator.BucketWeights: "Weights", estimator.BucketGradients: "Gradients", estimator.BucketOptimizer: "Optimizer states",
	estimator.BucketActivations: "Activations", estimator.BucketLogits: "Logits and loss", estimator.BucketKVCache: "KV cache",
	estimator.BucketWorkspace: "cuBLAS workspaces", estimator.BucketAllocator: "Allocator (reserved − allocated)",
	estimator.BucketNonTorch: "Outside PyTorch (context, libraries, NCCL)",
}

// bucketColor is the CSS variable of a bucket (main.css).
func bucketColor(name string) string {
	switch name {
	case estimator.BucketKVCache:
		return "var(--c-kv)"
	case estimator.BucketWorkspace, estimator.BucketAllocator, estimator.BucketNonTorch:
		return "var(--c-overhead)"
	}
	return "var(--c-" + name + ")"
}

// readoutLabels name the three readouts as a user's logs do.
var readoutLabels = map[string]string{
	"allocated": "Allocated (PyTorch peak)",
	"reserved":  "Reserved (caching allocator)",
	"device":    "Device (nvidia-smi)",
}

// renderAnswer is the answer first: the verdict and the top fix, kept in
// view on a phone (sticky) while the form scrolls. Only the verdict is
// announced to screen readers when it changes.
func (p *EstimatePage) renderAnswer() app.UI {
	rep := p.rep
	if rep == nil {
		return app.Section().ID("est-answer").Class("estimate-answer-box")
	}
	head, cls := "Fits", "verdict-ok"
	var detail string
	switch {
	case rep.Serving != nil && rep.Fits:
		head, detail = "Starts", rep.Verdict
	case rep.Serving != nil:
		head, cls, detail = "Does not start", "verdict-bad", rep.Verdict
	default:
		gpus := ""
		if rep.Request.Mode == estimator.ModeTrain && rep.Request.GPUs > 1 {
			gpus = fmt.Sprintf(" per GPU (%d GPUs)", rep.Request.GPUs)
		}
		if !rep.Fits {
			head, cls = "Does not fit", "verdict-bad"
		}
		detail = fmt.Sprintf("%s needed%s, %s usable on %s", bytesize.Format(rep.TotalBytes, p.unit), gpus, bytesize.Format(rep.UsableBytes, p.unit), rep.GPU.Name)
	}
	stale := ""
	if p.err != "" {
		stale = " estimate-stale"
	}
	var fix app.UI
	if len(rep.Fixes) > 0 {
		f := rep.Fixes[0]
		fix = app.P().ID("est-top-fix").Class("estimate-top-fix").Body(
			app.Text("Top fix: "),
			app.Strong().Text(f.Name),
			app.Text(fmt.Sprintf(" (%s) brings it %s closer · ", f.Change, bytesize.Format(f.SavesBytes, p.unit))),
			app.A().Href(p.href(f.Request)).Text("apply"),
		)
	}
	return app.Section().ID("est-answer").Class("estimate-answer-box", cls+stale).Aria("label", "Answer").Body(
		app.P().ID("est-verdict").Class("estimate-verdict").DataSet("fits", rep.Fits).Aria("live", "polite").Body(
			app.Strong().Text(head),
			app.Text(": "+detail),
		),
		fix,
		app.Div().Class("formula").Text("usable = "+rep.UsableFormula),
	)
}

// renderResults shows the readouts, the serving engine's numbers, the bar,
// the buckets, the answers, the feasible region, the error band and the
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
	return app.Section().ID("est-results").Class(cls).Aria("label", "Details").Body(
		app.If(p.err != "", func() app.UI {
			return app.P().ID("est-error").Class("error").Role("alert").Text(p.err)
		}),
		unitToggle(p.unit, p.setUnit),
		p.renderReadouts(),
		p.renderServing(),
		p.renderBar(),
		p.renderTable(),
		p.renderHost(),
		p.renderAnswers(),
		p.renderFeasible(),
		p.renderBand(),
		p.renderFixes(),
	)
}

// renderReadouts is the three numbers a job prints, each with its formula
// and the log line to compare it with.
func (p *EstimatePage) renderReadouts() app.UI {
	ro := p.rep.Readouts
	var rows []app.UI
	for _, name := range estimator.ReadoutNames {
		rows = append(rows, app.Tr().DataSet("readout", name).Body(
			app.Th().Scope("row").Text(readoutLabels[name]),
			app.Td().Class("num").DataSet("bytes", ro.Get(name)).Text(bytesize.Format(ro.Get(name), p.unit)),
			app.Td().Body(
				app.Div().Text("Compare with "+ro.Compare[name]+"."),
				app.Div().Class("formula").Text(name+" = "+ro.Formulas[name]),
			),
		))
	}
	return app.Div().Class("table-wrap").Body(
		app.Table().ID("est-readouts").Class("estimate-table estimate-readouts").Body(
			app.Caption().Text("The three numbers your job prints, per GPU"),
			app.THead().Body(app.Tr().Body(
				app.Th().Scope("col").Text("Readout"),
				app.Th().Scope("col").Class("num").Text("Size"),
				app.Th().Scope("col").Text("Compare with, and how it is built"),
			)),
			app.TBody().Body(rows...),
		),
	)
}

// servingRows are the engine's numbers in the order its log prints them.
var servingRows = []struct{ key, label string }{
	{"budget_bytes", "Budget"},
	{"weights_bytes", "Weights per GPU"},
	{"activation_peak_bytes", "Profile run's activation peak"},
	{"non_torch_bytes", "Non-torch memory"},
	{"kv_cache_bytes", "KV cache per GPU"},
	{"kv_bytes_per_token", "KV cache per token, per GPU"},
	{"kv_blocks", "KV blocks"},
	{"kv_cache_tokens", "KV cache tokens"},
	{"max_concurrency", "Max concurrency"},
}

// renderServing is what the serving engine will print at start-up.
func (p *EstimatePage) renderServing() app.UI {
	s := p.rep.Serving
	if s == nil {
		return app.Div()
	}
	value := func(key string) (string, int64) {
		switch key {
		case "budget_bytes":
			return bytesize.Format(s.BudgetBytes, p.unit), s.BudgetBytes
		case "weights_bytes":
			return bytesize.Format(s.WeightsBytes, p.unit), s.WeightsBytes
		case "activation_peak_bytes":
			return bytesize.Format(s.ActivationPeakBytes, p.unit), s.ActivationPeakBytes
		case "non_torch_bytes":
			return bytesize.Format(s.NonTorchBytes, p.unit), s.NonTorchBytes
		case "kv_cache_bytes":
			return bytesize.Format(s.KVCacheBytes, p.unit), s.KVCacheBytes
		case "kv_bytes_per_token":
			return bytesize.Commas(s.KVBytesPerToken) + " B", s.KVBytesPerToken
		case "kv_blocks":
			return bytesize.Commas(s.KVBlocks), s.KVBlocks
		case "kv_cache_tokens":
			return bytesize.Commas(s.KVCacheTokens), s.KVCacheTokens
		}
		return fmt.Sprintf("%.2f× at %s tokens", s.MaxConcurrency, bytesize.Commas(int64(s.MaxModelLen))), int64(s.MaxConcurrency * 100)
	}
	var rows []app.UI
	for _, r := range servingRows {
		text, n := value(r.key)
		rows = append(rows, app.Tr().DataSet("serving", r.key).Body(
			app.Th().Scope("row").Text(r.label),
			app.Td().Class("num").DataSet("value", n).Text(text),
			app.Td().Body(app.Div().Class("formula").Text(s.Formulas[r.key])),
		))
	}
	engine := "vLLM"
	if s.Engine == estimator.EngineSGLang {
		engine = "SGLang"
	}
	return app.Section().ID("est-serving").Class("estimate-serving").Aria("label", "Serving").Body(
		app.H2().Text(engine+" at start-up"),
		app.P().Class("muted").Text(fmt.Sprintf("Per GPU; token counts are engine-wide (each tensor-parallel rank holds its share of every token). Limits: max_model_len %s, max_num_seqs %d, max_num_batched_tokens %s, block size %d.",
			bytesize.Commas(int64(s.MaxModelLen)), s.MaxNumSeqs, bytesize.Commas(int64(s.MaxBatchedTokens)), s.BlockSize)),
		app.If(s.Error != "", func() app.UI {
			return app.P().ID("est-engine-error").Class("error").Text("The engine stops: " + s.Error)
		}),
		app.Div().Class("table-wrap").Body(app.Table().ID("est-serving-table").Class("estimate-table").Body(
			app.THead().Body(app.Tr().Body(
				app.Th().Scope("col").Text("Number"), app.Th().Scope("col").Class("num").Text("Value"), app.Th().Scope("col").Text("Formula"),
			)),
			app.TBody().Body(rows...),
		)),
		app.Details().ID("est-serving-log").Body(
			app.Summary().Text("The start-up log, as the engine would print it"),
			app.Pre().Text(strings.Join(s.Log, "\n")),
		),
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
				app.Div().Class("estimate-mark estimate-mark-usable").Style("left", pct(rep.UsableBytes)).Title("usable"),
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

// renderTable lists every bucket with its size and formula, collapsed
// under a summary by default.
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
		app.Td().Body(app.Div().Class("formula").Text("sum of the buckets: the device readout, per GPU")),
	))
	return app.Details().ID("est-buckets").Class("estimate-buckets").Body(
		app.Summary().Text(fmt.Sprintf("Where the memory goes: %d buckets with their formulas", len(rep.Details))),
		app.Div().Class("table-wrap").Body(
			app.Table().ID("est-table").Class("estimate-table").Body(
				app.Caption().Text(fmt.Sprintf("%s, %s params (%s trainable)", rep.Model.Name, bytesize.Commas(rep.Params), bytesize.Commas(rep.TrainableParams))),
				app.THead().Body(app.Tr().Body(
					app.Th().Scope("col").Text("Bucket"),
					app.Th().Scope("col").Class("num").Text("Size"),
					app.Th().Scope("col").Class("num").Text("Share"),
					app.Th().Scope("col").Text("Formula"),
				)),
				app.TBody().Body(rows...),
			),
		),
	)
}

// renderHost is the host RAM that CPU offload needs.
func (p *EstimatePage) renderHost() app.UI {
	rep := p.rep
	if rep.HostBytes == 0 {
		return app.Div()
	}
	return app.Div().ID("est-host").Class("estimate-host").Body(
		app.Strong().Text("Host RAM: "),
		app.Span().DataSet("bytes", rep.HostBytes).Text(bytesize.Format(rep.HostBytes, p.unit)),
		app.Text(" on one machine, for the offloaded model states. "),
		app.Div().Class("formula").Text("host = "+rep.HostFormula),
	)
}

// renderAnswers gives the smallest GPU, the GPUs needed, and the largest
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
	switch r.Mode {
	case estimator.ModeTrain:
		if n := rep.GPUsNeeded; n == 1 {
			add("est-gpus-needed", "GPUs needed under ZeRO-3", app.Text("1: it fits on one "+rep.GPU.Name))
		} else if n > 1 {
			next := r
			next.GPUs, next.Shard = n, estimator.ShardZero3
			add("est-gpus-needed", "GPUs needed under ZeRO-3", app.A().Href(p.href(next)).Text(fmt.Sprintf("%d × %s", n, rep.GPU.Name)))
		} else {
			add("est-gpus-needed", "GPUs needed under ZeRO-3", app.Text("no number is enough: activations and logits are not sharded"))
		}
	case estimator.ModeServe:
		if n := rep.GPUsNeeded; n > 0 {
			next := r
			next.TP = n
			add("est-gpus-needed", "Tensor-parallel size needed", app.A().Href(p.href(next)).Text(fmt.Sprintf("tp %d × %s", n, rep.GPU.Name)))
		} else {
			add("est-gpus-needed", "Tensor-parallel size needed", app.Text("more than 8 GPUs"))
		}
	}
	if r.Mode == estimator.ModeServe {
		add("est-max-batch", "Requests of max_model_len at once", app.Text(strconv.Itoa(rep.MaxBatch)))
		add("est-max-seq", "Longest max_model_len that starts", app.Text(fmt.Sprintf("%d tokens", rep.MaxSeq)))
		return app.Dl().Class("estimate-answers").Body(items...)
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
	var margin app.UI
	if c := rep.CapacityMargin; c.Rows > 0 {
		margin = app.Div().Class("muted estimate-margin").Text(fmt.Sprintf("Erring low: on %d measured longest-context runs the maximum shown here was %+.0f %% … %+.0f %% of the measured one (never more than 5 %% above).", c.Rows, 100*c.Low, 100*c.High))
	}
	add("est-max-seq", "Longest sequence that fits", app.Span().Body(app.Text(seq), margin))
	return app.Dl().Class("estimate-answers").Body(items...)
}

// renderBand is the error band of the nearest measured setups, with the
// list one click away.
func (p *EstimatePage) renderBand() app.UI {
	b := p.rep.ErrorBand
	if b == nil {
		return app.P().ID("est-band").Class("muted").Text("No measured setup of this kind yet: the estimate has no error band.")
	}
	var items []app.UI
	for _, s := range b.Setups {
		items = append(items, app.Li().Body(
			app.Span().Class("estimate-term-size").Text(fmt.Sprintf("%+.1f %%", 100*s.Error)),
			app.Text(" "+s.What+" ("+s.ID+"; "+s.Source+")"),
		))
	}
	return app.Details().ID("est-band").Class("estimate-band").Body(
		app.Summary().Text(fmt.Sprintf("Measured setups like this one were within %+.1f %% … %+.1f %%", 100*b.Low, 100*b.High)),
		app.P().Class("muted").Text(b.Words+"."),
		app.Ul().Class("estimate-terms").Body(items...),
	)
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
				app.Text(fmt.Sprintf("saves %s → %s · ", bytesize.Format(f.SavesBytes, p.unit), bytesize.Format(f.TotalBytes, p.unit))),
				app.A().Href(p.href(f.Request)).Aria("label", "Apply "+f.Name+" and the fixes before it").Text("apply"),
			),
			fixCode(f.FixID, "est-fix-"+f.FixID),
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
