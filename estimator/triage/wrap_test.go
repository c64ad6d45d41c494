package triage

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// rewrap joins the words of s with single spaces and breaks the result into
// lines of at most width bytes, each starting with prefix: a message as a
// terminal, a mail client or a log collector hard-wraps it.
func rewrap(s string, width int, prefix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	col := 0
	for i, w := range strings.Fields(s) {
		switch {
		case i == 0:
		case col+1+len(w) > width:
			b.WriteString("\n" + prefix)
			col = 0
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	return b.String()
}

// TestRealMessagesWrapped re-wraps every real message (the shared examples
// and realPath) at 70 columns, bare and behind the line prefixes of
// torchrun, Markdown quotes and vLLM workers: each must still be one message
// with the same numbers and the cause it has unwrapped. NCCL's debug output is left out: each of its lines
// is one log record, and wrapping one makes two records.
func TestRealMessagesWrapped(t *testing.T) {
	exs := append(loadExamples(t), loadJSONL(t, realPath)...)
	for _, prefix := range []string{"", "[rank0]: ", "> ", "(VllmWorker rank=1 pid=254) "} {
		for _, ex := range exs {
			if ex.Kind == "nccl" {
				continue
			}
			text := rewrap(ex.Text, 70, prefix)
			res := Triage(text, Options{})
			if len(res.Findings) != 1 {
				t.Errorf("prefix %q, %s: %d messages in %q, want 1", prefix, ex.Source, len(res.Findings), text)
				continue
			}
			raw, err := json.Marshal(res.Findings[0])
			if err != nil {
				t.Fatal(err)
			}
			got := decodeNumbers(t, raw).(map[string]any)
			if plain := Triage(ex.Text, Options{}); len(plain.Findings) == 1 && plain.Findings[0].Cause != res.Findings[0].Cause {
				t.Errorf("prefix %q, %s: cause %s, unwrapped %s", prefix, ex.Source, res.Findings[0].Cause, plain.Findings[0].Cause)
			}
			for k, want := range ex.Expect {
				if k == "why" || k == "cause" {
					continue
				}
				if w := decodeNumbers(t, want); !reflect.DeepEqual(got[k], w) {
					t.Errorf("prefix %q, %s: %s = %v, want %v", prefix, ex.Source, k, got[k], w)
				}
			}
		}
	}
}
