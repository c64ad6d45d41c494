package analysis

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oomscope/snapshot/gen"
)

// TestNumbersGoldenWitness: the pinned numbers of every generator scenario
// (testdata/numbers/gen_*.json, rewritten by -update-numbers from the
// analysis itself) hold the truth the generator's allocator simulation
// recorded, so that a regenerated file cannot bless a regression.
func TestNumbersGoldenWitness(t *testing.T) {
	for _, name := range gen.Scenarios() {
		t.Run(name, func(t *testing.T) {
			_, truth, err := gen.Bytes(gen.Scenario(name))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join("testdata", "numbers", "gen_"+name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var pinned struct {
				Devices []struct {
					Headline string `json:"headline"`
				} `json:"devices"`
			}
			if err := json.Unmarshal(b, &pinned); err != nil {
				t.Fatal(err)
			}
			if len(pinned.Devices) != len(truth.Devices) {
				t.Fatalf("%d devices pinned, the generator made %d", len(pinned.Devices), len(truth.Devices))
			}
			for i, dt := range truth.Devices {
				var h struct {
					Device          int   `json:"device"`
					Entries         int   `json:"entries"`
					Initial         int64 `json:"initial_allocated_bytes"`
					Peak            int64 `json:"peak_allocated_bytes"`
					PeakReserved    int64 `json:"peak_reserved_bytes"`
					FinalAllocated  int64 `json:"final_allocated_bytes"`
					FinalReserved   int64 `json:"final_reserved_bytes"`
					InitialReserved int64 `json:"initial_reserved_bytes"`
				}
				if err := json.Unmarshal([]byte(pinned.Devices[i].Headline), &h); err != nil {
					t.Fatal(err)
				}
				want := [][2]int64{{int64(h.Device), int64(dt.Device)}, {int64(h.Entries), int64(dt.Entries)},
					{h.Initial, dt.InitialAllocated}, {h.Peak, dt.PeakAllocated}, {h.PeakReserved, dt.PeakReserved},
					{h.FinalAllocated, dt.FinalAllocated}, {h.FinalReserved, dt.FinalReserved}, {h.InitialReserved, dt.InitialReserved}}
				names := []string{"device", "entries", "initial allocated", "peak allocated", "peak reserved", "final allocated", "final reserved", "initial reserved"}
				for j, w := range want {
					if w[0] != w[1] {
						t.Errorf("device %d: pinned %s %d, the generator recorded %d", dt.Device, names[j], w[0], w[1])
					}
				}
			}
		})
	}
}

// TestMarkdownGoldenWitness: the Markdown goldens of the real files (written
// by -update) state the totals ../shared/snapshots/README.md gives for them
// (MemoryViz's numbers), in GiB with two decimals.
func TestMarkdownGoldenWitness(t *testing.T) {
	for golden, totals := range map[string][]int64{
		// peak 54,802,667,524 B, final requested 54,597,857,284 B, reserved 61,111,009,280 B
		"fullstep.md": {54802667524, 54597857284, 61111009280},
		// reserved 7,608,467,456 B, requested 5,683,449,864 B
		"flexgen_1.3b.md": {7608467456, 5683449864},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", golden))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range totals {
			if s := fmt.Sprintf("%.2f GiB", float64(n)/(1<<30)); !strings.Contains(string(b), s) {
				t.Errorf("%s does not state %s (%d B)", golden, s, n)
			}
		}
	}
}
