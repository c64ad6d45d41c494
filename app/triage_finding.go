package app

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/estimator"
	"oomscope/estimator/triage"
)

// causeTitles are the headlines of the causes.
var causeTitles = map[triage.Cause]string{
	triage.CauseFragmentation: "Fragmentation: the cache has the bytes, but not in one piece",
	triage.CauseCapacity:      "Capacity: the job does not fit this card as configured",
	triage.CauseOtherProcess:  "Another process holds the memory",
	triage.CauseNonPyTorch:    "Memory held outside PyTorch in this process",
	triage.CauseLastStraw:     "Last straw: a tiny request on a full card",
	triage.CauseCPURAM:        "Host RAM ran out (CPU allocator)",
	triage.CauseKVCacheBudget: "vLLM's KV cache budget is too small",
	triage.CauseBogusSize:     "A size bug, not memory pressure",
	triage.CauseAllowedLimit:  "A memory-fraction cap binds, not the card",
	triage.CausePreallocation: "The framework grabbed the GPU up front",
	triage.CauseUnknown:       "The numbers do not explain it",
}

// renderFinding shows one message, the answer first: the cause and the
// fixes, then the card, the numbers (folded away) and the links. Only the
// cause's headline is a live region: screen readers hear the new answer
// after a paste, not the whole page.
func (p *TriagePage) renderFinding(f *triage.Finding) app.UI {
	head := string(f.Kind)
	if f.Variant != "" {
		head += " · " + f.Variant
	}
	if f.PyTorchVersion != "" {
		head += " · PyTorch " + f.PyTorchVersion
	}
	title := causeTitles[f.Cause]
	if title == "" {
		title = string(f.Cause)
	}
	return app.Div().Class("triage-finding").Body(
		app.Div().ID("triage-answer").Class("triage-answer").Body(
			app.P().ID("triage-kind").Class("triage-kind muted").Text(shown(head)),
			app.If(f.DuplicateOf != nil, func() app.UI {
				return app.P().Class("muted").Text(fmt.Sprintf("Same text as message #%d.", *f.DuplicateOf+1))
			}),
			app.Div().ID("triage-cause").Class("card triage-cause triage-cause-"+string(f.Cause)).Body(
				app.H2().Aria("live", "polite").Aria("atomic", "true").Body(
					app.Span().ID("triage-cause-name").Class("triage-badge").Text(string(f.Cause)),
					app.Text(" "+title),
				),
				app.P().ID("triage-why").Class("triage-why").Text(shown(f.Why)),
				app.P().Class("triage-rule").Body(app.Strong().Text("Rule: "), app.Text(f.Rule)),
			),
			p.renderFixes(f),
		),
		p.renderBar(f),
		p.renderNumbers(f),
		p.renderLinks(f),
	)
}

// renderNumbers is the table of every number read, with its phrase.
func (p *TriagePage) renderNumbers(f *triage.Finding) app.UI {
	var rows []app.UI
	for _, fd := range f.Fields {
		val, exact := fd.Printed, ""
		if fd.Bytes != nil {
			val = bytesize.Format(fd.Bytes.Int64(), p.unit)
			exact = bigCommas(fd.Bytes.String()) + " B"
		}
		rows = append(rows, app.Tr().DataSet("key", fd.Key).Body(
			app.Td().Text(fd.Label),
			app.Td().Class("num").Body(app.Strong().Text(val), app.Br(), app.Span().Class("formula").Text(exact)),
			app.Td().Body(app.Code().Class("triage-phrase").Text(oneLine(fd.Phrase)), app.Br(), app.Span().Class("formula").Text(fd.Rule)),
		))
	}
	for _, d := range f.Derived {
		rows = append(rows, app.Tr().Class("triage-derived").DataSet("key", d.Name).Body(
			app.Td().Text(strings.ReplaceAll(d.Name, "_", " ")+" (derived)"),
			app.Td().Class("num").Body(app.Strong().Text(bytesize.Format(d.Bytes, p.unit)), app.Br(), app.Span().Class("formula").Text(bytesize.Commas(d.Bytes)+" B")),
			app.Td().Body(app.Span().Class("formula").Text(d.Formula)),
		))
	}
	if len(rows) == 0 {
		return app.P().ID("triage-numbers").Class("muted").Text("This message prints no numbers.")
	}
	// Folded away: the cause above already quotes the numbers that
	// decided it; the table is for checking every one.
	return app.Details().ID("triage-numbers-box").Class("triage-numbers-box").Body(
		app.Summary().Body(app.H2().Text(fmt.Sprintf("The numbers: %d read from the message", len(rows)))),
		app.Div().Class("table-wrap").TabIndex(0).Role("region").Aria("label", "The numbers").Body(
			app.Table().ID("triage-numbers").Class("triage-numbers").Body(
				app.THead().Body(app.Tr().Body(
					app.Th().Text("What"), app.Th().Class("num").Text("Value"), app.Th().Text("From the message"),
				)),
				app.TBody().Body(rows...),
			),
		),
	)
}

