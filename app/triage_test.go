package app

import (
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
