package app

import (
	"net/url"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
)

// Every page shows sizes in GiB, as PyTorch prints them, or in GB on
// request. The choice is the URL parameter unit=gb (absent means GiB), so a
// shared link or a reload keeps it. A page keeps the choice in a
// bytesize.Unit field, formats with bytesize.Format(n, unit), and draws
// unitToggle; exact byte counts with commas are shown as they are.

// unitKey is the URL parameter holding the display unit.
const unitKey = "unit"

// unitGB is unitKey's value for decimal units.
const unitGB = "gb"

// unitFromQuery returns the unit asked for by the URL parameters:
// bytesize.Decimal for unit=gb, bytesize.Binary otherwise.
func unitFromQuery(q url.Values) bytesize.Unit {
	if q.Get(unitKey) == unitGB {
		return bytesize.Decimal
	}
	return bytesize.Binary
}

// withUnit sets the unit parameter in q (removing it for GiB, the
// default) and returns q.
func withUnit(q url.Values, u bytesize.Unit) url.Values {
	if u == bytesize.Decimal {
		q.Set(unitKey, unitGB)
	} else {
		q.Del(unitKey)
	}
	return q
}

// unitToggle draws the GiB / GB switch: two buttons, the current one
// pressed (aria-pressed), with ids unit-gib and unit-gb. set is called with
// the unit chosen; the page stores it and writes the URL (withUnit).
func unitToggle(cur bytesize.Unit, set func(ctx app.Context, u bytesize.Unit)) app.UI {
	button := func(id, label string, u bytesize.Unit) app.UI {
		cls := "secondary"
		if cur == u {
			cls = "unit-on"
		}
		return app.Button().Type("button").ID(id).Class(cls).Aria("pressed", cur == u).Text(label).
			OnClick(func(ctx app.Context, e app.Event) { set(ctx, u) })
	}
	return app.Div().Class("unit-toggle").Role("group").Aria("label", "Units").Body(
		app.Span().Class("muted").Text("Sizes in"),
		button("unit-gib", "GiB", bytesize.Binary),
		button("unit-gb", "GB", bytesize.Decimal),
		app.Span().Class("muted unit-note").Text("PyTorch prints GiB (2³⁰ B); GPU makers sell GB (10⁹ B)"),
	)
}
