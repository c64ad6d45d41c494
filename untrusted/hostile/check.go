package hostile

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
)

// markdown renders GitHub-flavoured Markdown with raw HTML passed through,
// as a permissive renderer of internal docs would, so that markup a name
// smuggled in shows up as elements.
var markdown = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough),
	goldmark.WithRendererOptions(html.WithUnsafe()))

// reportTags are the elements a report may render to.
var reportTags = map[string]bool{
	"h2": true, "h3": true, "p": true, "em": true, "strong": true, "code": true, "pre": true,
	"table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
	"ul": true, "li": true, "details": true, "summary": true,
}

var tagRE = regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>`)

// alignRE is the only attribute a report has: a table column's alignment.
var alignRE = regexp.MustCompile(`^ style="text-align:(left|right|center)"$`)

// MarkdownProblems renders a Markdown report and lists what a hostile name
// must not be able to cause in it: an element other than the report's own
// (headings h2 and h3, paragraphs, tables, lists, code, details and
// summary), an attribute other than a table column's alignment, and a
// count of h2, h3, details or li elements other than want says (the
// report's own structure makes exactly those).
func MarkdownProblems(md string, want map[string]int) []string {
	var b bytes.Buffer
	if err := markdown.Convert([]byte(md), &b); err != nil {
		return []string{err.Error()}
	}
	var problems []string
	count := map[string]int{}
	for _, m := range tagRE.FindAllStringSubmatch(b.String(), -1) {
		closing, name, attrs := m[1] == "/", strings.ToLower(m[2]), m[3]
		if !reportTags[name] {
			problems = append(problems, "element "+m[0])
			continue
		}
		if closing {
			continue
		}
		count[name]++
		if attrs != "" && !((name == "th" || name == "td") && alignRE.MatchString(attrs)) {
			problems = append(problems, "attribute in "+m[0])
		}
	}
	for tag, n := range want {
		if count[tag] != n {
			problems = append(problems, fmt.Sprintf("%d <%s> elements, want %d", count[tag], tag, n))
		}
	}
	return problems
}
