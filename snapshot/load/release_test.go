package load

import (
	"bytes"
	"runtime"
	"runtime/metrics"
	"testing"

	"oomscope/snapshot/gen"
)

// TestLoadReleasesFreedMemory checks that loading an input of unknown
// size (the path of big inputs) hands the memory freed before the analysis
// back to the system: heap spans left free by earlier work would otherwise
// stay mapped and count in the process's RSS through the analysis.
func TestLoadReleasesFreedMemory(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: gen.RealStacks, TargetBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	freeBytes := func() int64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
		metrics.Read(s)
		return int64(s[0].Value.Uint64())
	}
	// 256 MiB of garbage, touched and collected: free, not released (the
	// background scavenger returns a few MiB in the time Load takes).
	const garbage = 256 << 20
	g := make([]byte, garbage)
	for i := 0; i < len(g); i += 4096 {
		g[i] = 1
	}
	runtime.KeepAlive(g)
	g = nil
	runtime.GC()
	if free := freeBytes(); free < garbage/2 {
		t.Skipf("the runtime released the garbage at once (%d MiB free): nothing to check", free>>20)
	}
	f, err := Load(Input{Name: "gen", R: bytes.NewReader(buf.Bytes()), Size: -1}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(f)
	if free := freeBytes(); free > garbage/4 {
		t.Errorf("after Load %d MiB of the heap is free and not released, want under %d MiB", free>>20, garbage>>22)
	}
}
