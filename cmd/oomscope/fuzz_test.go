package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"oomscope/untrusted/hostile"
)

// FuzzRun runs the CLI with fuzzed arguments and stdin: whatever they are,
// it answers with exit 0, 1 or 2 (never an internal error, exit 3). An
// argument that names an existing file is skipped, so the fuzzer reads no
// file of the machine (such as /dev/zero).
func FuzzRun(f *testing.F) {
	seeds := [][4]string{
		{"estimate", "--model", "llama-3.1-8b", "--json"},
		{"estimate", "--gpu", "23.6GiB", "--batch=-1"},
		{"estimate", "--seq", "99999999999999999999", "--gpus=0"},
		{"triage", "--when", "eval", "-"},
		{"triage", "--setup", "model=llama-3.1-8b&batch=4&seq=4096", "-"},
		{"snapshot", "--top", "0", "-"},
		{"snapshot", "--budget", "1e999GiB", "-"},
		{"version", "--json", "", ""},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], "")
	}
	for _, n := range hostile.Names()[:6] {
		f.Add("triage", "-", "--when", n.Text, n.Text)
	}
	for _, p := range hostile.Pastes(4096)[:4] {
		f.Add("triage", "--json", "-", "", p.Text)
	}
	f.Fuzz(func(t *testing.T, a, b, c, d, stdin string) {
		var args []string
		for _, s := range []string{a, b, c, d} {
			if s == "" {
				continue
			}
			if _, err := os.Stat(s); err == nil && s != "-" {
				return
			}
			if strings.HasPrefix(s, "-") {
				// "--config=/etc/passwd": a flag's value may name a file too.
				if _, v, ok := strings.Cut(s, "="); ok {
					if _, err := os.Stat(v); err == nil {
						return
					}
				}
			}
			args = append(args, s)
		}
		var errb strings.Builder
		code := run(args, strings.NewReader(stdin), io.Discard, &errb)
		if code < exitOK || code > exitBadInput {
			t.Fatalf("run(%q) = %d: %s", args, code, errb.String())
		}
	})
}
