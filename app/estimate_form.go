package app

import (
	"fmt"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/estimator"
)

func fieldID(key string) string { return "est-" + key }

// fieldUI wraps a control with its label (from the estimator's field
// table), the help behind a "?" toggle, the unit and any problem, and ties
// help and problem to the control with aria-describedby.
func (p *EstimatePage) fieldUI(key string, control func(describedBy string) app.UI) app.UI {
	f, _ := estimator.FieldByKey(key)
	id := fieldID(key)
	describedBy := id + "-help"
	var errUI app.UI
	if msg := p.fieldErr[key]; msg != "" {
		describedBy += " " + id + "-err"
		errUI = app.Span().ID(id + "-err").Class("estimate-field-error").Text(msg)
	}
	return app.Div().Class("field").DataSet("key", key).Body(
		app.Div().Class("estimate-label-row").Body(
			app.Label().For(id).Text(f.Label),
			helpToggle(id, f),
		),
		control(describedBy),
		errUI,
	)
}

// helpToggle is the field's help text behind a small "?" disclosure.
func helpToggle(id string, f estimator.Field) app.UI {
	text := f.Help
	if f.Unit != "" && f.Unit != "bytes" && f.Unit != "%" {
		text += " Unit: " + f.Unit + "."
	}
	if f.Auto != "" {
		text += " 0 means " + f.Auto + "."
	}
	return app.Details().Class("estimate-help").Body(
		app.Summary().Aria("label", "About "+f.Label).Text("?"),
		app.P().ID(id+"-help").Text(text),
	)
}

// choice renders a select over the key's values with their labels.
func (p *EstimatePage) choice(key string) app.UI {
	f, _ := estimator.FieldByKey(key)
	cur := p.req.Get(key)
	return p.fieldUI(key, func(describedBy string) app.UI {
		var opts []app.UI
		for _, c := range f.Choices {
			o := app.Option().Value(c.Value).Text(c.Label)
			if c.Value == cur {
				o = o.Selected(true)
			}
			opts = append(opts, o)
		}
		return app.Select().ID(fieldID(key)).Name(key).Aria("describedby", describedBy).Body(opts...).
			OnChange(func(ctx app.Context, e app.Event) { p.set(ctx, key, ctx.JSSrc().Get("value").String()) }, app.EventScope(key))
	})
}

// number renders a numeric input; for a field where 0 means "auto", an
// empty box stands for 0 and the placeholder says what it resolves to.
func (p *EstimatePage) number(key string) app.UI {
	f, _ := estimator.FieldByKey(key)
	v, ok := p.raw[key]
	if !ok {
		v = p.req.Get(key)
		if f.Auto != "" && v == "0" {
			v = ""
		}
	}
	return p.fieldUI(key, func(describedBy string) app.UI {
		in := app.Input().Type("text").ID(fieldID(key)).Name(key).Value(v).
			Attr("inputmode", "decimal").Attr("autocomplete", "off").Aria("describedby", describedBy).
			OnInput(func(ctx app.Context, e app.Event) {
				s := ctx.JSSrc().Get("value").String()
				if strings.TrimSpace(s) == "" && f.Auto != "" {
					p.raw[key] = s
					p.set(ctx, key, "0")
					return
				}
				p.setRaw(ctx, key, s)
			}, app.EventScope(key))
		if f.Auto != "" {
			in = in.Placeholder("auto: " + p.autoValue(key))
		}
		if f.Unit == "" || f.Unit == "%" || f.Kind == estimator.KindFraction {
			return in
		}
		return app.Div().Class("estimate-unit-input").Body(in, app.Span().Class("muted").Text(f.Unit))
	})
}

// autoValue says what an "auto" (0) field resolves to for the request.
func (p *EstimatePage) autoValue(key string) string {
	if p.rep == nil || p.rep.Serving == nil {
		return ""
	}
	s := p.rep.Serving
	switch key {
	case "max_model_len":
		return bytesize.Commas(int64(s.MaxModelLen))
	case "max_num_seqs":
		return bytesize.Commas(int64(s.MaxNumSeqs))
	case "max_num_batched_tokens":
		return bytesize.Commas(int64(s.MaxBatchedTokens))
	}
	return ""
}

// text renders a text input with suggestions.
func (p *EstimatePage) text(key string, suggestions ...string) app.UI {
	v, ok := p.raw[key]
	if !ok {
		v = p.req.Get(key)
	}
	listID := fieldID(key) + "-list"
	var opts []app.UI
	for _, s := range suggestions {
		opts = append(opts, app.Option().Value(s))
	}
	return p.fieldUI(key, func(describedBy string) app.UI {
		return app.Div().Body(
			app.Input().Type("text").ID(fieldID(key)).Name(key).Value(v).List(listID).Aria("describedby", describedBy).
				Attr("autocomplete", "off").Attr("spellcheck", "false").
				OnInput(func(ctx app.Context, e app.Event) { p.setRaw(ctx, key, ctx.JSSrc().Get("value").String()) }, app.EventScope(key)),
			app.DataList().ID(listID).Body(opts...),
		)
	})
}

// check renders a checkbox with its help.
func (p *EstimatePage) check(key string) app.UI {
	f, _ := estimator.FieldByKey(key)
	id := fieldID(key)
	in := app.Input().Type("checkbox").ID(id).Name(key).Aria("describedby", id+"-help").
		OnChange(func(ctx app.Context, e app.Event) {
			p.set(ctx, key, fmt.Sprint(ctx.JSSrc().Get("checked").Bool()))
		}, app.EventScope(key))
	if p.req.Get(key) == "true" {
		in = in.Checked(true)
	}
	return app.Div().Class("field estimate-check").DataSet("key", key).Body(
		app.Div().Class("estimate-label-row").Body(
			app.Label().For(id).Body(in, app.Text(" "+f.Label)),
			helpToggle(id, f),
		),
		app.If(p.fieldErr[key] != "", func() app.UI {
			return app.Span().Class("estimate-field-error").Text(p.fieldErr[key])
		}),
	)
}

