package analysis

import (
	"encoding/json"
	"testing"

	"oomscope/bytesize"
)

// TestText checks that a sentence's byte amounts follow the unit and that
// JSON carries GiB, or the marked amounts for the page.
func TestText(t *testing.T) {
	s := textf("peak %s, growth %s, floor %s", sz(1<<30), szSigned(-(3 << 20)), sz(1500))
	if got, want := s.Format(bytesize.Binary), "peak 1.00 GiB, growth "+bytesize.Signed(-(3<<20), bytesize.Binary)+", floor 1.46 KiB"; got != want {
		t.Errorf("GiB: %q, want %q", got, want)
	}
	if got := s.Format(bytesize.Decimal); got != "peak "+bytesize.Format(1<<30, bytesize.Decimal)+", growth "+bytesize.Signed(-(3<<20), bytesize.Decimal)+", floor "+bytesize.Format(1500, bytesize.Decimal) {
		t.Errorf("GB: %q", got)
	}
	b, _ := json.Marshal(struct{ W Text }{s})
	if string(b) != `{"W":"`+s.String()+`"}` {
		t.Errorf("JSON %s", b)
	}
	RawTextJSON = true
	defer func() { RawTextJSON = false }()
	b, _ = json.Marshal(struct{ W Text }{s})
	var back struct{ W Text }
	if err := json.Unmarshal(b, &back); err != nil || back.W != s || back.W.Format(bytesize.Decimal) != s.Format(bytesize.Decimal) {
		t.Errorf("raw JSON %s read back as %q", b, back.W)
	}
	if Text("no amounts").Format(bytesize.Decimal) != "no amounts" || Text("broken \x0012").String() != "broken \x0012" {
		t.Error("texts without (whole) markers must pass through")
	}
}