// bigCommas puts thousands separators in a decimal integer of any size
// (big.Int's String), as bytesize.Commas does for an int64.
func bigCommas(s string) string {
	sign, digits := "", s
	if strings.HasPrefix(s, "-") {
		sign, digits = "-", s[1:]
	}
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String()
}

// renderFixes lists the fixes with copy buttons.
func (p *TriagePage) renderFixes(f *triage.Finding) app.UI {
	var items []app.UI
	for i, fx := range f.Fixes {
		i, fx := i, fx
		key := fmt.Sprintf("%d/%s", p.sel, fx.ID)
		items = append(items, app.Li().Class("card triage-fix").DataSet("fix", fx.ID).Body(
			app.Div().Class("triage-fix-head").Body(
				app.H3().Text(fx.Title),
				app.Span().Class("triage-reason").Text(fx.Reason),
			),
			app.P().Text(fx.Why),
			app.Pre().TabIndex(0).Body(app.Code().ID(fmt.Sprintf("triage-code-%d", i)).Text(fx.Code)),
			app.Div().Class("triage-copy-row").Body(
				app.Button().ID(fmt.Sprintf("triage-copy-%d", i)).Class("secondary triage-copy").Text("Copy").
					Aria("label", "Copy: "+fx.Title).
					OnClick(func(ctx app.Context, e app.Event) { p.copy(ctx, key, fx.Code) }),
				app.Span().ID(fmt.Sprintf("triage-copied-%d", i)).Class("triage-copied").Aria("live", "polite").Text(p.copied[key]),
				app.A().ID(fmt.Sprintf("triage-guide-%d", i)).Class("fix-guide").Href(Href(fx.Guide)).Text("Why and when: the guide"),
			),
		))
	}
	return app.Section().Class("triage-fixes-box").Body(
		app.H2().Text("Fixes, cheapest first"),
		app.Ol().ID("triage-fixes").Class("triage-fixes").Body(items...),
	)
}

// copy copies a fix's code and shows the outcome next to its button.
func (p *TriagePage) copy(ctx app.Context, key, code string) {
	p.copied[key] = "Copying…"
	copyText(ctx, code, func(ok bool) {
		if ok {
			p.copied[key] = "Copied to the clipboard."
		} else {
			p.copied[key] = "Copy failed: select the code and press Ctrl+C."
		}
	})
}

// renderLinks shows the estimator link and the tensor matcher.
func (p *TriagePage) renderLinks(f *triage.Finding) app.UI {
	var est app.UI = app.P().Class("muted").Text("This message prints no capacity to carry to the estimator.")
	if l := f.Estimator; l != nil {
		var reasons []app.UI
		for i, kv := range l.Params {
			reasons = append(reasons, app.Li().Body(app.Code().Text(kv[0]+"="+kv[1]), app.Text(": "+shown(l.Reasons[i]))))
		}
		var compare, notes []app.UI
		for _, c := range l.Compare {
			compare = append(compare, app.Li().Body(app.Text(c.Label+": "), app.Strong().Text(shown(c.Printed)), app.Text(" (the estimate's "), app.Code().Text(c.Key), app.Text(")")))
		}
		for _, n := range l.Notes {
			notes = append(notes, app.Li().Text(shown(n)))
		}
		est = app.Div().Body(
			app.A().ID("triage-estimate-link").Class("button").Href(Href("/estimate?"+p.estimateQuery(l.Query))).Text("Open in the estimator"),
			app.Ul().Class("triage-reasons").Body(reasons...),
			app.If(len(compare) > 0, func() app.UI {
				return app.Div().ID("triage-compare").Body(app.P().Text("Printed here, to compare with the estimate:"), app.Ul().Body(compare...))
			}),
			app.If(len(notes) > 0, func() app.UI { return app.Ul().ID("triage-link-notes").Class("muted").Body(notes...) }),
		)
	}
	intro := "The estimator starts from the card this message describes; choose the model and setup there."
	if f.Backend == triage.BackendVLLM {
		intro = "The estimator opens in serving mode with what the message and its log state; check the model, GPU and flags there."
	}
	return app.Section().Class("triage-links").Body(
		app.H2().Text("What would fit?"),
		app.P().Text(intro),
		est,
		p.renderMatcher(f),
	)
}

