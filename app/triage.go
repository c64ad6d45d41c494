package app

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/estimator"
	"oomscope/estimator/triage"
)

// URL parameters of /triage. The pasted text is never put in the URL: it
// stays in the page.
const (
	triageWhenKey    = "when"
	triageExampleKey = "example"
)

// syncLimit is the paste size parsed on every keystroke; longer pastes wait
// for a pause in typing.
const syncLimit = 256 << 10

// TriagePage is the /triage page: a paste box parsed as you type, with the
// numbers, the card, the cause and the fixes of every OOM message found.
type TriagePage struct {
	app.Compo

	text    string
	when    triage.When
	example string
	unit    bytesize.Unit // sizes shown in GiB or GB (units.go)

	res    triage.Result
	sel    int
	err    string
	gen    int
	parsed int

	// setup is the model and setup tensors are matched against; model ""
	// means matching is off.
	setup    estimator.Request
	setupErr string
	// whenErr says that the link's when was not understood.
	whenErr string

	// copied is the feedback per fix copy button ("Copied", ...).
	copied map[string]string
}

// triageState reads the page's state from its URL query as the CLI reads
// its flags: when it failed (triage.ParseWhen, as --when) and the
// tensor-matching setup (triage.ParseSetup, as --setup, but other keys are
// the page's other state). A value the CLI would refuse is reported in
// whenErr or setupErr and left out.
func triageState(q url.Values) (when triage.When, whenErr string, setup estimator.Request, setupErr string) {
	if w, err := triage.ParseWhen(q.Get(triageWhenKey)); err != nil {
		whenErr = fmt.Sprintf("The link's %s=%q is not one of load, after-steps, long-inputs or eval: it was ignored.", triageWhenKey, shown(q.Get(triageWhenKey)))
	} else {
		when = w
	}
	setup = estimator.DefaultRequest()
	setup.Model = ""
	if r, err := triage.ParseSetup(q, false); err != nil {
		setupErr = err.Error()
	} else if r != nil {
		setup = *r
	}
	return when, whenErr, setup, setupErr
}

// OnNav reads the state from the URL: when it failed, an example, the unit
// and the tensor-matching setup.
func (p *TriagePage) OnNav(ctx app.Context) {
	if r, ok := routeByPath("/triage"); ok {
		ctx.Page().SetTitle("%s · OOMScope", r.Title)
		ctx.Page().SetDescription(r.Description)
	}
	q := Query(ctx)
	p.when, p.whenErr, p.setup, p.setupErr = triageState(q)
	p.unit = unitFromQuery(q)
	if ex, ok := exampleByID(q.Get(triageExampleKey)); ok && p.text == "" {
		p.example, p.text = ex.ID, ex.Text
	}
	p.analyze(ctx)
}

// query is the page state as URL parameters (never the pasted text).
func (p *TriagePage) query() url.Values {
	q := url.Values{}
	if p.when != triage.WhenUnknown {
		q.Set(triageWhenKey, string(p.when))
	}
	if p.example != "" {
		q.Set(triageExampleKey, p.example)
	}
	withUnit(q, p.unit)
	if p.setup.Model != "" {
		for _, k := range triage.SetupKeys {
			q.Set(k, p.setup.Get(k))
		}
	}
	return q
}

// analyze runs triage on the text. It cannot panic: a failure is shown.
func (p *TriagePage) analyze(ctx app.Context) {
	defer func() {
		if r := recover(); r != nil {
			p.err = fmt.Sprint("internal error while reading the text: ", r)
		}
	}()
	p.err = ""
	opt := triage.Options{When: p.when}
	if p.setup.Model != "" {
		s := p.setup
		opt.Setup = &s
	}
	p.res = triage.Triage(p.text, opt)
	if p.sel >= len(p.res.Findings) {
		p.sel = 0
	}
	p.copied = map[string]string{}
	p.parsed++
	n := p.parsed
	ctx.Defer(func(app.Context) { MarkBody("data-triage-ready", strconv.Itoa(n)) })
}

// onInput re-parses as the user types; big pastes wait for a pause.
func (p *TriagePage) onInput(ctx app.Context, e app.Event) {
	p.text = ctx.JSSrc().Get("value").String()
	if p.example != "" {
		p.example = ""
		ReplaceQuery(ctx, p.query())
	}
	p.gen++
	// A paste or a drop brings a whole message: show its answer. Typing
	// does not move the page.
	pasted := false
	switch e.Get("inputType").String() {
	case "insertFromPaste", "insertFromDrop", "insertFromPasteAsQuotation":
		pasted = true
	}
	if len(p.text) <= syncLimit {
		p.analyze(ctx)
		if pasted {
			p.reveal(ctx)
		}
		return
	}
	g := p.gen
	ctx.After(300*time.Millisecond, func(ctx app.Context) {
		if g == p.gen {
			p.analyze(ctx)
			if pasted {
				p.reveal(ctx)
			}
		}
	})
}

// reveal brings the answer (the cause and the first fixes) into view on a
// narrow screen, where it sits below the paste box.
func (p *TriagePage) reveal(ctx app.Context) {
	if len(p.res.Findings) > 0 {
		revealOnNarrow(ctx, "triage-answer")
	}
}

func (p *TriagePage) onExample(ctx app.Context, e app.Event) {
	id := ctx.JSSrc().Get("value").String()
	ex, ok := exampleByID(id)
	if !ok {
		return
	}
	p.example, p.text, p.sel = ex.ID, ex.Text, 0
	setTextareaValue(ctx, "triage-input", p.text)
	ReplaceQuery(ctx, p.query())
	p.analyze(ctx)
	p.reveal(ctx)
}

