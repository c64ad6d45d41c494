package triage

import (
	"strings"
	"testing"
)

// realPath holds real messages from public GitHub issues that are not in the
// shared examples, each with the numbers read from its text by hand (bytes =
// round-half-up of value × binary unit), the cause that the rules of
// oom-formats.md §9 give for the message's own numbers, and its source URL.
const realPath = "testdata/real-2.jsonl"

// TestRealMessages checks every message of realPath like the shared
// examples: one finding, its kind, every expected number, no unexpected
// number, and the cause.
func TestRealMessages(t *testing.T) {
	exs := loadJSONL(t, realPath)
	if len(exs) < 40 {
		t.Fatalf("%s holds %d messages, want at least 40", realPath, len(exs))
	}
	keys := append(append([]string{}, numberKeys...), extraNumberKeys...)
	for _, ex := range exs {
		if !strings.HasPrefix(ex.Source, "https://github.com/") {
			t.Errorf("record %q: source must be the issue's URL", ex.Source)
		}
		t.Run(strings.TrimPrefix(ex.Source, "https://github.com/"), func(t *testing.T) {
			checkExample(t, ex, keys)
		})
	}
}
