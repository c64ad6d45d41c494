package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
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
	if strings.TrimSpace(text) == "" {
		p.req = next
		p.err = "Paste or drop a config.json below."
		if name != "" {
			p.err = name + " is empty: a config.json holds the model's sizes (hidden_size, num_hidden_layers, ...)."
		}
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
		app.If(p.fieldErr["config"] != "", func() app.UI {
			return app.Span().ID(fieldID("config") + "-err").Class("estimate-field-error").Text(p.fieldErr["config"])
		}),
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

// checkpointPanel takes a model.safetensors.index.json or a .safetensors
// file (only its header is read, in the browser) and sets checkpoint_bytes
// to its stored bytes, shown beside the count the config gives.
func (p *EstimatePage) checkpointPanel() app.UI {
	f, _ := estimator.FieldByKey("checkpoint_bytes")
	id := fieldID("checkpoint-file")
	var said app.UI = app.Span().Class("muted").Text("Optional: exact stored bytes for quantized checkpoints.")
	if p.req.CheckpointBytes > 0 && p.rep != nil {
		what := fmt.Sprintf("%s B stored", bytesize.Commas(p.req.CheckpointBytes))
		if p.checkpoint != nil {
			what = fmt.Sprintf("%s: %s B in %d tensors", p.ckptName, bytesize.Commas(p.checkpoint.Bytes), p.checkpoint.Tensors)
		}
		said = app.Span().ID("est-checkpoint-said").Body(
			app.Text(what+fmt.Sprintf(" (the config counts %s params) · ", bytesize.Commas(p.rep.Params))),
			app.Button().Type("button").Class("secondary").ID("est-checkpoint-clear").Text("use the config's count").
				OnClick(func(ctx app.Context, e app.Event) {
					p.checkpoint, p.ckptName = nil, ""
					p.set(ctx, "checkpoint_bytes", "0")
				}),
		)
	}
	var errUI app.UI
	if msg := p.fieldErr["checkpoint_bytes"]; msg != "" {
		errUI = app.Span().ID(fieldID("checkpoint_bytes") + "-err").Class("estimate-field-error").Text(msg)
	}
	return app.Div().ID("est-checkpoint-drop").Class("estimate-checkpoint").
		OnDragOver(func(ctx app.Context, e app.Event) { e.PreventDefault() }).
		OnDrop(func(ctx app.Context, e app.Event) {
			e.PreventDefault()
			files := e.Get("dataTransfer").Get("files")
			if files.Truthy() && files.Length() > 0 {
				p.readCheckpointFile(ctx, files.Index(0))
			}
		}).Body(
		app.Div().Class("estimate-label-row").Body(
			app.Label().For(id).Text("Checkpoint (model.safetensors.index.json or a .safetensors file)"),
			helpToggle(fieldID("checkpoint_bytes"), f),
		),
		app.Input().Type("file").ID(id).Accept(".json,.safetensors").Aria("describedby", fieldID("checkpoint_bytes")+"-help").
			OnChange(func(ctx app.Context, e app.Event) {
				files := ctx.JSSrc().Get("files")
				if files.Truthy() && files.Length() > 0 {
					p.readCheckpointFile(ctx, files.Index(0))
				}
			}),
		said,
		errUI,
	)
}

// readCheckpointFile reads an index whole, or a .safetensors file's first
// 8 bytes and then its header only (a multi-gigabyte file is never read
// whole), and applies its stored bytes.
func (p *EstimatePage) readCheckpointFile(ctx app.Context, file app.Value) {
	name := file.Get("name").String()
	size := int64(file.Get("size").Float())
	fail := func(msg string) {
		ctx.Dispatch(func(ctx app.Context) { p.fieldErr["checkpoint_bytes"] = name + ": " + msg })
	}
	apply := func(data []byte) {
		c, err := estimator.ParseCheckpoint(data)
		if err != nil {
			fail(err.Error())
			return
		}
		ctx.Dispatch(func(ctx app.Context) {
			p.checkpoint, p.ckptName = &c, name
			p.set(ctx, "checkpoint_bytes", fmt.Sprint(c.Bytes))
		})
	}
	if strings.HasSuffix(strings.ToLower(name), ".json") {
		if size > estimator.MaxConfigBytes*64 {
			fail("too large for a checkpoint index")
			return
		}
		readSlice(file, 0, size, apply, fail)
		return
	}
	readSlice(file, 0, min(8, size), func(head []byte) {
		n, err := estimator.SafetensorsHeaderLen(head)
		if err != nil {
			fail(err.Error())
			return
		}
		readSlice(file, 0, min(8+n, size), apply, fail)
	}, fail)
}

// readSlice reads bytes [start, end) of a File in the browser.
func readSlice(file app.Value, start, end int64, done func([]byte), fail func(string)) {
	var ok, bad app.Func
	release := func() { ok.Release(); bad.Release() }
	ok = app.FuncOf(func(_ app.Value, args []app.Value) any {
		defer release()
		if len(args) == 0 {
			fail("could not be read")
			return nil
		}
		arr := app.Window().Get("Uint8Array").New(args[0])
		buf := make([]byte, arr.Length())
		app.CopyBytesToGo(buf, arr)
		done(buf)
		return nil
	})
	bad = app.FuncOf(func(_ app.Value, args []app.Value) any {
		defer release()
		msg := "could not be read"
		if len(args) > 0 && args[0].Truthy() {
			msg += ": " + args[0].Call("toString").String()
		}
		fail(msg)
		return nil
	})
	file.Call("slice", start, end).Call("arrayBuffer").Call("then", ok, bad)
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
