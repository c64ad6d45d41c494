package triage

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// sizePattern matches a printed size as two groups, number and unit:
// "21.56 MiB", "0 bytes", "9.07 GB", "372.76MiB", "0B".
const sizePattern = `(\d+(?:\.\d+)?)\s*(bytes|[KMGTPE]i?B|B)\b`

// lazyRegexp is a regular expression compiled on its first use (made by
// lazy or rx). Patterns are compiled so, not at package initialisation: programs that
// import the package without triaging text (the snapshot worker, the
// estimator page until a message is pasted) do not pay for them at start.
type lazyRegexp = func() *regexp.Regexp

// lazyPatterns are every pattern made by lazy, for the test that compiles
// them all.
var lazyPatterns []string

// lazy returns pattern, compiled on first use (a bad pattern panics then,
// as regexp.MustCompile does). It is not inlined: inlined into each of the
// package's ~90 patterns, sync.OnceValue's closures made the snapshot
// worker ~290 KB larger.
//
//go:noinline
func lazy(pattern string) lazyRegexp {
	lazyPatterns = append(lazyPatterns, pattern)
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

// rx is lazy with SIZE standing for sizePattern.
func rx(pattern string) lazyRegexp {
	return lazy(strings.ReplaceAll(pattern, "SIZE", sizePattern))
}

// msg reads the fields of one message body.
type msg struct {
	text string // the whole input
	lo   int    // absolute start of the body
	hi   int    // absolute end of the body
	end  int    // absolute end of the last item read
	f    *Finding
}

func newMsg(p *parser, h head, f *Finding) *msg {
	f.Start = h.start
	return &msg{text: p.text, lo: h.start, hi: p.bound, end: h.end, f: f}
}

// find returns the absolute submatch indexes of re's first match in the
// body, or nil; a match extends the message's end.
func (m *msg) find(re *regexp.Regexp) []int {
	return m.findFrom(re, m.lo)
}

// findFrom is find starting at absolute offset from.
func (m *msg) findFrom(re *regexp.Regexp, from int) []int {
	if from >= m.hi {
		return nil
	}
	sub := re.FindStringSubmatchIndex(m.text[from:m.hi])
	if sub == nil {
		return nil
	}
	for i := range sub {
		if sub[i] >= 0 {
			sub[i] += from
		}
	}
	m.end = max(m.end, sub[1])
	return sub
}

// findAll returns every match of re in the body.
func (m *msg) findAll(re *regexp.Regexp) [][]int {
	all := re.FindAllStringSubmatchIndex(m.text[m.lo:m.hi], -1)
	for _, sub := range all {
		for i := range sub {
			if sub[i] >= 0 {
				sub[i] += m.lo
			}
		}
		m.end = max(m.end, sub[1])
	}
	return all
}

// group returns submatch g of sub, or "".
func (m *msg) group(sub []int, g int) string {
	if sub == nil || 2*g+1 >= len(sub) || sub[2*g] < 0 {
		return ""
	}
	return m.text[sub[2*g]:sub[2*g+1]]
}

// size reads the size in groups g (number) and g+1 (unit) of sub, records it
// as a field and returns it; nil when sub is nil or the size is unreadable.
func (m *msg) size(key, label string, sub []int, g int) *Bytes {
	num, unit := m.group(sub, g), m.group(sub, g+1)
	if num == "" {
		return nil
	}
	b, err := parseSize(num, unit)
	rule := unitRule(num, unit)
	switch {
	case err == errTooLong:
		rule = saturatedRule
	case err != nil:
		return nil
	}
	m.addField(Field{Key: key, Label: label, Printed: num + " " + unit, Bytes: &b, Rule: rule}, sub)
	return &b
}

// exact reads an exact byte count (digits, possibly with thousands commas)
// in group g of sub.
func (m *msg) exact(key, label string, sub []int, g int) *Bytes {
	num := strings.ReplaceAll(m.group(sub, g), ",", "")
	if num == "" {
		return nil
	}
	b, err := scaleDecimal(num, 1)
	rule := "printed in bytes"
	switch {
	case err == errTooLong:
		rule = saturatedRule
	case err != nil:
		return nil
	}
	m.addField(Field{Key: key, Label: label, Printed: m.group(sub, g) + " bytes", Bytes: &b, Rule: rule}, sub)
	return &b
}

// integer reads a decimal integer in group g of sub and records it.
func (m *msg) integer(key, label string, sub []int, g int) *int64 {
	s := m.group(sub, g)
	if s == "" || len(s) > 18 {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	fv := float64(v)
	m.addField(Field{Key: key, Label: label, Printed: s, Value: &fv}, sub)
	return &v
}

// index reads a device index in group g of sub.
func (m *msg) index(sub []int, g int) *int {
	v := m.integer("gpu_index", "Device index", sub, g)
	if v == nil || *v > 1<<20 {
		return nil
	}
	i := int(*v)
	return &i
}

// decimal reads a decimal number (not a size) in group g of sub.
func (m *msg) decimal(key, label string, sub []int, g int) *float64 {
	s := m.group(sub, g)
	if s == "" || len(s) > maxNumberDigits {
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	m.addField(Field{Key: key, Label: label, Printed: s, Value: &v}, sub)
	return &v
}

func (m *msg) addField(fd Field, sub []int) {
	fd.Start, fd.End = sub[0], sub[1]
	fd.Phrase = m.text[sub[0]:sub[1]]
	m.f.Fields = append(m.f.Fields, fd)
}

// extend moves the message end over re when it matches right at the end
// (after optional whitespace), e.g. a hint sentence or a suffix line.
func (m *msg) extend(re *regexp.Regexp) bool {
	if m.end >= m.hi {
		return false
	}
	sub := re.FindStringIndex(m.text[m.end:m.hi])
	if sub == nil || sub[0] != 0 {
		return false
	}
	m.end += sub[1]
	return true
}

// done finishes the finding, sorting its fields into message order.
func (m *msg) done() (Finding, bool) {
	m.f.End = m.end
	sortFields(m.f.Fields)
	return *m.f, true
}

func sortFields(fs []Field) {
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].Start < fs[j-1].Start; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}
