package analysis

import (
	"fmt"
	"sync"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

var benchFiles sync.Map // size in MB → []byte

// benchSnapshot generates (once per size) a training-loop snapshot of about
// mb megabytes.
func benchSnapshot(b *testing.B, mb int64) []byte {
	if v, ok := benchFiles.Load(mb); ok {
		return v.([]byte)
	}
	data, _, err := gen.Bytes(gen.Options{Seed: 42, Layers: 8, TwoStreams: true, TargetBytes: mb << 20})
	if err != nil {
		b.Fatal(err)
	}
	benchFiles.Store(mb, data)
	return data
}

// BenchmarkAnalyze measures Analyze + Report (with the page's timeline) on
// generated 10/50/200 MB snapshots, decoded outside the timer.
func BenchmarkAnalyze(b *testing.B) {
	for _, mb := range []int64{10, 50, 200} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			data := benchSnapshot(b, mb)
			s, err := snapshot.DecodeBytes(data, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				r := Analyze(s, Options{TimelinePoints: DefaultTimelinePoints}).Report()
				if r.Devices[0].PeakAllocatedBytes <= 0 {
					b.Fatal("no peak")
				}
			}
			b.ReportMetric(float64(s.DeviceTraces[0].Len()), "entries")
		})
	}
}

// BenchmarkDecodeAnalyze measures the whole path of the CLI and the page:
// decode plus analysis.
func BenchmarkDecodeAnalyze(b *testing.B) {
	for _, mb := range []int64{10, 50, 200} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			data := benchSnapshot(b, mb)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				s, err := snapshot.DecodeBytes(data, nil)
				if err != nil {
					b.Fatal(err)
				}
				Analyze(s, Options{TimelinePoints: DefaultTimelinePoints}).Report()
			}
		})
	}
}

// BenchmarkStateAt measures one "state at index i" query with the segment
// layout, what the page asks for on a click.
func BenchmarkStateAt(b *testing.B) {
	data := benchSnapshot(b, 50)
	s, err := snapshot.DecodeBytes(data, nil)
	if err != nil {
		b.Fatal(err)
	}
	d := Analyze(s, Options{}).Devices[0]
	n := d.Trace.Len()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d.StateAt((i*7919)%n, -1, 10)
		i++
	}
}
