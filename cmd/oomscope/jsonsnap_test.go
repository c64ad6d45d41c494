package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
	"oomscope/snapshot/load"
)

// snapshotReports are reports of real and generated snapshots, to write.
func snapshotReports(t *testing.T) map[string]*analysis.Report {
	t.Helper()
	inputs := map[string][]byte{}
	reals, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "snapshots", "*.pickle"))
	for _, p := range reals {
		b, err := os.ReadFile(p)
		must(t, err)
		inputs[filepath.Base(p)] = b
	}
	for _, name := range []string{"everything", "leak_loss_graph"} {
		b, _, err := gen.Bytes(gen.Scenario(name))
		must(t, err)
		inputs[name] = b
	}
	for _, fam := range []gen.Family{gen.RealStacks, gen.DistinctStacks} {
		var b bytes.Buffer
		_, err := gen.WriteFamily(&b, gen.FamilyOptions{Family: fam, TargetBytes: 2 << 20})
		must(t, err)
		inputs[string(fam)] = b.Bytes()
	}
	reps := map[string]*analysis.Report{}
	for name, b := range inputs {
		f, err := load.Load(load.Input{Name: name, R: bytes.NewReader(b), Size: int64(len(b)), Source: bytes.NewReader(b)}, load.Options{})
		must(t, err)
		reps[name] = f.Report
	}
	return reps
}

// TestWriteSnapshotJSONSame: the snapshot document written with its
// parts marshalled on other goroutines is writeJSON's, byte for byte, on
// real and generated files, on two devices, and on parts nil, empty and
// of every length around the runs' size, with strings that hold the
// parts' keys.
func TestWriteSnapshotJSONSame(t *testing.T) {
	if !snapshot.Concurrent() {
		t.Skip("one core: writeSnapshotJSON is writeJSON")
	}
	reps := snapshotReports(t)
	// Made-up devices: runs cut anywhere, nil and empty parts, keys of
	// the parts' names in strings and deeper objects.
	steps := func(n int) []analysis.Step {
		var s []analysis.Step
		for i := range n {
			s = append(s, analysis.Step{FirstEntry: i, LastEntry: i + 1, PeakAllocatedBytes: int64(i) << 20, Partial: i%3 == 0})
		}
		return s
	}
	spans := func(n int) []analysis.PhaseSpan {
		var s []analysis.PhaseSpan
		for i := range n {
			s = append(s, analysis.PhaseSpan{Step: i, Phase: analysis.Phases[i%len(analysis.Phases)], FirstEntry: i, LastEntry: i})
		}
		return s
	}
	var made analysis.Report
	for _, n := range []int{0, 1, partRun - 1, partRun, partRun + 1, 2*partRun + 7} {
		d := analysis.DeviceReport{Device: n, Actions: map[string]int{`steps`: 1, `x"steps":null`: 2}, Warnings: []string{`"phase_peaks":null,"steps":null`}}
		d.Steps, d.PhaseSpans = steps(n), spans(n)
		d.PhasePeaks = []analysis.PhasePeak{}
		made.Devices = append(made.Devices, d)
	}
	reps["made up"] = &made
	two := *reps["everything"]
	two.Devices = append(two.Devices, made.Devices[4], two.Devices[0])
	reps["three devices"] = &two
	reps["no device"] = &analysis.Report{}
	for name, rep := range reps {
		for _, budget := range []*budgetResult{nil, {BudgetBytes: 1 << 30, OK: true}} {
			v := snapshotJSON{File: `runs/"rank 0".pickle`, Report: rep, Budget: budget}
			// The parts are found (else writeSnapshotJSON is writeJSON).
			_, nulls, parts, err := stripParts(v)
			must(t, err)
			if len(nulls) != 3*len(rep.Devices) || len(parts) != len(nulls) {
				t.Fatalf("%s: %d nulls of parts found for %d parts of %d devices", name, len(nulls), len(parts), len(rep.Devices))
			}
			var want, got bytes.Buffer
			must(t, writeJSON(&want, v))
			must(t, writeSnapshotJSON(&got, v))
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				i := 0
				for i < min(got.Len(), want.Len()) && got.Bytes()[i] == want.Bytes()[i] {
					i++
				}
				t.Fatalf("%s: writeSnapshotJSON differs from writeJSON at byte %d of %d: %q, want %q", name, i, want.Len(),
					got.Bytes()[i:min(i+80, got.Len())], want.Bytes()[i:min(i+80, want.Len())])
			}
		}
	}
	if n := len(made.Devices[5].Steps); n != 2*partRun+7 {
		t.Fatalf("the made-up report was changed: %d steps", n)
	}
}

