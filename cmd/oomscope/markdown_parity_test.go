package main

import (
	"bytes"
	"io"
	"os"
	"testing"

	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
	"oomscope/snapshot/load"
)

// pageMarkdown is the Markdown the snapshot page copies for a file, down
// the page's own path: the worker loads it with its options
// (wasm/snapworker: load.Load with TimelinePoints = load.TimelinePoints and
// the other defaults), sends the result through EncodeResponse, the page
// reads it with DecodeResponse and renders analysis.Markdown of the report.
// e2e's TestSnapshotPage checks the same against the page itself.
func pageMarkdown(t *testing.T, name string, data []byte) string {
	t.Helper()
	f, err := load.Load(load.Input{Name: name, R: bytesReader(data), Size: int64(len(data))},
		load.Options{Analysis: analysis.Options{TimelinePoints: load.TimelinePoints}})
	if err != nil {
		t.Fatal(err)
	}
	js, bufs, err := load.EncodeResponse(load.Response{Type: load.ResponseResult, ID: 1, Result: load.NewResult(f)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := load.DecodeResponse(js, bufs)
	if err != nil {
		t.Fatal(err)
	}
	if r.Result == nil {
		t.Fatal("no result decoded")
	}
	return analysis.Markdown(r.Result.Report)
}

// TestPageMarkdownEqualsCLI: the page's Markdown report is byte for byte
// what `oomscope snapshot --markdown` prints for the same file, with the
// defaults of both (docs/snapshot.md#defaults).
func TestPageMarkdownEqualsCLI(t *testing.T) {
	inputs := map[string]func(t *testing.T) []byte{
		"leak_loss_graph": func(t *testing.T) []byte {
			b, _, err := gen.Bytes(gen.Scenario("leak_loss_graph"))
			must(t, err)
			return b
		},
		"everything": func(t *testing.T) []byte { b, _, err := gen.Bytes(gen.Scenario("everything")); must(t, err); return b },
		fullstep: func(t *testing.T) []byte {
			b, err := os.ReadFile(realSnapshot(t, fullstep))
			must(t, err)
			return b
		},
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			b := data(t)
			code, cli, errs := runCLI([]string{"--markdown", "-"}, b)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if page := pageMarkdown(t, "-", b); page != cli {
				t.Errorf("the page's Markdown differs from the CLI's:\npage:\n%.2000s\ncli:\n%.2000s", page, cli)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
