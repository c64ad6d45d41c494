package triage

import (
	"regexp"
	"sort"
	"strings"
)

// Limits that keep Triage linear and bounded on any input.
const (
	// maxFindings caps the findings returned for one input.
	maxFindings = 200
	// maxBody bounds how far past its head a message's fields are searched.
	maxBody = 4096
	// windowBefore and windowAfter bound the text around a keyword hit in
	// which a format's head pattern is searched.
	windowBefore = 320
	windowAfter  = 320
)

// format is one message format: literal keywords (lower case) that must
// occur near a message, the head pattern where a message starts, and the
// parser that reads its body.
type format struct {
	name     string
	keywords []string
	head     *regexp.Regexp
	// weak heads (a bare "Tried to allocate …", a fragment of fields) do not
	// end the body of the message before them.
	weak  bool
	parse func(p *parser, h head) (Finding, bool)
}

// head is one match of a format's head pattern.
type head struct {
	f     *format
	start int
	end   int
	sub   []int // submatch indexes, absolute
}

// parser holds the input while it is scanned.
type parser struct {
	text     string
	consumed int // end of the last accepted finding
	bound    int // where the current message's body must end
}

// asciiLower lower-cases ASCII letters only, keeping byte offsets intact
// (strings.ToLower may change lengths on invalid UTF-8).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// span is a half-open byte range.
type span struct{ lo, hi int }

// keywordWindows returns the merged windows of text around each occurrence
// of any keyword in lower; hits caches each keyword's occurrences.
func keywordWindows(lower string, keywords []string, hits map[string][]int) []span {
	var ws []span
	for _, kw := range keywords {
		at, ok := hits[kw]
		if !ok {
			at = keywordHits(lower, kw)
			hits[kw] = at
		}
		for _, i := range at {
			ws = append(ws, span{max(0, i-windowBefore), min(len(lower), i+len(kw)+windowAfter)})
		}
	}
	if len(ws) == 0 {
		return nil
	}
	sort.Slice(ws, func(a, b int) bool { return ws[a].lo < ws[b].lo })
	out := ws[:1]
	for _, w := range ws[1:] {
		last := &out[len(out)-1]
		if w.lo <= last.hi {
			last.hi = max(last.hi, w.hi)
			continue
		}
		out = append(out, w)
	}
	return out
}

// keywordHits returns the offsets where kw occurs in lower, its spaces
// matching any run of whitespace: a message hard-wrapped or indented by a
// terminal ("out of\n            memory") still shows its keywords.
func keywordHits(lower, kw string) []int {
	first, rest, _ := strings.Cut(kw, " ")
	var at []int
	for off := 0; ; {
		i := strings.Index(lower[off:], first)
		if i < 0 {
			return at
		}
		i += off
		off = i + len(first)
		if rest == "" || followsSpaced(lower[off:], rest) {
			at = append(at, i)
		}
	}
}

// followsSpaced reports whether s starts with whitespace and then the words
// of rest, each separated from the next by whitespace.
func followsSpaced(s, rest string) bool {
	for rest != "" {
		w, more, _ := strings.Cut(rest, " ")
		n := 0
		for n < len(s) && (s[n] == ' ' || s[n] == '\t' || s[n] == '\r' || s[n] == '\n') {
			n++
		}
		if n == 0 || !strings.HasPrefix(s[n:], w) {
			return false
		}
		s, rest = s[n+len(w):], more
	}
	return true
}

// findHeads returns every head of every format, sorted by position (strong
// heads before weak ones at the same position).
func findHeads(text string) []head {
	lower := asciiLower(text)
	var heads []head
	hits := map[string][]int{}
	for _, f := range formats {
		for _, w := range keywordWindows(lower, f.keywords, hits) {
			for _, m := range f.head.FindAllStringSubmatchIndex(text[w.lo:w.hi], -1) {
				for i := range m {
					if m[i] >= 0 {
						m[i] += w.lo
					}
				}
				heads = append(heads, head{f: f, start: m[0], end: m[1], sub: m})
			}
		}
	}
	sort.SliceStable(heads, func(a, b int) bool {
		if heads[a].start != heads[b].start {
			return heads[a].start < heads[b].start
		}
		return !heads[a].f.weak && heads[b].f.weak
	})
	return heads
}

// scan finds and parses every message in text, at most limit of them; it
// reports whether it stopped at the limit.
func scan(original string, limit int) ([]Finding, bool) {
	text := maskLinePrefixes(blankTerminalColors(blankWideSpaces(original)))
	heads := findHeads(text)
	var strong []int
	for _, h := range heads {
		if !h.f.weak {
			strong = append(strong, h.start)
		}
	}
	p := &parser{text: text}
	var out []Finding
	for _, h := range heads {
		if h.start < p.consumed || inSourceCode(text, h.start) {
			continue
		}
		if len(out) >= limit {
			return out, true
		}
		// The body ends at the next strong head after this head's own match.
		i := sort.SearchInts(strong, h.end)
		p.bound = min(len(text), h.start+maxBody)
		if i < len(strong) && strong[i] < p.bound {
			p.bound = strong[i]
		}
		f, ok := h.f.parse(p, h)
		if !ok {
			continue
		}
		f.Start = extendPrefix(text, f.Start, p.consumed)
		f.Text = original[f.Start:f.End]
		for i := range f.Fields {
			f.Fields[i].Phrase = original[f.Fields[i].Start:f.Fields[i].End]
		}
		p.consumed = f.End
		out = append(out, f)
	}
	return out, false
}

