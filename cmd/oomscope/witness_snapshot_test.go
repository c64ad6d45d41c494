package main

// Independent witnesses of the snapshot goldens (testdata/snapshot). The
// goldens are written by the code under test (-update); these tests
// recompute a few of their numbers by another route, so that a regenerated
// golden cannot bless a regression: the file is decoded by the generic
// gopickle unpickler (not package snapshot) and replayed here by the
// pairing rule of docs/snapshot.md#pairing-rule (not package analysis).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nlpodyssey/gopickle/pickle"
	"github.com/nlpodyssey/gopickle/types"

	"oomscope/snapshot/gen"
)

// refNumbers are what the witness recomputes for one device.
type refNumbers struct {
	entries                      int
	peak, initial                int64 // peak allocated, allocated before the first entry
	finalAllocated, finalReserve int64
	oomRequested, oomFree        int64 // the last oom entry's size and device_free
	ooms                         int
}

// refLoad decodes a pickle with gopickle, refusing every global.
func refLoad(t *testing.T, data []byte) *types.Dict {
	t.Helper()
	u := pickle.NewUnpickler(bytes.NewReader(data))
	u.FindClass = func(module, name string) (any, error) {
		return nil, fmt.Errorf("global %s.%s", module, name)
	}
	v, err := u.Load()
	if err != nil {
		t.Fatalf("gopickle: %v", err)
	}
	d, ok := v.(*types.Dict)
	if !ok {
		t.Fatalf("top level is %T, want a dict", v)
	}
	return d
}

func refGet(d *types.Dict, key string) any {
	v, _ := d.Get(key)
	return v
}

func refInt(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case bool:
		if x {
			return 1
		}
		return 0
	case *big.Int:
		if x.IsInt64() {
			return x.Int64()
		}
		return int64(x.Uint64()) // addresses and streams: 64-bit two's complement
	}
	return 0
}

func refList(v any) []any {
	if l, ok := v.(*types.List); ok {
		return *l
	}
	return nil
}

// refReplay replays device dev: an allocation is live from its alloc to its
// free_completed, matched by address in order; a free without an open
// alloc was live from the start; a live block of the segments with no open
// alloc was live for the whole window.
func refReplay(t *testing.T, top *types.Dict, dev int) refNumbers {
	t.Helper()
	var n refNumbers
	traces := refList(refGet(top, "device_traces"))
	open := map[int64]int64{}
	var cur, peakRel int64
	if dev < len(traces) {
		for _, e := range refList(traces[dev]) {
			d := e.(*types.Dict)
			n.entries++
			addr, size := refInt(refGet(d, "addr")), refInt(refGet(d, "size"))
			switch refGet(d, "action") {
			case "alloc":
				if old, ok := open[addr]; ok {
					cur -= old
				}
				open[addr] = size
				cur += size
			case "free_completed", "free":
				if old, ok := open[addr]; ok {
					cur -= old
					delete(open, addr)
				} else {
					n.initial += size
					cur -= size
				}
			case "oom":
				n.ooms++
				n.oomRequested, n.oomFree = size, refInt(refGet(d, "device_free"))
			}
			peakRel = max(peakRel, cur)
		}
	}
	for _, s := range refList(refGet(top, "segments")) {
		seg := s.(*types.Dict)
		if int(refInt(refGet(seg, "device"))) != dev {
			continue
		}
		n.finalReserve += refInt(refGet(seg, "total_size"))
		addr := refInt(refGet(seg, "address"))
		for _, b := range refList(refGet(seg, "blocks")) {
			blk := b.(*types.Dict)
			if a, ok := blk.Get("address"); ok {
				addr = refInt(a)
			}
			size := refInt(refGet(blk, "size"))
			state := refGet(blk, "state")
			if state == "active_allocated" || state == "active_pending_free" {
				req := refInt(refGet(blk, "requested_size"))
				if state == "active_allocated" {
					n.finalAllocated += req
				}
				if _, ok := open[addr]; ok {
					delete(open, addr)
				} else {
					n.initial += req
				}
			}
			addr += size
		}
	}
	n.peak = n.initial + peakRel
	return n
}

// gibText writes bytes as the reports do for sizes of a MiB or more: two
// decimals in GiB, or in MiB below one GiB.
func gibText(b int64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.2f MiB", float64(b)/(1<<20))
}

// testdataText reads testdata/<dir>/<name>.
func testdataText(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// goldenDevice0 reads device 0 of a JSON report golden.
func goldenDevice0(t *testing.T, name string) map[string]any {
	t.Helper()
	var r struct {
		Devices []map[string]any `json:"devices"`
	}
	if err := json.Unmarshal([]byte(testdataText(t, "snapshot", name)), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Devices) == 0 {
		t.Fatalf("%s has no device", name)
	}
	return r.Devices[0]
}

func checkJSONNumbers(t *testing.T, golden string, dev map[string]any, want refNumbers) {
	t.Helper()
	for key, v := range map[string]int64{
		"entries":                 int64(want.entries),
		"peak_allocated_bytes":    want.peak,
		"initial_allocated_bytes": want.initial,
		"final_allocated_bytes":   want.finalAllocated,
		"final_reserved_bytes":    want.finalReserve,
	} {
		if got, ok := dev[key].(float64); !ok || int64(got) != v {
			t.Errorf("%s: %s = %v, the reference replay gives %d", golden, key, dev[key], v)
		}
	}
}

func checkTextHolds(t *testing.T, golden, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q (the reference replay's number)", golden, w)
		}
	}
}

