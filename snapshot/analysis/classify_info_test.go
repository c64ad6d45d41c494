package analysis

import (
	"slices"
	"testing"

	"oomscope/snapshot"
)

// TestClassifyStackInfo checks the stack bytes classify makes for the
// diagnosis's source on one goroutine (Device.info): every allocation's
// stack has its byte, each byte made is the one the source makes when it
// reads the stack (fillInfo, or its eager pass), the first source made
// takes them and the report is the same as where the bytes are made when
// read (two goroutines: classify makes none).
func TestClassifyStackInfo(t *testing.T) {
	lazyInfoAlways = true
	defer func() { lazyInfoAlways = false }()
	for name, s := range fastpathSnapshots(t) {
		sequentialOnly.Store(true)
		a := Analyze(s, Options{TimelinePoints: 100})
		sequentialOnly.Store(false)
		for _, d := range a.Devices {
			info := d.info
			if d.allocs.len() > 0 && info == nil {
				t.Fatalf("%s device %d: classify made no stack bytes", name, d.ID)
			}
			d.info = nil
			ref := newSourceFree(d, nil, false) // its bytes made when read
			for k := range d.allocs.len() {
				if id := d.allocs.stack(k); uint(id) < uint(len(info)) && info[id] != ref.stackInfo(id) {
					t.Fatalf("%s device %d: allocation %d's stack %d has byte %#x, want %#x", name, d.ID, k, id, info[id], ref.stackInfo(id))
				}
			}
			for id, v := range info {
				if v != 0 && v != ref.stackInfo(snapshot.StackID(id)) {
					t.Fatalf("%s device %d: stack %d has byte %#x, want %#x", name, d.ID, id, v, ref.stackInfo(snapshot.StackID(id)))
				}
			}
			d.info = info
			if src := newSource(d); d.info != nil || len(info) > 0 && &src.info[0] != &info[0] {
				t.Fatalf("%s device %d: the source did not take classify's bytes", name, d.ID)
			}
		}
		sequentialOnly.Store(true)
		seq := Analyze(s, Options{TimelinePoints: 100}).Report()
		sequentialOnly.Store(false)
		par := Analyze(s, Options{TimelinePoints: 100}).Report()
		for i := range seq.Devices {
			if g, w := mustJSON(seq.Devices[i]), mustJSON(par.Devices[i]); g != w {
				t.Errorf("%s device %d: the report with classify's stack bytes differs:\n got %.2000s\nwant %.2000s", name, i, g, w)
			}
		}
	}
}

// TestClassifyBlocks checks that classify labels every allocation the
// same, and liveAt finds the same allocations, whatever the size of their
// passes' blocks (passBlock): each pass keeps what it changes (runs,
// workspaces, flags, the next labelled entry, the list) in locals for a
// block and carries it to the next. The hand-built rules' tests run again
// with blocks of one allocation.
func TestClassifyBlocks(t *testing.T) {
	passBlock = 1
	t.Run("rules", TestClassify)
	t.Run("pre-trace", TestPreTraceLiveRules)
	passBlock = blockSize
	for name, s := range fastpathSnapshots(t) {
		want := Analyze(s, Options{})
		for _, size := range []int{1, 3, 64} {
			passBlock = size
			got := Analyze(s, Options{})
			for i, d := range got.Devices {
				w := want.Devices[i]
				for _, at := range []int{-1, 0, d.Trace.Len() / 2, d.peakIndex, d.Trace.Len() - 1} {
					if g, w := d.liveAt(at), w.liveAt(at); !slices.Equal(g, w) {
						t.Fatalf("%s device %d, blocks of %d: %d allocations alive at %d, want %d", name, d.ID, size, len(g), at, len(w))
					}
				}
				if d.phaseRuns != w.phaseRuns {
					t.Fatalf("%s device %d, blocks of %d: %d phase runs, want %d", name, d.ID, size, d.phaseRuns, w.phaseRuns)
				}
				for k := range d.allocs.len() {
					if g, w := d.Allocation(k), w.Allocation(k); g != w {
						t.Fatalf("%s device %d, blocks of %d: allocation %d is %+v, want %+v", name, d.ID, size, k, g, w)
					}
				}
			}
			passBlock = blockSize
		}
	}
}
