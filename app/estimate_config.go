package app

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/estimator"
)

// compactConfig shortens a config.json for the URL: same keys and values,
// no whitespace. Text that is not JSON is kept as is, so the estimator can
// say what is wrong with it.
func compactConfig(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}

// setConfig applies a pasted or dropped config.json.
func (p *EstimatePage) setConfig(ctx app.Context, text, name string) {
	p.configName = name
	p.raw["config"] = text
	next := p.req
	next.Model = estimator.ModelCustom
	next.Config = compactConfig(text)
	if text == "" {
		p.req = next
		p.err = "Paste or drop a config.json below."
		return
	}
	p.req = next
	p.compute(ctx, true)
}

// configPanel is the custom model input: paste into the text area, drop a
// file on it, or choose one. Files are read here, in the browser.
func (p *EstimatePage) configPanel() app.UI {
	v, ok := p.raw["config"]
	if !ok {
		v = p.req.Config
	}
	note := "The file is read in your browser; it is not uploaded."
	if p.configName != "" {
		note = fmt.Sprintf("Read %s in your browser; it was not uploaded.", p.configName)
	}
	var notes []app.UI
	if p.rep != nil && p.rep.Model.ID == estimator.ModelCustom {
		for _, n := range p.rep.Model.Notes {
			notes = append(notes, app.Li().Text(n))
		}
	}
	return app.Div().ID("est-config-drop").Class("estimate-config").
		OnDragOver(func(ctx app.Context, e app.Event) { e.PreventDefault() }).
		OnDrop(func(ctx app.Context, e app.Event) {
			e.PreventDefault()
			files := e.Get("dataTransfer").Get("files")
			if files.Truthy() && files.Length() > 0 {
				p.readConfigFile(ctx, files.Index(0))
			}
		}).Body(
		app.Label().For(fieldID("config")).Text("config.json (paste, drop a file here, or choose one)"),
		app.Textarea().ID(fieldID("config")).Name("config").Rows(6).Text(v).
			Attr("spellcheck", "false").Placeholder(`{"model_type": "llama", "hidden_size": 4096, ...}`).
			OnInput(func(ctx app.Context, e app.Event) { p.setConfig(ctx, ctx.JSSrc().Get("value").String(), "") }),
		app.Div().Class("estimate-config-row").Body(
			app.Input().Type("file").ID(fieldID("config-file")).Accept(".json,application/json").
				Aria("label", "Choose a config.json file").
				OnChange(func(ctx app.Context, e app.Event) {
					files := ctx.JSSrc().Get("files")
					if files.Truthy() && files.Length() > 0 {
						p.readConfigFile(ctx, files.Index(0))
					}
				}),
			app.Span().Class("muted").Text(note),
		),
		app.If(len(notes) > 0, func() app.UI { return app.Ul().Class("estimate-notes").Body(notes...) }),
	)
}

// readConfigFile reads a File object (at most MaxConfigBytes) and applies
// it. Failures are shown, never thrown.
func (p *EstimatePage) readConfigFile(ctx app.Context, file app.Value) {
	name := file.Get("name").String()
	if size := file.Get("size").Float(); size > estimator.MaxConfigBytes {
		p.err = fmt.Sprintf("%s is %.0f bytes: a config.json is far smaller (limit %d). Did you drop the weights?", name, size, estimator.MaxConfigBytes)
		return
	}
	var ok, fail app.Func
	release := func() { ok.Release(); fail.Release() }
	ok = app.FuncOf(func(_ app.Value, args []app.Value) any {
		defer release()
		text := ""
		if len(args) > 0 && args[0].Type() == app.TypeString {
			text = args[0].String()
		}
		ctx.Dispatch(func(ctx app.Context) { p.setConfig(ctx, text, name) })
		return nil
	})
	fail = app.FuncOf(func(_ app.Value, args []app.Value) any {
		defer release()
		msg := "could not read " + name
		if len(args) > 0 && args[0].Truthy() {
			msg += ": " + args[0].Call("toString").String()
		}
		ctx.Dispatch(func(ctx app.Context) { p.err = msg })
		return nil
	})
	file.Call("text").Call("then", ok, fail)
}
