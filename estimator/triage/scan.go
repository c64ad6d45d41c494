package triage

import (
	"bytes"
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
	// chunk is how much text scan takes heads from at a time: heads are
	// found chunk by chunk, in order, and scanning stops at the findings
	// limit, so a text of lookalike heads costs neither a list of millions
	// of heads nor a pass over the rest of the input.
	chunk = 64 << 10
)

// format is one message format: literal keywords (lower case) that must
// occur near a message, the head pattern where a message starts, and the
// parser that reads its body.
type format struct {
	name     string
	keywords []string
	head     *regexp.Regexp
	lead     *leader // finds head's matches; set with formats
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
// of any keyword (hits holds each keyword's offsets, in order) that
// overlaps [lo, hi), clipped to it.
func keywordWindows(keywords []string, hits map[string][]int, lo, hi int) []span {
	var ws []span
	for _, kw := range keywords {
		at := hits[kw]
		for j := sort.SearchInts(at, lo-len(kw)-windowAfter); j < len(at) && at[j]-windowBefore < hi; j++ {
			i := at[j]
			if w := (span{max(lo, i-windowBefore), min(hi, i+len(kw)+windowAfter)}); w.lo < w.hi {
				ws = append(ws, w)
			}
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

// allKeywordHits returns the offsets of every format's keywords in lower.
func allKeywordHits(lower string) map[string][]int {
	hits := map[string][]int{}
	for _, f := range formats() {
		for _, kw := range f.keywords {
			if _, ok := hits[kw]; !ok {
				hits[kw] = keywordHits(lower, kw)
			}
		}
	}
	return hits
}

// findHeads returns the heads of every format that start in [lo, hi),
// sorted by position (strong heads before weak ones at the same position).
// Head patterns run in the keyword windows clipped to [lo − windowBefore,
// hi), so each part of the text is searched about once however the scan
// cuts it into chunks.
func findHeads(text string, hits map[string][]int, lo, hi int) []head {
	var heads []head
	for _, f := range formats() {
		for _, w := range keywordWindows(f.keywords, hits, max(0, lo-windowBefore), hi) {
			// Spans first, groups then: finding spans alone is several
			// times faster over a long window, and heads are few.
			for _, span := range f.lead.findAll(text[w.lo:w.hi]) {
				at := w.lo + span[0]
				if at < lo {
					continue // found from the chunk before
				}
				m := f.head.FindStringSubmatchIndex(text[at:w.hi])
				if m == nil || m[0] != 0 {
					continue // cannot happen: the same match, found again
				}
				for i := range m {
					if m[i] >= 0 {
						m[i] += at
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

// scan finds and parses every message in original, at most limit of
// them, reading text, its normalized copy (normalize); it reports whether
// it stopped at the limit. It reads the text a chunk at a time: the heads
// that start in the chunk, plus those up to maxBody past it that may end a
// body.
func scan(original, text string, limit int) ([]Finding, bool) {
	hits := allKeywordHits(asciiLower(text))
	p := &parser{text: text}
	var out []Finding
	for lo := 0; lo < len(text); lo += chunk {
		hi := min(len(text), lo+chunk)
		heads := findHeads(text, hits, lo, min(len(text), hi+maxBody))
		var strong []int
		for _, h := range heads {
			if !h.f.weak {
				strong = append(strong, h.start)
			}
		}
		for _, h := range heads {
			if h.start >= hi {
				break // the next chunk's
			}
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
	}
	return out, false
}

// normalize returns text as the head patterns read it, every byte offset
// kept: wide Unicode spaces and terminal colour codes blanked to spaces,
// then line prefixes masked.
func normalize(text string) string {
	b := []byte(text)
	blankWideSpaces(b)
	blankTerminalColors(b)
	maskLinePrefixes(b)
	return string(b)
}

// prefixRes match text that belongs to a message but precedes its head on
// the same line: exception types, CAFFE_ENFORCE prefixes, TF status codes.
var prefixRes = []lazyRegexp{
	lazy(`\[enforce fail at [^\]\n]{0,300}\][^\n]{0,200}?$`),
	lazy(`(?:\(\d+\)\s*)?(?:Resource exhausted|RESOURCE_EXHAUSTED)\s*:\s*$`),
	lazy(`(?:[A-Za-z_][\w.]{0,100}(?:Error|Exception)(?: \(see above for traceback\))?\s*:\s*)+$`),
}

// extendPrefix moves start back over a same-line prefix that belongs to the
// message, never before floor.
func extendPrefix(text string, start, floor int) int {
	lo := max(floor, start-400)
	if nl := strings.LastIndexByte(text[lo:start], '\n'); nl >= 0 {
		lo += nl + 1
	}
	for _, re := range prefixRes {
		if m := re().FindStringIndex(text[lo:start]); m != nil && m[0] < m[1] {
			start = lo + m[0]
		}
	}
	return start
}

// linePrefix matches what logs and quoting put before each line of a
// message: markdown quotes, torchrun's "[rank7]: " and "[default0]:",
// mpirun's "[1,0]<stderr>:", vLLM's and Ray's "(VllmWorker rank=1 pid=254) ".
var linePrefix = lazy(`^[ \t]*(?:>[> \t]*|\[(?:rank|default)\d+\]:[ \t]*|\[\d+,\d+\]<std(?:out|err)>:[ \t]*|\(\w+ (?:rank|pid|TP|DP)[^)\n]{0,60}\)[ \t]*)`)

// maskLinePrefixes blanks line prefixes with spaces in place, keeping
// every byte offset, so a wrapped message still reads as one.
func maskLinePrefixes(b []byte) {
	for lo := 0; lo < len(b); {
		hi := bytes.IndexByte(b[lo:], '\n')
		if hi < 0 {
			hi = len(b)
		} else {
			hi += lo
		}
		i := lo
		for i < hi && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i < hi && (b[i] == '>' || b[i] == '[' || b[i] == '(') {
			if m := linePrefix().FindIndex(b[lo:min(hi, lo+100)]); m != nil {
				for j := lo + m[0]; j < lo+m[1]; j++ {
					if b[j] != '\t' {
						b[j] = ' '
					}
				}
			}
		}
		lo = hi + 1
	}
}

// wideSpaces are the Unicode spaces that web pages and chat tools put in
// copied text (no-break, figure, thin, narrow no-break, ideographic); each is
// blanked to as many ASCII spaces as it has bytes, so offsets stay intact.
var wideSpaces = [][]byte{[]byte("\u00a0"), []byte("\u2007"), []byte("\u2009"), []byte("\u202f"), []byte("\u3000")}

// blankWideSpaces turns every wide space in b into ASCII spaces of the
// same byte length.
func blankWideSpaces(b []byte) {
	for _, ws := range wideSpaces {
		for off := 0; ; {
			i := bytes.Index(b[off:], ws)
			if i < 0 {
				break
			}
			i += off
			for j := i; j < i+len(ws); j++ {
				b[j] = ' '
			}
			off = i + len(ws)
		}
	}
}

// blankTerminalColors blanks every ANSI colour code (SGR) in b to spaces,
// keeping offsets, so a coloured traceback reads like a plain one. A code
// is "[" digits (";" digits)* "m", with its ESC byte before it or with the
// ESC lost in copying ("[1;36m(VllmWorker rank=0 pid=7)[0;0m").
func blankTerminalColors(b []byte) {
	for off := 0; ; {
		i := bytes.IndexByte(b[off:], '[')
		if i < 0 {
			return
		}
		i += off
		off = i + 1
		n := sgrLen(b[i:])
		if n == 0 {
			continue
		}
		lo := i
		if lo > 0 && b[lo-1] == 0x1b {
			lo--
		}
		for j := lo; j < i+n; j++ {
			b[j] = ' '
		}
		off = i + n
	}
}

// sgrLen returns the length of the colour code "[" 1–3 digits (";" 1–3
// digits){0,4} "m" at the start of s, or 0.
func sgrLen(s []byte) int {
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
var sourceLine = lazy(`raise\s+[\w.]+\(\s*[fbrFBR]?["']$`)

// inSourceCode reports whether the head at start sits in a quoted string of
// a raise statement on its line (a traceback's source line, not the error).
func inSourceCode(text string, start int) bool {
	lo := max(0, start-200)
	if nl := strings.LastIndexByte(text[lo:start], '\n'); nl >= 0 {
		lo += nl + 1
	}
	return sourceLine().MatchString(text[lo:start])
}