// modelPicker selects a catalog model or a custom config.json. Options
// show the model's name only: its size is in the caption of the results.
func (p *EstimatePage) modelPicker() app.UI {
	cur := p.req.Model
	return p.fieldUI("model", func(describedBy string) app.UI {
		var opts []app.UI
		for _, m := range estimator.Models() {
			o := app.Option().Value(m.ID).Text(m.Name)
			if m.ID == cur {
				o = o.Selected(true)
			}
			opts = append(opts, o)
		}
		custom := app.Option().Value(estimator.ModelCustom).Text("Custom: paste or drop a config.json")
		if cur == estimator.ModelCustom {
			custom = custom.Selected(true)
		}
		opts = append(opts, custom)
		return app.Select().ID(fieldID("model")).Name("model").Aria("describedby", describedBy).Body(opts...).
			OnChange(func(ctx app.Context, e app.Event) {
				v := ctx.JSSrc().Get("value").String()
				if v == estimator.ModelCustom {
					// Wait for a config before estimating; keep the model's
					// numbers on screen meanwhile.
					p.req.Model = estimator.ModelCustom
					p.err = "Paste or drop a config.json below."
					return
				}
				next := p.req
				next.Config = ""
				p.configName = ""
				if err := next.Set("model", v); err == nil {
					p.req = next
					delete(p.fieldErr, "config")
					p.compute(ctx, true)
				}
			}, app.EventScope("model"))
	})
}

// gpuPicker selects a catalog GPU or a custom capacity.
func (p *EstimatePage) gpuPicker() app.UI {
	_, inCatalog := estimator.LookupGPU(p.req.GPU)
	sel := p.fieldUI("gpu", func(describedBy string) app.UI {
		var opts []app.UI
		for _, g := range estimator.GPUs() {
			o := app.Option().Value(g.ID).Text(fmt.Sprintf("%s · %s", g.Name, bytesize.Format(g.CapacityBytes, p.unit)))
			if inCatalog && g.ID == p.req.GPU {
				o = o.Selected(true)
			}
			opts = append(opts, o)
		}
		custom := app.Option().Value("custom").Text("Custom capacity")
		if !inCatalog {
			custom = custom.Selected(true)
		}
		opts = append(opts, custom)
		return app.Select().ID(fieldID("gpu")).Name("gpu").Aria("describedby", describedBy).Body(opts...).
			OnChange(func(ctx app.Context, e app.Event) {
				v := ctx.JSSrc().Get("value").String()
				if v == "custom" {
					// Start from the current GPU's capacity.
					size := fmt.Sprintf("%.2fGiB", float64(p.rep.GPU.CapacityBytes)/float64(bytesize.GiB))
					p.raw["gpu"] = size
					p.set(ctx, "gpu", size)
					return
				}
				delete(p.raw, "gpu")
				p.set(ctx, "gpu", v)
			}, app.EventScope("gpu"))
	})
	var custom app.UI
	if !inCatalog {
		v, ok := p.raw["gpu"]
		if !ok {
			v = p.req.GPU
		}
		custom = app.Div().Class("field").Body(
			app.Label().For(fieldID("gpu-capacity")).Text("Capacity as PyTorch reports it (e.g. 79.19GiB)"),
			app.Input().Type("text").ID(fieldID("gpu-capacity")).Name("gpu-capacity").Value(v).
				Attr("autocomplete", "off").Attr("spellcheck", "false").
				OnInput(func(ctx app.Context, e app.Event) { p.setRaw(ctx, "gpu", ctx.JSSrc().Get("value").String()) }, app.EventScope("gpu-capacity")),
		)
	}
	return app.Div().Class("estimate-gpu").Body(sel, custom)
}

// renderForm is every setting that applies to the mode, in the field
// table's order, with the flags at the end.
func (p *EstimatePage) renderForm() app.UI {
	var settings, checks []app.UI
	for _, f := range estimator.Fields() {
		switch f.Key {
		case "model", "config", "gpu", "checkpoint_bytes", "mode":
			continue
		}
		if !p.req.Applies(f.Key) {
			continue
		}
		switch f.Kind {
		case estimator.KindChoice:
			settings = append(settings, p.choice(f.Key))
		case estimator.KindFlag:
			checks = append(checks, p.check(f.Key))
		case estimator.KindText:
			settings = append(settings, p.text(f.Key, estimator.TargetsAllLinear, estimator.TargetsAttention, "q_proj,v_proj", "q_proj,k_proj,v_proj,o_proj"))
		default:
			settings = append(settings, p.number(f.Key))
		}
	}
	return app.Form().Class("estimate-form").Aria("label", "Estimate settings").
		OnSubmit(func(ctx app.Context, e app.Event) { e.PreventDefault() }).Body(
		p.modelPicker(),
		app.If(p.req.Model == estimator.ModelCustom, func() app.UI { return p.configPanel() }),
		app.If(p.req.Applies("checkpoint_bytes"), func() app.UI { return p.checkpointPanel() }),
		p.gpuPicker(),
		p.choice("mode"),
		app.Div().Class("fields estimate-fields").Body(settings...),
		app.Div().Class("estimate-checks").Body(checks...),
	)
}
