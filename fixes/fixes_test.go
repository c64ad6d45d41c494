package fixes

import (
	"strings"
	"testing"

	"oomscope/content"
)

// TestCatalog checks every fix is complete: a unique id, a title, code,
// a known language, a cost rank, and a guide path of the form
// /guides/<slug>#<id>.
func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, fx := range All("") {
		if seen[fx.ID] {
			t.Errorf("duplicate id %q", fx.ID)
		}
		seen[fx.ID] = true
		if fx.Title == "" || fx.Why == "" || fx.Code == "" {
			t.Errorf("%s: empty title, why or code", fx.ID)
		}
		if fx.Lang != "bash" && fx.Lang != "python" {
			t.Errorf("%s: language %q", fx.ID, fx.Lang)
		}
		if fx.Cost < CostSetting || fx.Cost > CostRestructure {
			t.Errorf("%s: cost %d", fx.ID, fx.Cost)
		}
		if !strings.HasPrefix(fx.Guide, "/guides/") || !strings.Contains(fx.Guide, "#") || fx.Guide != GuidePath(fx.ID) {
			t.Errorf("%s: guide %q", fx.ID, fx.Guide)
		}
		if strings.Contains(fx.Code, "{dev}") {
			t.Errorf("%s: placeholder left in %q", fx.ID, fx.Code)
		}
	}
	if len(seen) != len(IDs()) {
		t.Errorf("All has %d fixes, IDs %d", len(seen), len(IDs()))
	}
}

// TestGuideSections checks that every guide section a fix links to is a
// section of a guide of the site: the guide exists and has a second-level
// heading with that id.
func TestGuideSections(t *testing.T) {
	for _, sec := range Guides() {
		slug, id, ok := strings.Cut(sec, "#")
		if !ok || id == "" {
			t.Errorf("fixes link to %q, not a guide section", sec)
			continue
		}
		g, ok := content.Find(slug)
		if !ok {
			t.Errorf("fixes link to guide %q, which content does not have", slug)
			continue
		}
		found := false
		for _, h := range g.Headings {
			found = found || h.ID == id
		}
		if !found {
			t.Errorf("fixes link to /guides/%s, but guide %q has no section %q", sec, slug, id)
		}
	}
}

// TestDevice checks that the device family reaches the code.
func TestDevice(t *testing.T) {
	for _, tt := range []struct{ id, dev, want string }{
		{"autocast", "", `device_type="cuda"`},
		{"autocast", "xpu", `device_type="xpu"`},
		{"empty-cache", "mps", "torch.mps.empty_cache()"},
	} {
		if fx := Must(tt.id, tt.dev); !strings.Contains(fx.Code, tt.want) {
			t.Errorf("%s for %q: code %q lacks %q", tt.id, tt.dev, fx.Code, tt.want)
		}
	}
	if _, ok := Get("no-such-fix", ""); ok {
		t.Error("Get found an unknown id")
	}
}
