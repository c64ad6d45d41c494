package app

import (
	"net/url"
	"strings"
	"testing"

	"oomscope/estimator/triage"
)

// TestTriageExamples checks that each built-in example shows the situation
// its title promises.
func TestTriageExamples(t *testing.T) {
	want := map[string]triage.Cause{
		"frag": triage.CauseFragmentation, "other": triage.CauseOtherProcess, "full": triage.CauseCapacity,
		"bogus": triage.CauseBogusSize, "mps": triage.CauseCapacity, "vllm": triage.CauseKVCacheBudget, "cpu": triage.CauseCPURAM,
	}
	if len(want) != len(triageExamples) {
		t.Fatalf("%d examples, %d expectations", len(triageExamples), len(want))
	}
	for _, ex := range triageExamples {
		res := triage.Triage(ex.Text, triage.Options{})
		if len(res.Findings) != 1 {
			t.Errorf("%s: %d messages, want 1", ex.ID, len(res.Findings))
			continue
		}
		if got := res.Findings[0].Cause; got != want[ex.ID] {
			t.Errorf("%s: cause %s, want %s (%s)", ex.ID, got, want[ex.ID], res.Findings[0].Why)
		}
		if _, ok := exampleByID(ex.ID); !ok {
			t.Errorf("exampleByID(%q) not found", ex.ID)
		}
	}
	if _, ok := exampleByID("nope"); ok {
		t.Error("exampleByID found an unknown id")
	}
}

func TestBigCommas(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "999": "999", "1000": "1,000", "3758096384": "3,758,096,384",
		"-1234567": "-1,234,567", "123456789012345678901234": "123,456,789,012,345,678,901,234"} {
		if got := bigCommas(in); got != want {
			t.Errorf("bigCommas(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestTriageStateAsCLI: the page reads when and the setup from its URL as
// the CLI reads --when and --setup: the same values, and a when the CLI
// refuses is reported, not silently dropped.
func TestTriageStateAsCLI(t *testing.T) {
	q := url.Values{"when": {"eval"}, "model": {"llama-3.1-8b"}, "batch": {"4"}, "seq": {"2048"}, "example": {"frag"}, "unit": {"gb"}}
	when, whenErr, setup, setupErr := triageState(q)
	wantWhen, _ := triage.ParseWhen("eval")
	cli, err := triage.ParseSetup(url.Values{"model": {"llama-3.1-8b"}, "batch": {"4"}, "seq": {"2048"}}, true)
	if err != nil || cli == nil {
		t.Fatalf("ParseSetup: %v", err)
	}
	if when != wantWhen || whenErr != "" || setupErr != "" || setup.Query().Encode() != cli.Query().Encode() {
		t.Errorf("page state %q %q %q %q, CLI %q %q", when, whenErr, setup.Query().Encode(), setupErr, wantWhen, cli.Query().Encode())
	}

	if _, err := triage.ParseWhen("tuesday"); err == nil {
		t.Fatal("the CLI accepts when=tuesday")
	}
	when, whenErr, _, _ = triageState(url.Values{"when": {"tuesday"}})
	if when != triage.WhenUnknown || !strings.Contains(whenErr, `"tuesday"`) {
		t.Errorf("when=tuesday: page keeps %q with message %q; want it reported and ignored", when, whenErr)
	}
	if _, _, _, setupErr = triageState(url.Values{"model": {"llama-3.1-8b"}, "batch": {"zero"}}); setupErr == "" {
		t.Error("batch=zero: the page reports nothing, the CLI refuses it")
	}
}
