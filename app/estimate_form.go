package app

import (
	"fmt"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/estimator"
)

// Labels of the enumerated values, keyed by vocabulary key then value.
var estimateChoiceLabels = map[string]map[string]string{
	"mode":        {"train": "Training", "infer": "Inference"},
	"method":      {"full": "Full fine-tuning", "lora": "LoRA", "qlora": "QLoRA (NF4 base)"},
	"dtype":       {"fp32": "fp32", "bf16": "bf16", "fp16": "fp16"},
	"optimizer":   {"adamw": "AdamW", "adamw-8bit": "AdamW 8-bit", "sgd": "SGD", "sgd-momentum": "SGD + momentum", "adafactor": "Adafactor", "lion": "Lion"},
	"ckpt":        {"none": "none", "full": "full", "selective": "selective"},
	"attn":        {"sdpa": "SDPA / Flash", "eager": "eager"},
	"logits":      {"fp32": "fp32 upcast", "bf16": "16-bit", "chunked": "chunked CE"},
	"shard":       {"none": "none (replicas)", "ddp": "DDP", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3 / FSDP"},
	"quant":       {"none": "none", "fp8": "fp8", "int8": "int8", "int4": "int4"},
	"kv_dtype":    {"auto": "same as weights", "fp32": "fp32", "bf16": "bf16", "fp16": "fp16", "fp8": "fp8"},
	"activations": {"tally": "tally", "paper": "paper"},
}

// estimateLabels are the visible labels of the controls.
var estimateLabels = map[string]string{
	"model": "Model", "gpu": "GPU", "mode": "Mode", "method": "Method", "dtype": "Precision",
	"master": "fp32 master weights", "autocast": "fp32 weights + autocast", "optimizer": "Optimizer",
	"batch": "Micro-batch", "seq": "Sequence length", "accum": "Grad accumulation", "ckpt": "Activation checkpointing",
	"attn": "Attention", "logits": "Logits / loss", "gpus": "GPUs", "shard": "Sharding",
	"lora_rank": "LoRA rank", "lora_targets": "LoRA targets", "quant": "Weight quantization",
	"kv_dtype": "KV cache dtype", "headroom": "Headroom %", "activations": "Activation model",
}

func fieldID(key string) string { return "est-" + key }

// shown reports whether a control applies to the request's mode and method.
func (p *EstimatePage) shown(key string) bool {
	train := p.req.Mode == estimator.ModeTrain
	switch key {
	case "method", "master", "autocast", "optimizer", "accum", "ckpt", "logits", "gpus", "shard":
		return train
	case "lora_rank", "lora_targets":
		return train && p.req.Method != estimator.MethodFull
	case "quant", "kv_dtype":
		return !train
	}
	return true
}

// field wraps a control with its label and any parse error.
func (p *EstimatePage) field(key string, control app.UI) app.UI {
	var errUI app.UI
	if msg := p.fieldErr[key]; msg != "" {
		errUI = app.Span().ID(fieldID(key) + "-err").Class("estimate-field-error").Text(msg)
	}
	return app.Div().Class("field").Body(
		app.Label().For(fieldID(key)).Text(estimateLabels[key]),
		control,
		errUI,
	)
}

// choice renders a select over the key's enumerated values.
func (p *EstimatePage) choice(key string) app.UI {
	cur := p.req.Get(key)
	var opts []app.UI
	for _, v := range estimator.Choices[key] {
		label := estimateChoiceLabels[key][v]
		if label == "" {
			label = v
		}
		opts = append(opts, app.Option().Value(v).Selected(v == cur).Text(label))
	}
	return p.field(key, app.Select().ID(fieldID(key)).Name(key).Body(opts...).
		OnChange(func(ctx app.Context, e app.Event) { p.set(ctx, key, ctx.JSSrc().Get("value").String()) }, app.EventScope(key)))
}

// number renders a numeric input.
func (p *EstimatePage) number(key string, min, max int) app.UI {
	v, ok := p.raw[key]
	if !ok {
		v = p.req.Get(key)
	}
	in := app.Input().Type("number").ID(fieldID(key)).Name(key).Min(min).Max(max).Value(v).
		Attr("inputmode", "numeric").
		OnInput(func(ctx app.Context, e app.Event) { p.setRaw(ctx, key, ctx.JSSrc().Get("value").String()) }, app.EventScope(key))
	if key == "headroom" {
		in = in.Step(0.5)
	}
	return p.field(key, in)
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
	return p.field(key, app.Div().Body(
		app.Input().Type("text").ID(fieldID(key)).Name(key).Value(v).List(listID).
			Attr("autocomplete", "off").Attr("spellcheck", "false").
			OnInput(func(ctx app.Context, e app.Event) { p.setRaw(ctx, key, ctx.JSSrc().Get("value").String()) }, app.EventScope(key)),
		app.DataList().ID(listID).Body(opts...),
	))
}

// check renders a checkbox.
func (p *EstimatePage) check(key string) app.UI {
	on := p.req.Get(key) == "true"
	return app.Div().Class("field estimate-check").Body(
		app.Label().For(fieldID(key)).Body(
			app.Input().Type("checkbox").ID(fieldID(key)).Name(key).Checked(on).
				OnChange(func(ctx app.Context, e app.Event) {
					p.set(ctx, key, fmt.Sprint(ctx.JSSrc().Get("checked").Bool()))
				}, app.EventScope(key)),
			app.Text(" "+estimateLabels[key]),
		),
		app.If(p.fieldErr[key] != "", func() app.UI {
			return app.Span().Class("estimate-field-error").Text(p.fieldErr[key])
		}),
	)
}

// modelPicker selects a catalog model or a custom config.json.
func (p *EstimatePage) modelPicker() app.UI {
	cur := p.req.Model
	var opts []app.UI
	for _, m := range estimator.Models() {
		opts = append(opts, app.Option().Value(m.ID).Selected(m.ID == cur).
			Text(fmt.Sprintf("%s (%s)", m.Name, m.Size())))
	}
	opts = append(opts, app.Option().Value(estimator.ModelCustom).Selected(cur == estimator.ModelCustom).Text("Custom: paste or drop a config.json"))
	return p.field("model", app.Select().ID(fieldID("model")).Name("model").Body(opts...).
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
				p.compute(ctx, true)
			}
		}, app.EventScope("model")))
}

