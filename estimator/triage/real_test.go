package triage

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// realPath holds real messages from public GitHub issues that are not in the
// shared examples, each with the numbers read from its text by hand (bytes =
// round-half-up of value × binary unit), the cause that the rules of
// docs/triage.md#causes give for the message's own numbers, and its source URL.
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

// TestRealMessagesConcatenated pastes every message of realPath into one
// log (their surrounding tracebacks and prose included), separated by a
// blank line, an unrelated log line or a bare newline: each must still be
// found on its own with its own numbers and cause.
func TestRealMessagesConcatenated(t *testing.T) {
	exs := loadJSONL(t, realPath)
	var texts []string
	for _, ex := range exs {
		texts = append(texts, ex.Text)
	}
	for _, sep := range []string{"\n\n", "\nINFO step 12 done\n", "\n"} {
		res := Triage(strings.Join(texts, sep), Options{})
		if len(res.Findings) != len(exs) {
			t.Errorf("separator %q: %d messages, want %d", sep, len(res.Findings), len(exs))
			continue
		}
		for i, ex := range exs {
			raw, err := json.Marshal(res.Findings[i])
			if err != nil {
				t.Fatal(err)
			}
			got := decodeNumbers(t, raw).(map[string]any)
			for k, want := range ex.Expect {
				if w := decodeNumbers(t, want); k != "why" && !reflect.DeepEqual(got[k], w) {
					t.Errorf("separator %q, %s: %s = %v, want %v", sep, ex.Source, k, got[k], w)
				}
			}
		}
	}
}
