package app

import (
	"net/url"
	"path"
	"strings"
	"sync"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// Href returns the link to an internal page such as "/estimate?model=x".
// In the browser it adds the site's root prefix (GOAPP_ROOT_PREFIX, e.g.
// "/repo" for a GitHub Pages project site), and keeps embed=1 when the page
// is embedded so that links followed inside an iframe stay embedded; during
// generation go-app adds the prefix itself, so the path is returned
// unchanged. Files (anything with an extension, everything under /web/)
// never get embed=1: use Asset for them.
func Href(p string) string {
	if !app.IsClient {
		return p
	}
	if isPage(p) && embedded() {
		p = withParam(p, EmbedKey, "1")
	}
	return rootPrefix() + p
}

// clientURL remembers, in the browser, the last address embedded parsed
// and its answer; pages draw their layout (a dozen links) on every update,
// which parsed the address once per link.
var clientURL struct {
	href     string
	embedded bool
}

// embedded reports whether the page's address has embed=1.
func embedded() bool {
	href := app.Window().Get("location").Get("href").String()
	if href != clientURL.href {
		u, err := url.Parse(href)
		clientURL.href, clientURL.embedded = href, err == nil && u.Query().Get(EmbedKey) == "1"
	}
	return clientURL.embedded
}

// Asset returns the URL of a file of the site ("/web/snapworker.js") with
// the root prefix in the browser, never with page parameters.
func Asset(p string) string {
	if !app.IsClient {
		return p
	}
	return rootPrefix() + p
}

// isPage reports whether an internal URL is a page rather than a file.
func isPage(p string) bool {
	pth, _, _ := strings.Cut(p, "?")
	pth, _, _ = strings.Cut(pth, "#")
	return !strings.HasPrefix(pth, "/web/") && path.Ext(pth) == ""
}

// withParam adds k=v to the query of p unless p already sets k, keeping a
// #fragment last.
func withParam(p, k, v string) string {
	base, frag, hasFrag := strings.Cut(p, "#")
	_, q, _ := strings.Cut(base, "?")
	if vs, err := url.ParseQuery(q); err == nil && vs.Has(k) {
		return p
	}
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	base += sep + url.QueryEscape(k) + "=" + url.QueryEscape(v)
	if hasFrag {
		base += "#" + frag
	}
	return base
}

// rootPrefix is the site's path prefix without a trailing slash ("" at the
// root of a host). In the browser it is read once: it is fixed when the
// site is built, and app.Getenv takes three calls into JavaScript.
func rootPrefix() string {
	if !app.IsClient {
		return strings.TrimSuffix(app.Getenv("GOAPP_ROOT_PREFIX"), "/")
	}
	clientPrefix.Do(func() { clientPrefix.v = strings.TrimSuffix(app.Getenv("GOAPP_ROOT_PREFIX"), "/") })
	return clientPrefix.v
}

// clientPrefix is rootPrefix's value in the browser, read once.
var clientPrefix struct {
	sync.Once
	v string
}

// Query returns the page's state parameters: the URL's query without the
// parameters that belong to the frame or to whoever shared the link (see
// PageQuery).
func Query(ctx app.Context) url.Values {
	return PageQuery(ctx.Page().URL().Query())
}

// EmbedKey is the URL parameter that shows a page without the site's
// header and navigation, for an <iframe> in other documentation:
// /estimate?model=llama-3.1-8b&embed=1.
const EmbedKey = "embed"

// PageQuery returns q without the parameters that are never part of a
// page's state, so that no page reports them as unknown: embed (the frame),
// wasm (go-app's switch to skip the app), and the tracking parameters that
// sites and mailers add to shared links (utm_*, fbclid, gclid, ref, ...).
// q is not modified.
func PageQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, vs := range q {
		if !IgnoredParam(k) {
			out[k] = vs
		}
	}
	return out
}

// IgnoredParam reports whether a URL parameter is one PageQuery drops.
func IgnoredParam(k string) bool {
	switch strings.ToLower(k) {
	case EmbedKey, "wasm", "fbclid", "gclid", "dclid", "msclkid", "mc_cid", "mc_eid", "ref", "ref_src", "igshid", "_ga", "_gl":
		return true
	}
	return strings.HasPrefix(strings.ToLower(k), "utm_")
}

// ReplaceQuery replaces the page's state parameters with v without adding a
// history entry, so that the address bar always holds the current state.
// The frame's parameters (embed, wasm) are kept; tracking parameters are
// dropped once the user changes something, so the link they share is clean.
func ReplaceQuery(ctx app.Context, v url.Values) {
	u := *ctx.Page().URL()
	next := url.Values{}
	for k, vs := range u.Query() {
		if k == EmbedKey || k == "wasm" {
			next[k] = vs
		}
	}
	for k, vs := range v {
		next[k] = vs
	}
	u.RawQuery = next.Encode()
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