// gpuPicker selects a catalog GPU or a custom capacity.
func (p *EstimatePage) gpuPicker() app.UI {
	_, inCatalog := estimator.LookupGPU(p.req.GPU)
	var opts []app.UI
	for _, g := range estimator.GPUs() {
		opts = append(opts, app.Option().Value(g.ID).Selected(inCatalog && g.ID == p.req.GPU).
			Text(fmt.Sprintf("%s · %s", g.Name, bytesize.Format(g.CapacityBytes, p.unit))))
	}
	opts = append(opts, app.Option().Value("custom").Selected(!inCatalog).Text("Custom capacity"))
	sel := app.Select().ID(fieldID("gpu")).Name("gpu").Body(opts...).
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
	return app.Div().Class("estimate-gpu").Body(p.field("gpu", sel), custom)
}

// renderForm is every setting, in the order a user decides them.
func (p *EstimatePage) renderForm() app.UI {
	var settings []app.UI
	add := func(key string, ui func() app.UI) {
		if p.shown(key) {
			settings = append(settings, ui())
		}
	}
	add("mode", func() app.UI { return p.choice("mode") })
	add("method", func() app.UI { return p.choice("method") })
	add("dtype", func() app.UI { return p.choice("dtype") })
	add("optimizer", func() app.UI { return p.choice("optimizer") })
	add("batch", func() app.UI { return p.number("batch", 1, estimator.MaxBatch) })
	add("seq", func() app.UI { return p.number("seq", 1, estimator.MaxSeq) })
	add("accum", func() app.UI { return p.number("accum", 1, estimator.MaxAccum) })
	add("ckpt", func() app.UI { return p.choice("ckpt") })
	add("attn", func() app.UI { return p.choice("attn") })
	add("logits", func() app.UI { return p.choice("logits") })
	add("gpus", func() app.UI { return p.number("gpus", 1, estimator.MaxGPUs) })
	add("shard", func() app.UI { return p.choice("shard") })
	add("lora_rank", func() app.UI { return p.number("lora_rank", 1, estimator.MaxLoraRank) })
	add("lora_targets", func() app.UI {
		return p.text("lora_targets", estimator.TargetsAllLinear, estimator.TargetsAttention, "q_proj,v_proj", "q_proj,k_proj,v_proj,o_proj")
	})
	add("quant", func() app.UI { return p.choice("quant") })
	add("kv_dtype", func() app.UI { return p.choice("kv_dtype") })
	add("headroom", func() app.UI { return p.number("headroom", 0, 99) })
	add("activations", func() app.UI { return p.choice("activations") })
	var checks []app.UI
	for _, k := range []string{"master", "autocast"} {
		if p.shown(k) {
			checks = append(checks, p.check(k))
		}
	}
	return app.Form().Class("estimate-form").Aria("label", "Estimate settings").
		OnSubmit(func(ctx app.Context, e app.Event) { e.PreventDefault() }).Body(
		p.modelPicker(),
		app.If(p.req.Model == estimator.ModelCustom, func() app.UI { return p.configPanel() }),
		p.gpuPicker(),
		app.Div().Class("fields estimate-fields").Body(settings...),
		app.Div().Class("estimate-checks").Body(checks...),
	)
}
