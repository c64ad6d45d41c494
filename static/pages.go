package static

import (
	"regexp"
	"strings"
)

// booleanAttrs are the HTML attributes whose mere presence means true.
var booleanAttrs = []string{
	"allowfullscreen", "async", "autofocus", "autoplay", "checked", "controls", "default", "defer",
	"disabled", "formnovalidate", "hidden", "inert", "ismap", "itemscope", "loop", "multiple", "muted",
	"nomodule", "novalidate", "open", "playsinline", "readonly", "required", "reversed", "selected",
}

var falseBoolean = regexp.MustCompile(`\s(?:` + strings.Join(booleanAttrs, "|") + `)="false"`)

// fixPrerender corrects what go-app's HTML encoder gets wrong in a
// prerendered page, so that the page reads right before any script runs:
//
//   - go-app writes a false boolean attribute as name="false", which a
//     browser reads as true: every <option selected="false"> is selected
//     (the last one wins), every checkbox checked. In the browser go-app
//     sets the properties instead, so only the prerender is affected. Such
//     attributes are dropped. (Enumerated attributes such as
//     aria-pressed="false" or spellcheck="false" mean what they say and
//     stay.) Text and attribute values cannot contain the pattern: go-app
//     escapes quotes in both.
//   - Without a known domain go-app writes og:url and og:image as
//     "https://..." with no host; those tags are dropped.
//   - The loader badge is a status for assistive technology, and its icon
//     is decorative.
func fixPrerender(html string, hasDomain bool) string {
	html = falseBoolean.ReplaceAllString(html, "")
	if !hasDomain {
		html = emptyOG.ReplaceAllString(html, "")
	}
	html = strings.Replace(html, `alt="wasm loader icon"`, `alt=""`, 1)
	html = loaderTag.ReplaceAllString(html, `$1 role="status"$2`)
	return html
}

var (
	emptyOG   = regexp.MustCompile(`\s*<meta (?:property="og:(?:url|image)" content="https://[^"]*"|content="https://[^"]*" property="og:(?:url|image)")>`)
	loaderTag = regexp.MustCompile(`(<aside[^>]*id="app-wasm-loader"[^>]*)(>)`)
)
