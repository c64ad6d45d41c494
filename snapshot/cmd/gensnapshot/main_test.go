package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	out, truthPath := filepath.Join(dir, "s.pickle"), filepath.Join(dir, "t.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-scenario", "oom", "-protocol", "5", "-o", out, "-truth", truthPath}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if data[1] != 5 {
		t.Errorf("protocol byte %d, want 5", data[1])
	}
	s, err := snapshot.DecodeBytes(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	var truth gen.Truth
	b, _ := os.ReadFile(truthPath)
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	if truth.Bytes != int64(len(data)) || len(truth.Devices) != 1 || truth.Devices[0].Entries != s.DeviceTraces[0].Len() ||
		len(truth.Devices[0].OOMs) != 1 {
		t.Errorf("truth %+v does not describe the file", truth)
	}
	if !strings.Contains(stdout.String(), "bytes") {
		t.Errorf("stdout %q", stdout.String())
	}
}

func TestRunErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"-scenario", "nope", "-o", "x"}, {"-bogus"}, {"-o", "x", "extra"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	var stdout bytes.Buffer
	if code := run([]string{"-list"}, &stdout, &bytes.Buffer{}); code != 0 || !strings.Contains(stdout.String(), "ring_wrap") {
		t.Errorf("-list: %d %q", code, stdout.String())
	}
}
