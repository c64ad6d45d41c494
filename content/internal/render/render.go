// Package render turns a guide's Markdown into the HTML embedded in the site.
// It runs at build time only (go generate), so the Markdown renderer is not
// linked into the browser's wasm.
//
// Beyond CommonMark and tables it does four things for the site:
//   - headings get ids (for the table of contents and #links);
//   - a link whose title is "expect: <verdict>" loses the title and carries
//     data-expect="<verdict>" instead: the claim its sentence makes about
//     the tool preset it links to, checked by app's TestGuideClaims;
//   - code blocks are keyboard-scrollable (tabindex) and come with a Copy
//     button (static/web/site.js copies the text);
//   - tables scroll sideways in a focusable region on narrow screens.
package render

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// ExpectPrefix starts a link title that states a claim about a preset.
const ExpectPrefix = "expect:"

var md = goldmark.New(
	goldmark.WithExtensions(extension.Table),
	goldmark.WithParserOptions(
		parser.WithAutoHeadingID(),
		parser.WithASTTransformers(util.Prioritized(expectTransformer{}, 100)),
	),
)

// expectTransformer moves "expect: ..." link titles into data-expect.
type expectTransformer struct{}

func (expectTransformer) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*ast.Link); ok && entering {
			if claim, ok := strings.CutPrefix(string(l.Title), ExpectPrefix); ok {
				l.Title = nil
				l.SetAttributeString("data-expect", []byte(strings.TrimSpace(claim)))
			}
		}
		return ast.WalkContinue, nil
	})
}

// HTML renders a guide without its title heading (the page shows the title
// itself). Raw HTML in the Markdown is dropped, as goldmark does by default.
func HTML(src []byte) ([]byte, error) {
	s := string(src)
	if strings.HasPrefix(s, "# ") {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		} else {
			s = ""
		}
	}
	var buf bytes.Buffer
	if err := md.Convert([]byte(s), &buf); err != nil {
		return nil, err
	}
	// Raw HTML is omitted, and inline code never renders a <pre> or a
	// <table>, so these markers only come from code blocks and tables.
	out := strings.NewReplacer(
		"<pre><code", `<div class="code"><button type="button" class="copy-code">Copy</button><pre tabindex="0"><code`,
		"</code></pre>", "</code></pre></div>",
		"<table>", `<div class="table-wrap" tabindex="0" role="region" aria-label="Table">`+"<table>",
		"</table>", "</table></div>",
	).Replace(buf.String())
	return []byte(out), nil
}
