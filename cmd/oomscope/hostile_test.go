package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"oomscope/untrusted"
	"oomscope/untrusted/hostile"
)

// terminalProblems lists what must not reach a terminal from a file or a
// paste: escape and other control characters (newlines and the tabs the
// CLI writes itself aside), bidirectional overrides, invalid UTF-8.
func terminalProblems(out string) []string {
	var p []string
	if !utf8.ValidString(out) {
		p = append(p, "invalid UTF-8")
	}
	for i, r := range out {
		if r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x2028 || r == 0x2029 {
			p = append(p, fmt.Sprintf("%U at byte %d", r, i))
			if len(p) > 5 {
				break
			}
		}
	}
	return p
}

// TestSnapshotHostileNames runs the snapshot command on a file whose frame
// names attack the terminal and Markdown (hostile.Names), and a file name
// that does too: the text output has no control characters, the Markdown
// renders to the report's own structure only (its golden is
// snapshot/analysis/testdata/hostile.md), and the golden of the text output
// shows how each name is written.
func TestSnapshotHostileNames(t *testing.T) {
	_, data, err := hostile.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "snap\x1b]0;PWN\x07\x1b[2J.pickle")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI([]string{path}, nil)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "PWN") {
		t.Fatalf("no hostile name reached the output: the test does not test:\n%s", out)
	}
	for _, p := range terminalProblems(strings.ReplaceAll(out, "\t", " ")) {
		t.Errorf("text output: %s", p)
	}
	golden(t, "snapshot", "hostile.txt", []byte(strings.ReplaceAll(out, untrusted.Line(path), "FILE")))

	code, md, errs := runCLI([]string{"--markdown", "-"}, data)
	if code != exitOK {
		t.Fatalf("--markdown: exit %d: %s", code, errs)
	}
	for _, p := range terminalProblems(md) {
		t.Errorf("Markdown output: %s", p)
	}
	// Three top sites' stacks, and the diagnosis's: the first three fixes'
	// code and the stacks of up to three leak sites.
	var rep struct {
		Devices []struct {
			Fixes []struct{} `json:"fixes"`
			Leak  *struct {
				Sites []struct{} `json:"sites"`
			} `json:"leak"`
		} `json:"devices"`
	}
	if code, js, _ := runCLI([]string{"--json", "-"}, data); code != exitOK || json.Unmarshal([]byte(js), &rep) != nil || len(rep.Devices) != 1 {
		t.Fatalf("--json: exit %d", code)
	}
	details := 3 + min(3, len(rep.Devices[0].Fixes))
	if l := rep.Devices[0].Leak; l != nil {
		details += min(3, len(l.Sites))
	}
	for _, p := range hostile.MarkdownProblems(md, map[string]int{"h2": 1, "details": details}) {
		t.Errorf("Markdown output: %s", p)
	}

	code, out, errs = runCLI([]string{path, "-"}, data)
	if code != exitOK {
		t.Fatalf("compare: exit %d: %s", code, errs)
	}
	for _, p := range terminalProblems(strings.ReplaceAll(out, "\t", " ")) {
		t.Errorf("comparison output: %s", p)
	}

	// Errors name the file: its name must not reach the terminal raw either.
	bad := filepath.Join(t.TempDir(), "bad\x1b[2J\x1b]0;PWN\x07.pickle")
	if err := os.WriteFile(bad, []byte("not a pickle"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI([]string{bad}, nil)
	if code != exitBadInput {
		t.Errorf("bad file: exit %d", code)
	}
	for _, p := range terminalProblems(errs) {
		t.Errorf("error message %q: %s", errs, p)
	}
}

// TestTriageHostilePaste triages a message with terminal escapes and bidi
// controls pasted into it: the numbers are read, and nothing of the
// escapes reaches the terminal.
func TestTriageHostilePaste(t *testing.T) {
	paste := "\x1b]0;PWN\x07\x1b[2J[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate \x1b[31m20.00 MiB\x1b[0m. " +
		"GPU 0 has a total capacity of 79.15 GiB of which 3.00 MiB is free.\u202e Including non-PyTorch memory, this process has 79.14 GiB memory in use. " +
		"Of the allocated memory 77.00 GiB is allocated by PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated.\r\x1b[KPWN\n"
	var out, errb strings.Builder
	code := run([]string{"triage", "-"}, strings.NewReader(paste), &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "20971520 B") {
		t.Errorf("the request was not read through the colour codes:\n%s", out.String())
	}
	for _, p := range terminalProblems(out.String()) {
		t.Errorf("triage output: %s", p)
	}
}

// TestTriageHostilePastes runs the triage command on every adversarial
// paste class (1 MB each): it answers 0 or 1, never crashes, writes no
// control character to the terminal, and its output stays bounded by the
// findings cap, not by the input.
func TestTriageHostilePastes(t *testing.T) {
	for _, p := range hostile.Pastes(1 << 20) {
		for _, asJSON := range []bool{false, true} {
			args := []string{"triage", "-"}
			if asJSON {
				args = append(args, "--json")
			}
			var out, errb strings.Builder
			code := run(args, strings.NewReader(p.Text), &out, &errb)
			if code != exitOK && code != exitCheck {
				t.Errorf("%s (json %v): exit %d: %.300s", p.Class, asJSON, code, errb.String())
			}
			if out.Len() > 8<<20 {
				t.Errorf("%s (json %v): %d MB of output", p.Class, asJSON, out.Len()>>20)
			}
			if !asJSON {
				for _, pr := range terminalProblems(out.String()) {
					t.Errorf("%s: %s", p.Class, pr)
				}
			}
		}
	}
}