// setTextareaValue sets a textarea's live value after the next render: once
// a user typed, its text content no longer drives what it shows.
func setTextareaValue(ctx app.Context, id, text string) {
	ctx.Defer(func(app.Context) {
		if el := app.Window().GetElementByID(id); el.Truthy() {
			el.Set("value", text)
		}
	})
}

func (p *TriagePage) onWhen(ctx app.Context, e app.Event) {
	w, err := triage.ParseWhen(ctx.JSSrc().Get("value").String())
	if err != nil {
		return
	}
	p.when, p.whenErr = w, ""
	ReplaceQuery(ctx, p.query())
	p.analyze(ctx)
}

// setUnit switches between GiB and GB.
func (p *TriagePage) setUnit(ctx app.Context, u bytesize.Unit) {
	p.unit = u
	ReplaceQuery(ctx, p.query())
}

func (p *TriagePage) onClear(ctx app.Context, e app.Event) {
	p.text, p.example, p.sel = "", "", 0
	setTextareaValue(ctx, "triage-input", "")
	ReplaceQuery(ctx, p.query())
	p.analyze(ctx)
}

// setSetup changes one field of the matching setup.
func (p *TriagePage) setSetup(ctx app.Context, key, value string) {
	next := p.setup
	if key == "model" && value == "" {
		next.Model = ""
	} else {
		if next.Model == "" {
			next.Model = estimator.DefaultRequest().Model
		}
		if err := next.Set(key, value); err != nil {
			p.setupErr = err.Error()
			return
		}
		if err := next.Validate(); err != nil {
			p.setupErr = err.Error()
			return
		}
	}
	p.setupErr = ""
	p.setup = next
	ReplaceQuery(ctx, p.query())
	p.analyze(ctx)
}

// Render draws the page.
func (p *TriagePage) Render() app.UI {
	r, _ := routeByPath("/triage")
	return Layout("/triage",
		app.H1().Text(r.Title),
		app.P().Class("lead").Text(r.Description),
		app.P().ID("triage-privacy").Class("notice triage-privacy").Text(
			"Your text is read by this page, in your browser. It is never uploaded, never stored and never put in the address bar."),
		p.renderInput(),
		p.renderResult(),
	)
}

func (p *TriagePage) renderInput() app.UI {
	examples := []app.UI{app.Option().Value("").Text("Try an example…").Selected(p.example == "")}
	for _, ex := range triageExamples {
		examples = append(examples, app.Option().Value(ex.ID).Text(ex.Title).Selected(ex.ID == p.example))
	}
	var whens []app.UI
	for _, w := range triage.Whens {
		whens = append(whens, app.Option().Value(string(w.When)).Text(w.Label).Selected(w.When == p.when))
	}
	return app.Section().Class("triage-input").Body(
		app.Div().Class("triage-controls").Body(
			app.Div().Class("field").Body(
				app.Label().For("triage-example").Text("Example"),
				app.Select().ID("triage-example").OnChange(p.onExample).Body(examples...),
			),
			app.Div().Class("field").Body(
				app.Label().For("triage-when").Text("When did it fail?"),
				app.Select().ID("triage-when").OnChange(p.onWhen).Body(whens...),
				app.If(p.whenErr != "", func() app.UI { return app.P().ID("triage-when-error").Class("error").Role("alert").Text(p.whenErr) }),
			),
			app.Div().Class("triage-buttons").Body(
				app.Button().ID("triage-clear").Class("secondary").Text("Clear").OnClick(p.onClear),
			),
		),
		app.Label().For("triage-input").Text("Paste the error (a whole traceback or log is fine)"),
		app.Textarea().ID("triage-input").Class("triage-text").Rows(9).Spellcheck(false).
			Placeholder("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate …").
			Text(p.text).OnInput(p.onInput),
	)
}

func (p *TriagePage) renderResult() app.UI {
	if p.err != "" {
		return app.P().ID("triage-status").Class("error").Role("alert").Text(p.err)
	}
	n := len(p.res.Findings)
	if n == 0 {
		msg := "Paste an out-of-memory error above, or pick an example."
		if p.text != "" {
			msg = "No out-of-memory message found in this text. OOMScope reads PyTorch (CUDA, ROCm, MPS, XPU, CPU), cuBLAS, cuDNN, NCCL, JAX/XLA, TensorFlow and vLLM messages."
		}
		return app.P().ID("triage-status").Class("triage-status muted").Text(msg)
	}
	status := "Found 1 out-of-memory message."
	if n > 1 {
		status = fmt.Sprintf("Found %d out-of-memory messages.", n)
	}
	if p.res.Truncated {
		status += " Only the first ones are shown."
	}
	var tabs []app.UI
	if n > 1 {
		for i, f := range p.res.Findings {
			i := i
			label := fmt.Sprintf("#%d %s · %s", i+1, f.Kind, f.Cause)
			b := app.Button().ID(fmt.Sprintf("triage-pick-%d", i)).Class("secondary triage-pick").Text(label).
				OnClick(func(ctx app.Context, e app.Event) { p.sel = i })
			if i == p.sel {
				b = b.Class("triage-pick active").Aria("pressed", "true")
			}
			tabs = append(tabs, b)
		}
	}
	return app.Section().Class("triage-result").Body(
		app.Div().Class("triage-result-head").Body(
			app.P().ID("triage-status").Class("triage-status").Text(status),
			unitToggle(p.unit, p.setUnit),
		),
		app.If(len(tabs) > 0, func() app.UI { return app.Div().Class("triage-picks").Body(tabs...) }),
		p.renderFinding(&p.res.Findings[p.sel]),
	)
}
