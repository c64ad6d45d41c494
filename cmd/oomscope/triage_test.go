package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestTriageGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
	}{
		{"training-log.json", []string{"--json", "testdata/triage/training-log.txt"}},
		{"training-log.out", []string{"testdata/triage/training-log.txt"}},
		{"eval-1x-when-eval.json", []string{"--json", "--when", "eval", "testdata/triage/eval-1x.txt"}},
		{"eval-1x-when-eval.out", []string{"testdata/triage/eval-1x.txt", "--when=evaluation"}},
		{"vllm.json", []string{"testdata/triage/vllm.txt", "--json"}},
		{"logits-setup.out", []string{"--setup", "model=llama-3.1-8b&batch=4&seq=2048", "testdata/triage/logits.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(append([]string{"triage"}, tt.args...), nil, &out, &errb); code != exitOK {
				t.Fatalf("exit %d, stderr %q", code, errb.String())
			}
			golden(t, "triage", tt.golden, out.Bytes())
		})
	}
}

func TestTriageJSONShape(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"triage", "--json", "testdata/triage/training-log.txt"}, nil, &out, &out); code != exitOK {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	var res struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 2 {
		t.Fatalf("%d findings, want 2 (the CUDA message and the two NCCL lines as one)", len(res.Findings))
	}
	if res.Findings[0]["kind"] != "cuda-2x" || res.Findings[0]["cause"] != "fragmentation" {
		t.Errorf("first finding %v/%v, want cuda-2x/fragmentation", res.Findings[0]["kind"], res.Findings[0]["cause"])
	}
	if res.Findings[1]["kind"] != "nccl" || res.Findings[1]["tried_bytes"] != 8388608.0 {
		t.Errorf("second finding %v tried %v, want nccl 8388608", res.Findings[1]["kind"], res.Findings[1]["tried_bytes"])
	}
}

func TestTriageExitCodes(t *testing.T) {
	msg, err := os.ReadFile("testdata/triage/eval-1x.txt")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		stdin    string
		code     int
		inStdout string
		inStderr string
	}{
		{"stdin dash", []string{"-"}, string(msg), exitOK, "Cause: capacity", ""},
		{"stdin implied", nil, string(msg), exitOK, "Found 1 out-of-memory message.", ""},
		{"no OOM", []string{"testdata/triage/no-oom.txt"}, "", exitCheck, "No out-of-memory message found.", "no out-of-memory message found"},
		{"no OOM json", []string{"--json", "-"}, "all fine\n", exitCheck, `"findings": []`, ""},
		{"bad when", []string{"--when", "tuesday", "-"}, string(msg), exitBadInput, "", `unknown --when "tuesday"`},
		{"missing file", []string{"testdata/triage/nope.txt"}, "", exitBadInput, "", "nope.txt"},
		{"two files", []string{"a.txt", "b.txt"}, "", exitBadInput, "", "want one FILE"},
		{"bad flag", []string{"--colour"}, "", exitBadInput, "", "flag provided but not defined"},
		{"help", []string{"-h"}, "", exitOK, "Usage: oomscope triage", ""},
		{"bad setup", []string{"--setup", "model=llama-3.1-8b&batch=zero", "-"}, string(msg), exitBadInput, "", "--setup: batch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(append([]string{"triage"}, tt.args...), strings.NewReader(tt.stdin), &out, &errb)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errb.String())
			}
			if !strings.Contains(out.String(), tt.inStdout) {
				t.Errorf("stdout %q lacks %q", out.String(), tt.inStdout)
			}
			if !strings.Contains(errb.String(), tt.inStderr) {
				t.Errorf("stderr %q lacks %q", errb.String(), tt.inStderr)
			}
		})
	}
}