// TestSnapshotGoldenWitness: the real-file goldens hold the peak, the
// starting and final numbers of the reference replay.
func TestSnapshotGoldenWitness(t *testing.T) {
	ref := map[string]refNumbers{}
	for _, f := range []string{fullstep, flexgen13, forward, segfree} {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(realSnapshot(t, f))
			if err != nil {
				t.Fatal(err)
			}
			ref[f] = refReplay(t, refLoad(t, data), 0)
		})
	}
	if n, ok := ref[fullstep]; ok {
		// ../shared/snapshots/README.md states the totals of this file as
		// MemoryViz computes them: the reference replay must agree first.
		if n.peak != 54802667524 || n.finalAllocated != 54597857284 || n.finalReserve != 61111009280 {
			t.Fatalf("reference replay of %s: peak %d, final allocated %d, reserved %d; the shared README says 54802667524, 54597857284, 61111009280",
				fullstep, n.peak, n.finalAllocated, n.finalReserve)
		}
		checkJSONNumbers(t, "fullstep.json", goldenDevice0(t, "fullstep.json"), n)
		checkTextHolds(t, "fullstep.txt", testdataText(t, "snapshot", "fullstep.txt"),
			fmt.Sprintf("Peak allocated    %s  (%d B)", gibText(n.peak), n.peak),
			fmt.Sprintf("of %d", n.entries), gibText(n.initial))
		checkTextHolds(t, "fullstep.md", testdataText(t, "snapshot", "fullstep.md"), "the peak of "+gibText(n.peak))
	}
	if n, ok := ref[flexgen13]; ok {
		checkJSONNumbers(t, "flexgen_1.3b.json", goldenDevice0(t, "flexgen_1.3b.json"), n)
	}
	if b, ok := ref[forward]; ok {
		if a, ok := ref[segfree]; ok {
			text := testdataText(t, "snapshot", "compare.txt")
			checkTextHolds(t, "compare.txt", text, fmt.Sprintf("peak allocated  %s  %s", gibText(b.peak), gibText(a.peak)))
			var c struct {
				Before, After json.RawMessage
			}
			if err := json.Unmarshal([]byte(testdataText(t, "snapshot", "compare.json")), &c); err != nil {
				t.Fatal(err)
			}
			for _, side := range []struct {
				raw  json.RawMessage
				want refNumbers
			}{{c.Before, b}, {c.After, a}} {
				var r struct {
					Devices []map[string]any `json:"devices"`
				}
				if err := json.Unmarshal(side.raw, &r); err != nil || len(r.Devices) == 0 {
					t.Fatalf("compare.json: %v", err)
				}
				checkJSONNumbers(t, "compare.json", r.Devices[0], side.want)
			}
		}
	}
}

// TestSnapshotDiagnosisGoldenWitness: the goldens of generated loops hold
// the reference replay's peak and final numbers, the generator's leak per
// step, and the OOM entry's request.
func TestSnapshotDiagnosisGoldenWitness(t *testing.T) {
	load := func(scenario string) (refNumbers, gen.Truth) {
		data, truth, err := gen.Bytes(gen.Scenario(scenario))
		if err != nil {
			t.Fatal(err)
		}
		return refReplay(t, refLoad(t, data), 0), truth
	}

	n, truth := load("leak_history")
	dev := goldenDevice0(t, "leak_history.json")
	checkJSONNumbers(t, "leak_history.json", dev, n)
	// The generator knows what its leaking loop keeps per step.
	lk, _ := dev["leak"].(map[string]any)
	if want := truth.Devices[0].Leak; want == nil || lk == nil || int64(lk["bytes_per_step"].(float64)) != want.BytesPerStep {
		t.Errorf("leak_history.json: leak %v, the generator keeps %+v per step", lk, want)
	}

	n, truth = load("leak_loss_graph")
	md := testdataText(t, "snapshot", "leak_loss_graph.md")
	checkTextHolds(t, "leak_loss_graph.md", md, "the "+gibText(n.peak)+" peak")
	if want := truth.Devices[0].Leak; want == nil {
		t.Error("the leak_loss_graph scenario keeps nothing per step")
	} else {
		checkTextHolds(t, "leak_loss_graph.md", md, "grows by "+gibText(want.BytesPerStep)+" per step")
	}

	n, _ = load("oom_card")
	if n.ooms == 0 {
		t.Fatal("the oom_card scenario has no oom entry")
	}
	checkTextHolds(t, "oom_card.txt", testdataText(t, "snapshot", "oom_card.txt"),
		fmt.Sprintf("Peak allocated    %s  (%d B)", gibText(n.peak), n.peak),
		fmt.Sprintf("of %d", n.entries), gibText(n.oomRequested))
}
