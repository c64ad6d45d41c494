package app

import (
	"net/url"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Href returns the link to an internal path such as "/estimate?model=x".
// In the browser it adds the site's root prefix (GOAPP_ROOT_PREFIX, e.g.
// "/repo" for a GitHub Pages project site), and keeps embed=1 when the page
// is embedded so that links followed inside an iframe stay compact; during
// generation go-app adds the prefix itself, so the path is returned
// unchanged.
func Href(p string) string {
	if !app.IsClient {
		return p
	}
	if u := app.Window().URL(); u != nil && u.Query().Get(EmbedKey) == "1" {
		sep := "?"
		if strings.Contains(p, "?") {
			sep = "&"
		}
		if !strings.Contains(p, EmbedKey+"=") {
			p += sep + EmbedKey + "=1"
		}
	}
	return rootPrefix() + p
}

// rootPrefix is the site's path prefix without a trailing slash ("" at the
// root of a host).
func rootPrefix() string {
	return strings.TrimSuffix(app.Getenv("GOAPP_ROOT_PREFIX"), "/")
}

// Query returns the query parameters of the page being shown.
func Query(ctx app.Context) url.Values {
	return ctx.Page().URL().Query()
}

// EmbedKey is the URL parameter that shows a page without the site's
// header and navigation, for an <iframe> in other documentation:
// /estimate?model=llama-3.1-8b&embed=1.
const EmbedKey = "embed"

// Embedded reports whether the page is shown in embed mode.
func Embedded(ctx app.Context) bool {
	return Query(ctx).Get(EmbedKey) == "1"
}

// ReplaceQuery replaces the page's query string with v without adding a
// history entry, so that the address bar always holds the current state.
// Parameters of the frame rather than of the page (embed) are kept.
func ReplaceQuery(ctx app.Context, v url.Values) {
	u := *ctx.Page().URL()
	if Embedded(ctx) && !v.Has(EmbedKey) {
		c := url.Values{EmbedKey: {"1"}}
		for k, vs := range v {
			c[k] = vs
		}
		v = c
	}
	u.RawQuery = v.Encode()
	if u.String() != ctx.Page().URL().String() {
		ctx.Page().ReplaceURL(&u)
	}
}

// MarkBody sets an attribute on <body>; e2e tests poll such markers to know
// that the page has finished some work. It does nothing on the host.
func MarkBody(attr, value string) {
	if !app.IsClient {
		return
	}
	app.Window().Get("document").Get("body").Call("setAttribute", attr, value)
}
