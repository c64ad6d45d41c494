package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"oomscope/internal/goldenfile"
)

// golden compares got with testdata/<dir>/<name>, or rewrites it with
// -update: go test ./cmd/oomscope -run Name -update.
func golden(t *testing.T, dir, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", dir, name), got)
}

func TestRunDispatch(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		inStdout string
		inStderr string
	}{
		{nil, exitBadInput, "", "Usage:"},
		{[]string{"help"}, exitOK, "Commands:", ""},
		{[]string{"frobnicate"}, exitBadInput, "", `unknown command "frobnicate"`},
		{[]string{"version"}, exitOK, "oomscope ", ""},
		{[]string{"version", "--bogus"}, exitBadInput, "", "flag provided but not defined"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := run(tt.args, strings.NewReader(""), &out, &errb)
		if code != tt.code {
			t.Errorf("run(%q) = %d, want %d (stderr %q)", tt.args, code, tt.code, errb.String())
		}
		if !strings.Contains(out.String(), tt.inStdout) {
			t.Errorf("run(%q) stdout %q lacks %q", tt.args, out.String(), tt.inStdout)
		}
		if !strings.Contains(errb.String(), tt.inStderr) {
			t.Errorf("run(%q) stderr %q lacks %q", tt.args, errb.String(), tt.inStderr)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"version", "--json"}, nil, &out, &out); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	var v map[string]string
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v["version"] == "" || v["go"] == "" {
		t.Fatalf("bad JSON %q: %v", out.String(), err)
	}
}
