package app

import (
	"errors"
	"net/url"
	"strconv"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/estimator"
)

// EstimatePage is the /estimate page: a form over estimator.Request that
// recomputes on every change and keeps the URL equal to its state. The
// answer (verdict, top fix, readouts) comes first under the inputs.
type EstimatePage struct {
	app.Compo

	req estimator.Request
	// raw holds what the user typed in each text or number field, so a
	// half-typed value ("" or "40") is not overwritten by the last valid one.
	raw map[string]string
	// fieldErr is a message per field, in the user's words; err a problem
	// that belongs to no shown field.
	fieldErr map[string]string
	err      string
	rep      *estimator.Advice
	unit     bytesize.Unit // sizes shown in GiB or GB (units.go)
	// configName is the file a custom config.json came from, if dropped;
	// checkpoint what a dropped index or header said.
	configName string
	checkpoint *estimator.Checkpoint
	ckptName   string
	computed   int
}

// OnNav reads the state from the URL and computes the estimate.
func (p *EstimatePage) OnNav(ctx app.Context) {
	if r, ok := routeByPath("/estimate"); ok {
		ctx.Page().SetTitle("%s · OOMScope", r.Title)
		ctx.Page().SetDescription(r.Description)
	}
	q := Query(ctx)
	p.unit = unitFromQuery(q)
	p.raw, p.fieldErr, p.err = map[string]string{}, map[string]string{}, ""
	// The form shows what the URL says, problems marked; the numbers stay
	// the last valid ones (the defaults' on a first load), dimmed.
	p.req, _ = estimator.ParseQuery(q)
	p.compute(ctx, false)
}

// showErr files each field's problem next to its control, in user words,
// and the rest (a model or config that does not resolve) in the banner.
func (p *EstimatePage) showErr(err error) {
	var fes estimator.Errors
	var fe *estimator.FieldError
	switch {
	case errors.As(err, &fes):
	case errors.As(err, &fe):
		fes = estimator.Errors{fe}
	default:
		p.err = err.Error()
		return
	}
	for _, e := range fes {
		if p.req.Applies(e.Key) || e.Key == "model" || e.Key == "gpu" {
			p.fieldErr[e.Key] = e.Msg
			continue
		}
		label := e.Key
		if f, ok := estimator.FieldByKey(e.Key); ok {
			label = f.Label
		}
		if p.err != "" {
			p.err += " "
		}
		p.err += label + ": " + e.Msg + "."
	}
	if p.err == "" && len(p.fieldErr) > 0 {
		p.err = "Some settings need a fix: see the fields marked below."
	}
}

// compute runs the estimator on the current request. It keeps the previous
// report (shown dimmed) when the request is invalid.
func (p *EstimatePage) compute(ctx app.Context, writeURL bool) {
	start := time.Now()
	rep, err := estimator.Advise(p.req)
	took := time.Since(start)
	if err != nil {
		p.err = ""
		p.showErr(err)
	} else {
		p.rep = rep
		if writeURL {
			p.err = ""
		}
	}
	if p.rep == nil {
		// Only reachable with an invalid request on first load: show the
		// defaults rather than nothing.
		p.rep, _ = estimator.Advise(estimator.DefaultRequest())
	}
	if writeURL {
		ReplaceQuery(ctx, p.query())
	}
	p.computed++
	n := p.computed
	ctx.Defer(func(app.Context) {
		// The analysis time (estimate, searches, feasible region, fixes)
		// for the browser benchmark.
		MarkBody("data-estimate-us", strconv.FormatInt(took.Microseconds(), 10))
		MarkBody("data-estimate-ready", strconv.Itoa(n))
	})
}

// query is the page state as URL parameters: the request's non-default
// fields and the unit.
func (p *EstimatePage) query() url.Values {
	return withUnit(p.req.Query(), p.unit)
}

// href links to this page with the request r and the current unit.
func (p *EstimatePage) href(r estimator.Request) string {
	s := r.QueryString()
	if p.unit == bytesize.Decimal {
		if s != "" {
			s += "&"
		}
		s += withUnit(url.Values{}, p.unit).Encode()
	}
	if s == "" {
		return Href("/estimate")
	}
	return Href("/estimate?" + s)
}

// set changes one request field from a control and recomputes.
func (p *EstimatePage) set(ctx app.Context, key, value string) {
	next := p.req
	if err := next.Set(key, value); err != nil {
		var fe *estimator.FieldError
		if errors.As(err, &fe) {
			p.fieldErr[key] = fe.Msg
		} else {
			p.fieldErr[key] = err.Error()
		}
		return
	}
	delete(p.fieldErr, key)
	if key == "mode" || key == "method" {
		// Fields shown change: drop stale typing errors of hidden fields.
		p.fieldErr = map[string]string{}
	}
	p.req = next
	p.compute(ctx, true)
}

// setRaw records typed text and applies it when it parses.
func (p *EstimatePage) setRaw(ctx app.Context, key, value string) {
	p.raw[key] = value
	p.set(ctx, key, value)
}

// setUnit switches between GiB and GB.
func (p *EstimatePage) setUnit(ctx app.Context, u bytesize.Unit) {
	p.unit = u
	ReplaceQuery(ctx, p.query())
}

// Render lays out the form, the answer and the details: side by side on a
// wide screen, stacked on a phone with the answer kept in view (sticky)
// while the form scrolls.
func (p *EstimatePage) Render() app.UI {
	r, _ := routeByPath("/estimate")
	return Layout("/estimate",
		app.H1().Text("Estimate GPU memory"),
		app.P().Class("lead").Text(r.Description),
		app.Div().Class("estimate").Body(
			p.renderForm(),
			p.renderAnswer(),
			p.renderResults(),
		),
	)
}
