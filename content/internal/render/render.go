// Package render turns a guide's Markdown into the HTML embedded in the site.
// It runs at build time only (go generate), so the Markdown renderer is not
// linked into the browser's wasm.
package render

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

var md = goldmark.New(goldmark.WithExtensions(extension.Table))

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
	return buf.Bytes(), nil
}