// estimateQuery adds the page's unit to the estimator link's query, so
// the estimator shows sizes as this page does.
func (p *TriagePage) estimateQuery(q string) string {
	if p.unit != bytesize.Decimal {
		return q
	}
	if q != "" {
		q += "&"
	}
	return q + withUnit(url.Values{}, p.unit).Encode()
}

// renderMatcher is the optional "which tensor was it?" form and its answer.
func (p *TriagePage) renderMatcher(f *triage.Finding) app.UI {
	models := []app.UI{app.Option().Value("").Text("(choose a model)").Selected(p.setup.Model == "")}
	for _, m := range estimator.Models() {
		models = append(models, app.Option().Value(m.ID).Text(m.Name).Selected(m.ID == p.setup.Model))
	}
	on := p.setup.Model != ""
	sel := func(key string) func(ctx app.Context, e app.Event) {
		return func(ctx app.Context, e app.Event) { p.setSetup(ctx, key, ctx.JSSrc().Get("value").String()) }
	}
	choice := func(key string) app.UI {
		var opts []app.UI
		for _, c := range estimator.Choices[key] {
			opts = append(opts, app.Option().Value(c).Text(c).Selected(p.setup.Get(key) == c))
		}
		return app.Div().Class("field").Body(
			app.Label().For("triage-setup-"+key).Text(key),
			app.Select().ID("triage-setup-"+key).Disabled(!on).OnChange(sel(key)).Body(opts...),
		)
	}
	number := func(key, label string) app.UI {
		return app.Div().Class("field").Body(
			app.Label().For("triage-setup-"+key).Text(label),
			app.Input().ID("triage-setup-"+key).Type("number").Min(1).Disabled(!on).Value(p.setup.Get(key)).OnChange(sel(key)),
		)
	}
	var answer app.UI = app.P().Class("muted").Text("Choose a model to name the tensors whose size matches the request.")
	if m := f.TensorMatches; on && m != nil {
		var items []app.UI
		for _, t := range m.Matches {
			items = append(items, app.Li().Body(
				app.Strong().Text(t.Name), app.Text(": "+bytesize.Format(t.Bytes, p.unit)+" "),
				app.Span().Class("formula").Text(t.Formula+"; "+t.Rounding),
			))
		}
		var near []app.UI
		for _, n := range m.Nearest {
			near = append(near, app.Li().Body(
				app.Text(fmt.Sprintf("%s: %s, the request is %.2f× its allocation ", n.Name, bytesize.Format(n.Bytes, p.unit), n.Ratio)),
				app.Span().Class("formula").Text(n.Formula),
			))
		}
		answer = app.Div().ID("triage-matches").Body(
			app.If(len(items) > 0, func() app.UI { return app.Ul().Body(items...) }),
			app.If(m.Note != "", func() app.UI { return app.P().Class("muted").Text(m.Note) }),
			app.If(len(near) > 0, func() app.UI {
				return app.Div().Body(app.P().Text("Closest tensors:"), app.Ul().ID("triage-nearest").Body(near...))
			}),
		)
	}
	return app.Details().Class("triage-matcher").Open(on).Body(
		app.Summary().Text("Which tensor was it? Match the request against a model"),
		app.Div().Class("fields").Body(
			app.Div().Class("field").Body(
				app.Label().For("triage-setup-model").Text("model"),
				app.Select().ID("triage-setup-model").OnChange(sel("model")).Body(models...),
			),
			number("batch", "micro-batch"),
			number("seq", "sequence length"),
			choice("dtype"),
			choice("attn"),
		),
		app.If(p.setupErr != "", func() app.UI { return app.P().Class("error").Role("alert").Text(p.setupErr) }),
		answer,
	)
}

func oneLine(s string) string { return strings.Join(strings.Fields(shown(s)), " ") }
