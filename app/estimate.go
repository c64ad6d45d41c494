package app

import (
	"net/url"
	"strconv"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/estimator"
)

// EstimatePage is the /estimate page: a form over estimator.Request that
// recomputes on every change and keeps the URL equal to its state.
type EstimatePage struct {
	app.Compo

	req estimator.Request
	// raw holds what the user typed in each text or number field, so a
	// half-typed value ("" or "40") is not overwritten by the last valid one.
	raw map[string]string
	// fieldErr is a parse error per field; err the estimator's error.
	fieldErr map[string]string
	err      string
	rep      *estimator.Report
	unit     bytesize.Unit // sizes shown in GiB or GB (units.go)
	// configName is the file a custom config.json came from, if dropped.
	configName string
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
	q.Del(unitKey) // not part of the estimator's vocabulary
	p.raw, p.fieldErr, p.err = map[string]string{}, map[string]string{}, ""
	req, err := estimator.ParseQuery(q)
	if err != nil {
		p.err = err.Error()
		if _, verr := estimator.Analyze(req); verr != nil {
			req = estimator.DefaultRequest()
		}
	}
	p.req = req
	p.compute(ctx, false)
}

// compute runs the estimator on the current request. It keeps the previous
// report (shown dimmed) when the request is invalid.
func (p *EstimatePage) compute(ctx app.Context, writeURL bool) {
	rep, err := estimator.Analyze(p.req)
	if err != nil {
		p.err = err.Error()
	} else {
		p.rep = rep
		if writeURL {
			p.err = ""
		}
	}
	if p.rep == nil {
		// Only reachable with an invalid request on first load: show the
		// defaults rather than nothing.
		p.rep, _ = estimator.Analyze(estimator.DefaultRequest())
	}
	if writeURL {
		ReplaceQuery(ctx, p.query())
	}
	p.computed++
	n := p.computed
	ctx.Defer(func(app.Context) { MarkBody("data-estimate-ready", strconv.Itoa(n)) })
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
		p.fieldErr[key] = err.Error()
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

// Render lays out the form and the results side by side (stacked on phones).
func (p *EstimatePage) Render() app.UI {
	r, _ := routeByPath("/estimate")
	return Layout("/estimate",
		app.H1().Text("Estimate GPU memory"),
		app.P().Class("lead").Text(r.Description),
		app.Div().Class("estimate").Body(
			p.renderForm(),
			p.renderResults(),
		),
	)
}
