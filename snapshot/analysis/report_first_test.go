package analysis

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// TestReportFirst checks that the two parts of ReportFirst are Report:
// the report it returns equals Report's (an analysis of its own of the same
// snapshot), and the report handed to first equals it with every device's
// diagnosis left out, on every generator scenario and the real files.
func TestReportFirst(t *testing.T) {
	type input struct {
		name string
		b    []byte
	}
	var ins []input
	for _, name := range gen.Scenarios() {
		b, _, err := gen.Bytes(gen.Scenario(name))
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, input{name, b})
	}
	real, _ := filepath.Glob(filepath.Join(realDir, "*.pickle"))
	for _, f := range real {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, input{filepath.Base(f), b})
	}
	if len(real) == 0 {
		t.Log("no real snapshots: generated ones only")
	}
	analyze := func(t *testing.T, b []byte) *Analysis {
		s, err := snapshot.DecodeBytes(b, nil)
		if err != nil {
			t.Fatal(err)
		}
		return Analyze(s, Options{TimelinePoints: 300})
	}
	encode := func(t *testing.T, r *Report) []byte {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, in := range ins {
		t.Run(in.name, func(t *testing.T) {
			want := analyze(t, in.b).Report()
			var early []byte
			calls := 0
			got := analyze(t, in.b).ReportFirst(func(r *Report) {
				calls++
				for i := range r.Devices {
					if !reflect.DeepEqual(r.Devices[i].DiagnosisReport, DiagnosisReport{}) {
						t.Errorf("device %d: the first part has a diagnosis", i)
					}
				}
				early = encode(t, r)
			})
			if calls != 1 {
				t.Fatalf("first called %d times, want once", calls)
			}
			if w, g := encode(t, want), encode(t, got); !bytes.Equal(w, g) {
				t.Errorf("ReportFirst's report differs from Report's (%d and %d bytes of JSON)", len(g), len(w))
			}
			// Report's report without its diagnoses is the first part.
			noDiag := *want
			noDiag.Devices = append([]DeviceReport(nil), want.Devices...)
			for i := range noDiag.Devices {
				noDiag.Devices[i].DiagnosisReport = DiagnosisReport{}
			}
			if w := encode(t, &noDiag); !bytes.Equal(w, early) {
				t.Errorf("the first part differs from Report's without its diagnoses (%d and %d bytes of JSON)", len(early), len(w))
			}
			if len(want.Devices) > 0 && bytes.Equal(early, encode(t, want)) {
				t.Error("the first part equals the whole report: the test compares nothing")
			}
		})
	}
}