// prefixRes match text that belongs to a message but precedes its head on
// the same line: exception types, CAFFE_ENFORCE prefixes, TF status codes.
var prefixRes = []*regexp.Regexp{
	regexp.MustCompile(`\[enforce fail at [^\]\n]{0,300}\][^\n]{0,200}?$`),
	regexp.MustCompile(`(?:\(\d+\)\s*)?(?:Resource exhausted|RESOURCE_EXHAUSTED)\s*:\s*$`),
	regexp.MustCompile(`(?:[A-Za-z_][\w.]{0,100}(?:Error|Exception)(?: \(see above for traceback\))?\s*:\s*)+$`),
}

// extendPrefix moves start back over a same-line prefix that belongs to the
// message, never before floor.
func extendPrefix(text string, start, floor int) int {
	lo := max(floor, start-400)
	if nl := strings.LastIndexByte(text[lo:start], '\n'); nl >= 0 {
		lo += nl + 1
	}
	for _, re := range prefixRes {
		if m := re.FindStringIndex(text[lo:start]); m != nil && m[0] < m[1] {
			start = lo + m[0]
		}
	}
	return start
}

// linePrefix matches what logs and quoting put before each line of a
// message: markdown quotes, torchrun's "[rank7]: " and "[default0]:",
// mpirun's "[1,0]<stderr>:", vLLM's and Ray's "(VllmWorker rank=1 pid=254) ".
var linePrefix = regexp.MustCompile(`^[ \t]*(?:>[> \t]*|\[(?:rank|default)\d+\]:[ \t]*|\[\d+,\d+\]<std(?:out|err)>:[ \t]*|\(\w+ (?:rank|pid|TP|DP)[^)\n]{0,60}\)[ \t]*)`)

// maskLinePrefixes blanks line prefixes with spaces, keeping every byte
// offset, so a wrapped message still reads as one.
func maskLinePrefixes(text string) string {
	var b []byte
	for lo := 0; lo < len(text); {
		hi := strings.IndexByte(text[lo:], '\n')
		if hi < 0 {
			hi = len(text)
		} else {
			hi += lo
		}
		i := lo
		for i < hi && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
		if i < hi && (text[i] == '>' || text[i] == '[' || text[i] == '(') {
			if m := linePrefix.FindStringIndex(text[lo:min(hi, lo+100)]); m != nil {
				if b == nil {
					b = []byte(text)
				}
				for j := lo + m[0]; j < lo+m[1]; j++ {
					if b[j] != '\t' {
						b[j] = ' '
					}
				}
			}
		}
		lo = hi + 1
	}
	if b == nil {
		return text
	}
	return string(b)
}

// wideSpaces are the Unicode spaces that web pages and chat tools put in
// copied text (no-break, figure, thin, narrow no-break, ideographic); each is
// blanked to as many ASCII spaces as it has bytes, so offsets stay intact.
var wideSpaces = []string{"\u00a0", "\u2007", "\u2009", "\u202f", "\u3000"}

// blankWideSpaces returns text with every wide space turned into ASCII
// spaces of the same byte length.
func blankWideSpaces(text string) string {
	for _, ws := range wideSpaces {
		if strings.Contains(text, ws) {
			text = strings.ReplaceAll(text, ws, strings.Repeat(" ", len(ws)))
		}
	}
	return text
}

// blankTerminalColors returns text with every ANSI colour code (SGR) blanked
// to spaces, keeping offsets, so a coloured traceback reads like a plain
// one. A code is "[" digits (";" digits)* "m", with its ESC byte before it or
// with the ESC lost in copying ("[1;36m(VllmWorker rank=0 pid=7)[0;0m").
func blankTerminalColors(text string) string {
	var b []byte
	for off := 0; ; {
		i := strings.IndexByte(text[off:], '[')
		if i < 0 {
			break
		}
		i += off
		off = i + 1
		n := sgrLen(text[i:])
		if n == 0 {
			continue
		}
		lo := i
		if lo > 0 && text[lo-1] == 0x1b {
			lo--
		}
		if b == nil {
			b = []byte(text)
		}
		for j := lo; j < i+n; j++ {
			b[j] = ' '
		}
		off = i + n
	}
	if b == nil {
		return text
	}
	return string(b)
}

// sgrLen returns the length of the colour code "[" 1–3 digits (";" 1–3
// digits){0,4} "m" at the start of s, or 0.
func sgrLen(s string) int {
	i, groups := 1, 0
	for groups < 5 {
		d := 0
		for i < len(s) && d < 3 && '0' <= s[i] && s[i] <= '9' {
			i++
			d++
		}
		if d == 0 {
			return 0
		}
		groups++
		switch {
		case i < len(s) && s[i] == 'm':
			return i + 1
		case i < len(s) && s[i] == ';':
			i++
		default:
			return 0
		}
	}
	return 0
}

// sourceLine matches a line of code that raises the message, as tracebacks
// quote it: raise ValueError("No available memory for the cache blocks. "
var sourceLine = regexp.MustCompile(`raise\s+[\w.]+\(\s*[fbrFBR]?["']$`)

// inSourceCode reports whether the head at start sits in a quoted string of
// a raise statement on its line (a traceback's source line, not the error).
func inSourceCode(text string, start int) bool {
	lo := max(0, start-200)
	if nl := strings.LastIndexByte(text[lo:start], '\n'); nl >= 0 {
		lo += nl + 1
	}
	return sourceLine.MatchString(text[lo:start])
}
