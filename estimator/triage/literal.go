package triage

import (
	"regexp"
	"regexp/syntax"
	"slices"
)

// Go's regexp skips to the next occurrence of a pattern's literal prefix
// with a substring search, but a pattern without one ("(CUDA|HIP|…)\s+out\s+
// of\s+memory") runs its NFA over every byte, at a few MB/s; where keywords
// are dense their windows cover the whole input and the heads took seconds
// per 10 MB. A leader finds the same matches through the pattern's
// alternatives that each begin with a literal.

// maxLeaders bounds how many alternatives a pattern is split into: each is
// searched on its own.
const maxLeaders = 32

// leader finds the matches of one head pattern.
type leader struct {
	re *regexp.Regexp
	// alts are re's alternatives in its order of preference, each with a
	// literal prefix; nil when re cannot be split so (then re itself runs).
	alts []*regexp.Regexp
}

// newLeader splits re into literal-led alternatives when it can.
func newLeader(re *regexp.Regexp) *leader {
	l := &leader{re: re}
	if prefix, _ := re.LiteralPrefix(); prefix != "" {
		return l // regexp skips to it already
	}
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return l
	}
	subs, ok := literalLed(tree)
	if !ok || len(subs) > maxLeaders {
		return l
	}
	for _, s := range subs {
		alt, err := regexp.Compile(s.String())
		if err != nil {
			return l
		}
		if prefix, _ := alt.LiteralPrefix(); prefix == "" {
			return l
		}
		l.alts = append(l.alts, alt)
	}
	return l
}

// literalLed rewrites re as alternatives, in re's order of preference,
// that each start with a case-sensitive literal and together match what re
// matches, each at a given start with the extent re prefers there:
// (A|B)X becomes AX, BX and (A)?X becomes AX, X. It reports false when a
// match may start otherwise (a class, a repetition, an assertion).
func literalLed(re *syntax.Regexp) ([]*syntax.Regexp, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || len(re.Rune) == 0 {
			return nil, false
		}
		return []*syntax.Regexp{re}, true
	case syntax.OpCapture:
		return literalLed(re.Sub[0])
	case syntax.OpAlternate:
		var out []*syntax.Regexp
		for _, sub := range re.Sub {
			alts, ok := literalLed(sub)
			if !ok {
				return nil, false
			}
			out = append(out, alts...)
		}
		return out, true
	case syntax.OpCharClass:
		// A class of a few runes, as (?:G|D)CU is parsed: one literal each.
		var out []*syntax.Regexp
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(out) == 4 {
					return nil, false
				}
				out = append(out, &syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{r}, Flags: re.Flags &^ syntax.FoldCase})
			}
		}
		return out, len(out) > 0
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return nil, false
		}
		first, rest := re.Sub[0], re.Sub[1:]
		then := func(head ...*syntax.Regexp) *syntax.Regexp {
			return &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: append(slices.Clip(head), rest...)}
		}
		switch first.Op {
		case syntax.OpLiteral:
			if _, ok := literalLed(first); !ok {
				return nil, false
			}
			return []*syntax.Regexp{re}, true
		case syntax.OpConcat, syntax.OpCapture:
			if first.Op == syntax.OpCapture {
				first = first.Sub[0]
			}
			if first.Op != syntax.OpConcat {
				return literalLed(then(first))
			}
			return literalLed(then(first.Sub...))
		case syntax.OpQuest:
			// Greedy: with the optional part first, then without it.
			with, ok := literalLed(then(first.Sub[0]))
			if !ok {
				return nil, false
			}
			if len(rest) == 0 {
				return nil, false // the empty match
			}
			without, ok := literalLed(then())
			if !ok {
				return nil, false
			}
			if first.Flags&syntax.NonGreedy != 0 {
				return append(without, with...), true
			}
			return append(with, without...), true
		case syntax.OpAlternate, syntax.OpCharClass:
			heads, ok := literalLed(first)
			if !ok {
				return nil, false
			}
			var out []*syntax.Regexp
			for _, h := range heads {
				alts, ok := literalLed(then(h))
				if !ok {
					return nil, false
				}
				out = append(out, alts...)
			}
			return out, true
		}
	}
	return nil, false
}

// findAll returns the spans of the successive non-overlapping matches of
// the pattern in s, as re.FindAllStringIndex(s, -1) does: the leftmost
// match, the first alternative there, then on from its end.
func (l *leader) findAll(s string) [][]int {
	if l.alts == nil {
		return l.re.FindAllStringIndex(s, -1)
	}
	// next[i] is alts[i]'s leftmost match at or after from[i], nil if none.
	next := make([][]int, len(l.alts))
	from := make([]int, len(l.alts))
	for i := range from {
		from[i] = -1
	}
	var out [][]int
	for pos := 0; pos <= len(s); {
		best := -1
		for i, alt := range l.alts {
			if from[i] < 0 || (next[i] != nil && next[i][0] < pos) {
				from[i] = pos
				next[i] = alt.FindStringIndex(s[pos:])
				if next[i] != nil {
					next[i][0] += pos
					next[i][1] += pos
				}
			}
			if next[i] != nil && (best < 0 || next[i][0] < next[best][0]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		m := next[best]
		out = append(out, []int{m[0], m[1]})
		pos = m[1] // alternatives start with a literal: never empty
	}
	return out
}
