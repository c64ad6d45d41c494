package triage

import (
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"oomscope/untrusted/hostile"
)

// TestLeaderSplits checks which head patterns are searched through
// literal-led alternatives: every one without a literal prefix but the
// fragment head, whose matches start with any digit.
func TestLeaderSplits(t *testing.T) {
	var whole []string
	for _, f := range formats() {
		if prefix, _ := f.head.LiteralPrefix(); prefix == "" && f.lead.alts == nil {
			whole = append(whole, f.name)
		}
	}
	if want := []string{"fragment"}; !slices.Equal(whole, want) {
		t.Errorf("heads searched byte by byte: %v, want %v", whole, want)
	}
	if n := len(newLeader(allocHead()).alts); n != 12 {
		t.Errorf("alloc head: %d alternatives, want 12 (11 backends, one sharing M, and IPEX's)", n)
	}
}

// TestLeaderAgrees compares leader.findAll with FindAllStringIndex on
// patterns that exercise each rewrite (alternation, optional parts greedy
// and lazy, captures, small classes, alternatives that tie at one start or
// overlap) over random texts of their letters.
func TestLeaderAgrees(t *testing.T) {
	patterns := []string{
		`(ab|y|a)c`, `(a|y|ab)c?`, `(?:x|y)?ab+`, `(?:x|y)??ab`, `(xa)?a(b|bc)`, `[xy]a|ya`, `(a(?:b|c)|y)(?:\s+d)?`,
		`(?:(x)\s*:\s*)?ab\b`, `ab|b|abc`, `(?:a|b)(?:c|d)e?`, `a\s+b|y|a`, `ab|y|a\s*b`, `(?:ab)?a|y`, `(?:ab)??a|y`,
	}
	r := rand.New(rand.NewPCG(3, 4))
	letters := "abcdexy :"
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		l := newLeader(re)
		if l.alts == nil {
			t.Errorf("%s: not split", p)
			continue
		}
		for range 2000 {
			b := make([]byte, r.IntN(24))
			for i := range b {
				b[i] = letters[r.IntN(len(letters))]
			}
			got, want := l.findAll(string(b)), re.FindAllStringIndex(string(b), -1)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s on %q: got %v, want %v", p, b, got, want)
			}
		}
	}
	for _, p := range []string{`a*b`, `\bab`, `(?i)ab`, `[a-z]b`, `a?`, `^ab`} {
		if newLeader(regexp.MustCompile(p)).alts != nil {
			t.Errorf("%s: split, but its matches need not start with a literal", p)
		}
	}
}

// FuzzLeader checks that every head's leader finds what its pattern finds.
func FuzzLeader(f *testing.F) {
	for _, tc := range formatCases {
		f.Add(tc.text)
	}
	for _, p := range hostile.Pastes(4096) {
		f.Add(p.Text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, fm := range formats() {
			got, want := fm.lead.findAll(text), fm.head.FindAllStringIndex(text, -1)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: got %v, want %v", fm.name, got, want)
			}
		}
	})
}
