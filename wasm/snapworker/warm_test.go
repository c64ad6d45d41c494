//go:build !js

package main

import (
	"bytes"
	"os"
	"testing"

	"oomscope/snapshot/gen"
	"oomscope/snapshot/load"
)

// TestWarmSnapshot: the worker's warm-up snapshot is the generator's
// "training" scenario, byte for byte (go generate writes it), and loads into
// a report with steps and a setup, so that warming up runs the decoder, the
// step and phase analysis and the catalog match.
func TestWarmSnapshot(t *testing.T) {
	got, err := os.ReadFile("warm.pickle")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := gen.Bytes(gen.Scenario("training"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("warm.pickle (%d bytes) is not the training scenario's %d bytes: run go generate ./wasm/snapworker", len(got), len(want))
	}
	f, err := load.Load(load.Input{Name: "warm.pickle", R: bytes.NewReader(got), Size: int64(len(got))}, load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := f.Report.Devices[f.Report.Busiest()]
	if len(d.Steps) == 0 || d.Setup == nil || len(d.PhaseSpans) == 0 {
		t.Errorf("%d steps, setup %v, %d phase spans: the warm-up would leave paths cold", len(d.Steps), d.Setup, len(d.PhaseSpans))
	}
}
