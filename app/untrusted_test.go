package app

import (
	"regexp"
	"strings"
	"testing"

	"oomscope/untrusted/hostile"
)

// TestShown: no hostile name keeps a control, escape or bidi character on
// the page, and each keeps the text a terminal would show.
func TestShown(t *testing.T) {
	bad := regexp.MustCompile("[\x00-\x1f\x7f\u0080-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\u2028\u2029]")
	for _, n := range hostile.Names() {
		got := shown(n.Text)
		if bad.MatchString(got) {
			t.Errorf("%s: %q keeps %q", n.Attack, got, bad.FindString(got))
		}
		visible := "PWN"
		if n.Attack == "OSC window title" {
			visible = "frame" // PWN is the title, inside the escape sequence
		}
		if !strings.Contains(got, visible) {
			t.Errorf("%s: %q lost its text %q", n.Attack, got, visible)
		}
	}
	lines := shownLines([]string{"a\u202eb", "c\x1b[2Jd"})
	if strings.Join(lines, "|") != "ab|cd" {
		t.Errorf("shownLines = %q", lines)
	}
}