// TestWriteSnapshotJSONErrors: a failing writer's error comes back, and
// a panic while marshalling a part is raised again on the caller.
func TestWriteSnapshotJSONErrors(t *testing.T) {
	if !snapshot.Concurrent() {
		t.Skip("one core")
	}
	rep := &analysis.Report{Devices: []analysis.DeviceReport{{}}}
	rep.Devices[0].Steps = make([]analysis.Step, 3*partRun)
	if err := writeSnapshotJSON(failWriter{}, snapshotJSON{Report: rep}); err == nil || err.Error() != "disk full" {
		t.Errorf("writeSnapshotJSON to a failing writer = %v, want disk full", err)
	}
	// A panic of a worker: a run whose value panics when marshalled.
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "boom") {
				t.Errorf("recovered %v, want the worker's panic", r)
			}
		}()
		runs := []*jsonRun{{v: panicker{}, done: make(chan struct{})}}
		m := startMarshal([][]*jsonRun{runs})
		defer m.stop()
		var b bytes.Buffer
		in := newIndenter(&b)
		in.depth = partDepth // a device's key, as in the document
		m.write(in, runs)
	}()
}

// panicker panics when marshalled.
type panicker struct{}

func (panicker) MarshalJSON() ([]byte, error) { panic("boom") }

// TestAppendRunAsEncoder: the parts' elements written directly (appendRun)
// are encoding/json's, indented as the indenter does inside a part's
// array, for every field set by reflection to random values (a field
// added to a type and not to its appender shows up here), zero values
// (omitempty), each phase, and runs of 1 to 5 elements; a phase without
// a name gives encoding/json's error.
func TestAppendRunAsEncoder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	// fill sets every field of the struct p points to at random.
	fill := func(p any) {
		v := reflect.ValueOf(p).Elem()
		for i := range v.NumField() {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.Int, reflect.Int64:
				n := rng.Int64()
				switch rng.IntN(4) {
				case 0:
					n = 0
				case 1:
					n = -n
				case 2:
					n %= 1000
				}
				f.SetInt(n)
			case reflect.Bool:
				f.SetBool(rng.IntN(2) == 0)
			case reflect.Uint8: // a Phase
				f.SetUint(uint64(rng.IntN(len(analysis.Phases))))
			default:
				t.Fatalf("%s: field %s of kind %s: teach appendRun and this test", v.Type(), v.Type().Field(i).Name, f.Kind())
			}
		}
	}
	// want is the run as writeJSON's indenter writes a part's elements.
	want := func(v any) ([]byte, error) {
		var c bytes.Buffer
		if err := json.NewEncoder(&c).Encode(v); err != nil {
			return nil, err
		}
		var out bytes.Buffer
		in := newIndenter(&out)
		in.depth = partDepth
		in.Write(c.Bytes()[:c.Len()-1]) // the array, no newline
		must(t, in.flush())
		b := out.Bytes()
		// '[' and its line, the elements, the line and ']' of the array.
		open, end := "["+elemLine, fieldLine[:len(fieldLine)-4]+"]"
		if !bytes.HasPrefix(b, []byte(open)) || !bytes.HasSuffix(b, []byte(end)) {
			t.Fatalf("indented array %q", b)
		}
		return b[len(open) : len(b)-len(end)], nil
	}
	check := func(name string, v any) {
		t.Helper()
		w, werr := want(v)
		got, err := appendRun(nil, v)
		if werr != nil || err != nil {
			if werr == nil || err == nil || err.Error() != werr.Error() {
				t.Fatalf("%s: error %v, want %v", name, err, werr)
			}
			return
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("%s: appendRun wrote\n%s\nwant\n%s", name, got, w)
		}
	}
	for round := range 300 {
		n := 1 + round%5
		steps, peaks, spans := make([]analysis.Step, n), make([]analysis.PhasePeak, n), make([]analysis.PhaseSpan, n)
		for i := range n {
			if round%7 != 0 {
				fill(&steps[i])
				fill(&peaks[i])
				fill(&spans[i])
			}
		}
		check("steps", steps)
		check("phase peaks", peaks)
		check("phase spans", spans)
	}
	bad := []analysis.PhaseSpan{{Phase: analysis.Phase(9)}}
	if _, err := appendRun(nil, bad); err == nil {
		t.Fatal("a phase without a name was written")
	}
	check("bad phase span", bad)
	check("bad phase peak", []analysis.PhasePeak{{}, {Phase: analysis.Phase(len(analysis.Phases))}})
	// Another type: marshalled and indented.
	check("other", []map[string][]int{{"a": {1, 2}}, {}})
}
