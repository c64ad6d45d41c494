package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"oomscope/snapshot/gen"
)

// realSnapshot returns the path of a real snapshot in ../shared/snapshots,
// skipping the test when it is absent.
func realSnapshot(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "snapshots", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not present", p)
	}
	return p
}

const (
	fullstep  = "pt26_cs336_ctx128_fullstep.pickle"
	forward   = "pt26_cs336_ctx128_forward.pickle"
	segfree   = "pt26_cs336_ctx256_forward_segfree.pickle"
	flexgen13 = "pt20_flexgen_1.3b_snapshot.pickle"
)

func runCLI(args []string, stdin []byte) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(append([]string{"snapshot"}, args...), bytes.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// TestSnapshotGolden compares whole outputs with testdata/snapshot; rerun
// with -update after an intended change and review the diff.
func TestSnapshotGolden(t *testing.T) {
	tests := []struct {
		golden string
		args   []string
		files  []string
	}{
		{"fullstep.json", []string{"--json", "--top", "5"}, []string{fullstep}},
		{"fullstep.txt", nil, []string{fullstep}},
		{"flexgen_1.3b.json", []string{"--json", "--top", "3"}, []string{flexgen13}},
		{"compare.json", []string{"--json", "--top", "4"}, []string{forward, segfree}},
		{"compare.txt", []string{"--top", "6"}, []string{forward, segfree}},
		{"fullstep.md", []string{"--markdown", "--top", "4"}, []string{fullstep}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			args := tt.args
			for _, f := range tt.files {
				args = append(args, realSnapshot(t, f))
			}
			code, out, errs := runCLI(args, nil)
			if code != exitOK {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			golden(t, "snapshot", tt.golden, []byte(out))
		})
	}
}

// TestSnapshotJSONFields checks the keys the issue promises and their
// values against ../shared/snapshots/README.md (final totals, fullstep's
// MemoryViz-style peak).
func TestSnapshotJSONFields(t *testing.T) {
	code, out, errs := runCLI([]string{"--json", realSnapshot(t, fullstep)}, nil)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v struct {
		Devices []map[string]json.RawMessage `json:"devices"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Devices) != 1 {
		t.Fatalf("bad JSON (%v): %.300s", err, out)
	}
	d := v.Devices[0]
	for _, k := range []string{"device", "entries", "actions", "peak_allocated_bytes", "peak_index", "peak_time_us",
		"peak_reserved_bytes", "final_allocated_bytes", "final_reserved_bytes", "categories_at_peak", "top_sites", "oom_events"} {
		if _, ok := d[k]; !ok {
			t.Errorf("device JSON lacks %q", k)
		}
	}
	num := func(k string) int64 {
		var n int64
		if err := json.Unmarshal(d[k], &n); err != nil {
			t.Errorf("%s: %v", k, err)
		}
		return n
	}
	for k, want := range map[string]int64{"peak_allocated_bytes": 54802667524, "final_allocated_bytes": 54597857284,
		"final_reserved_bytes": 61111009280, "entries": 19342} {
		if got := num(k); got != want {
			t.Errorf("%s = %d, want %d", k, got, want)
		}
	}
	var cats map[string]int64
	if err := json.Unmarshal(d["categories_at_peak"], &cats); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"parameter", "gradient", "optimizer_state", "activation", "temporary", "other"} {
		if _, ok := cats[k]; !ok {
			t.Errorf("categories_at_peak lacks %q", k)
		}
	}
	var sites []map[string]any
	if err := json.Unmarshal(d["top_sites"], &sites); err != nil || len(sites) == 0 {
		t.Fatalf("top_sites: %v", err)
	}
	for _, k := range []string{"site", "bytes", "count"} {
		if _, ok := sites[0][k]; !ok {
			t.Errorf("top_sites[0] lacks %q", k)
		}
	}
}

// TestSnapshotExitCodes checks the exit code and message of each refusal
// and check; cases on generated or hand-made files run everywhere, the
// budget cases use a real snapshot from ../shared when it is there.
func TestSnapshotExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	data, _, err := gen.Bytes(gen.Scenario("training"))
	if err != nil {
		t.Fatal(err)
	}
	good := write("training.pickle", data)
	empty := write("empty.pickle", nil)
	text := write("notes.txt", []byte("this is not a pickle\n"))
	truncated := write("truncated.pickle", data[:len(data)/2])
	global := write("global.pickle", []byte("\x80\x02cos\nsystem\nq\x00."))
	notDict := write("int.pickle", []byte("\x80\x04K\x05."))
	// real names a file of ../shared/snapshots: only its cases skip
	// without it.
	type path = func(*testing.T) string
	real := func(name string) path { return func(t *testing.T) string { return realSnapshot(t, name) } }

	tests := []struct {
		name   string
		args   []string
		real   []path
		code   int
		stdout string
		stderr string
	}{
		{"over budget", []string{"--budget", "40GiB"}, []path{real(fullstep)}, exitCheck, "Peak allocated", "over the budget 40.00 GiB by 11.04 GiB"},
		{"within budget", []string{"--budget", "52GiB"}, []path{real(fullstep)}, exitOK, "within 52.00 GiB", ""},
		{"budget JSON", []string{"--json", "--budget", "40GiB"}, []path{real(fullstep)}, exitCheck, `"over_by_bytes": 11852994564`, "over the budget"},
		{"budget on the second file", []string{"--budget", "20GiB"}, []path{real(forward), real(segfree)}, exitCheck, "Before:", "24.45 GiB"},
		{"missing file", []string{"/nonexistent/x.pickle"}, nil, exitBadInput, "", "no such file"},
		{"empty file", []string{empty}, nil, exitBadInput, "", "is empty"},
		{"not a pickle", []string{text}, nil, exitBadInput, "", "not a readable memory snapshot"},
		{"truncated", []string{truncated}, nil, exitBadInput, "", "not a readable memory snapshot"},
		{"GLOBAL opcode", []string{global}, nil, exitBadInput, "", "not a readable memory snapshot"},
		{"not a dict", []string{notDict}, nil, exitBadInput, "", "not a readable memory snapshot"},
		{"no such device", []string{"--device", "3", good}, nil, exitBadInput, "", "has no device 3 (devices with data: 0)"},
		{"bad budget", []string{"--budget", "forty", good}, nil, exitBadInput, "", `--budget "forty"`},
		{"a bad rank", []string{good, good, truncated}, nil, exitBadInput, "not analysed", "not a readable memory snapshot"},
		{"ranks and markdown", []string{"--markdown", good, good, good}, nil, exitBadInput, "", "not an overview of ranks"},
		{"json and markdown", []string{"--json", "--markdown", good}, nil, exitBadInput, "", "exclude each other"},
		{"no file", nil, nil, exitBadInput, "", "Usage: oomscope snapshot"},
		{"help", []string{"-h"}, nil, exitOK, "Usage: oomscope snapshot", ""},
		{"unknown flag", []string{"--frobnicate", good}, nil, exitBadInput, "", "flag provided but not defined"},
		{"generated file", []string{good}, nil, exitOK, "Peak allocated", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			for _, f := range tt.real {
				args = append(args, f(t))
			}
			code, out, errs := runCLI(args, nil)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errs)
			}
			if !strings.Contains(out, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%.500s", tt.stdout, out)
			}
			if !strings.Contains(errs, tt.stderr) {
				t.Errorf("stderr %q lacks %q", errs, tt.stderr)
			}
		})
	}
}

// TestSnapshotStdinAndOOM feeds a generated snapshot with an OOM entry
// through stdin and checks the OOM event against the generator's truth.
func TestSnapshotStdinAndOOM(t *testing.T) {
	data, truth, err := gen.Bytes(gen.Scenario("oom"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI([]string{"--json", "-"}, data)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v struct {
		File    string `json:"file"`
		Devices []struct {
			PeakAllocated int64 `json:"peak_allocated_bytes"`
			OOMEvents     []struct {
				Index     int   `json:"index"`
				Requested int64 `json:"requested_bytes"`
				Allocated int64 `json:"allocated_bytes"`
				Reserved  int64 `json:"reserved_bytes"`
			} `json:"oom_events"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	dt := truth.Devices[0]
	if v.File != "-" || len(v.Devices) != 1 || v.Devices[0].PeakAllocated != dt.PeakAllocated || len(v.Devices[0].OOMEvents) != len(dt.OOMs) {
		t.Fatalf("got %+v, truth peak %d with %d OOMs", v, dt.PeakAllocated, len(dt.OOMs))
	}
	for i, o := range dt.OOMs {
		g := v.Devices[0].OOMEvents[i]
		if g.Index != o.Index || g.Requested != o.Requested || g.Allocated != o.Allocated || g.Reserved != o.Reserved {
			t.Errorf("oom %d = %+v, truth %+v", i, g, o)
		}
	}
	if code, _, _ := runCLI([]string{"--budget", "1MiB", "-"}, data); code != exitCheck {
		t.Errorf("budget from stdin: exit %d, want %d", code, exitCheck)
	}
}

// TestSnapshotDeviceFlag picks one device of a generated two-device
// snapshot; the JSON then holds that device only, with its truth.
func TestSnapshotDeviceFlag(t *testing.T) {
	data, truth, err := gen.Bytes(gen.Scenario("post210"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dev := range []int{0, 1} {
		code, out, errs := runCLI([]string{"--json", "--device", strconv.Itoa(dev), "-"}, data)
		if code != exitOK {
			t.Fatalf("device %d: exit %d: %s", dev, code, errs)
		}
		var v struct {
			Devices []struct {
				Device  int   `json:"device"`
				Entries int   `json:"entries"`
				Peak    int64 `json:"peak_allocated_bytes"`
			} `json:"devices"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		dt := truth.Devices[dev]
		if len(v.Devices) != 1 || v.Devices[0].Device != dev || v.Devices[0].Entries != dt.Entries || v.Devices[0].Peak != dt.PeakAllocated {
			t.Errorf("--device %d: %+v, truth entries %d peak %d", dev, v.Devices, dt.Entries, dt.PeakAllocated)
		}
	}
	code, out, _ := runCLI([]string{"-"}, data)
	if code != exitOK || !strings.Contains(out, "Device 0:") || !strings.Contains(out, "Device 1:") {
		t.Errorf("without --device both devices are listed (exit %d):\n%s", code, out)
	}
}
