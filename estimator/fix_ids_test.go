package estimator

import (
	"testing"

	"oomscope/fixes"
)

// TestRungFixIDs checks that every rung of both ladders names a fix of the
// shared catalog, and that the map holds no stale rung.
func TestRungFixIDs(t *testing.T) {
	seen := map[string]bool{}
	for _, ladder := range [][]candidate{trainLadder, inferLadder, serveLadder} {
		for _, rg := range ladder {
			seen[rg.name] = true
			id, ok := rungFix[rg.name]
			if !ok {
				t.Errorf("rung %q has no catalog fix id", rg.name)
				continue
			}
			if _, ok := fixes.Get(id, ""); !ok {
				t.Errorf("rung %q maps to %q, not in the catalog", rg.name, id)
			}
		}
	}
	for name := range rungFix {
		if !seen[name] {
			t.Errorf("rungFix names %q, which no ladder has", name)
		}
	}
}

// TestFixesCarryCatalogID checks that an estimate's fix ladder reports the
// catalog id of each rung it applied.
func TestFixesCarryCatalogID(t *testing.T) {
	r := DefaultRequest()
	r.GPU = "rtx-4090-24gb"
	rep, err := Advise(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Fixes) == 0 {
		t.Fatal("expected fixes for an 8B full fine-tune on 24 GB")
	}
	for _, f := range rep.Fixes {
		if f.FixID != rungFix[f.Name] || f.FixID == "" {
			t.Errorf("fix %q: id %q, want %q", f.Name, f.FixID, rungFix[f.Name])
		}
	}
}
