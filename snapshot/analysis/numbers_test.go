package analysis

import (
	"bytes"
	"crypto/sha256"
	hexenc "encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

var updateNumbers = flag.Bool("update-numbers", false, "rewrite testdata/numbers/*.json from the current analysis")

// numbersCase is one input of TestSameNumbers: a pickle, or a snapshot
// built in memory.
type numbersCase struct {
	name string
	data func(t *testing.T) []byte
	snap func(t *testing.T) *snapshot.Snapshot
}

// lazyLoader returns a function that makes the case's snapshot afresh at
// each call: built, or decoded with the summarizer, the file as the
// source and a tiny HoldFrames, so that most stacks stay in the file.
func (c numbersCase) lazyLoader(t *testing.T) func() *snapshot.Snapshot {
	var b []byte
	if c.data != nil {
		b = c.data(t)
	}
	return func() *snapshot.Snapshot {
		if c.snap != nil {
			return c.snap(t)
		}
		s, err := snapshot.Decode(bytes.NewReader(b), int64(len(b)), &snapshot.Options{Summarize: Summarizer(),
			Source: bytes.NewReader(b), HoldFrames: 32})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

// numbersCases lists every real, generated and fuzz-seed snapshot whose
// numbers are pinned in testdata/numbers: the real files, every generator
// scenario, small files of both benchmark families, the generator's
// benchmark configuration, and the analysis fuzzer's seeds.
func numbersCases(t *testing.T) []numbersCase {
	var cs []numbersCase
	reals, _ := filepath.Glob(filepath.Join(realDir, "*.pickle"))
	for _, f := range reals {
		cs = append(cs, numbersCase{name: "real_" + strings.TrimSuffix(filepath.Base(f), ".pickle"), data: func(t *testing.T) []byte {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}})
	}
	generated := func(opt gen.Options) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			b, _, err := gen.Bytes(opt)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	for _, n := range gen.Scenarios() {
		cs = append(cs, numbersCase{name: "gen_" + n, data: generated(gen.Scenario(n))})
	}
	cs = append(cs, numbersCase{name: "gen_bench_2MB", data: generated(gen.Options{Seed: 42, Layers: 8, TwoStreams: true, TargetBytes: 2 << 20})})
	for _, fam := range []gen.Family{gen.RealStacks, gen.DistinctStacks} {
		cs = append(cs, numbersCase{name: "family_" + string(fam), data: func(t *testing.T) []byte {
			var buf bytes.Buffer
			if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: fam, Iterations: 3000}); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}})
	}
	for i, seed := range fuzzSeeds {
		cs = append(cs, numbersCase{name: fmt.Sprintf("fuzz_%d", i), snap: func(*testing.T) *snapshot.Snapshot { return fuzzSnapshot(seed) }})
	}
	return cs
}

// TestSameNumbers pins every number the analysis gives on the corpus of
// numbersCases to what the first, gopickle-checked decoder and replay gave
// (testdata/numbers, written by the code of commit "snapshot: pin every
// number" before the engine was rewritten): the full report except the
// explanations, the state at the peak with its segment layout, the states
// at four more indices, a zoomed series and every allocation's live range,
// size, site, category and rule. Bulky parts are compared by SHA-256. Each
// pickle is decoded twice: with every stack held, and with a source, the
// summarizer and a tiny HoldFrames, so that most stacks stay in the file.
func TestSameNumbers(t *testing.T) {
	for _, c := range numbersCases(t) {
		t.Run(c.name, func(t *testing.T) {
			var s, lazy *snapshot.Snapshot
			if c.snap != nil {
				s = c.snap(t)
			} else {
				b := c.data(t)
				var err error
				if s, err = snapshot.DecodeBytes(b, nil); err != nil {
					t.Fatal(err)
				}
				lazy, err = snapshot.Decode(bytes.NewReader(b), int64(len(b)), &snapshot.Options{Summarize: Summarizer(),
					Source: bytes.NewReader(b), HoldFrames: 32})
				if err != nil {
					t.Fatal(err)
				}
			}
			opt := Options{TimelinePoints: 1200, TopSites: 15}
			got := numbersOf(Analyze(s, opt))
			b, err := json.MarshalIndent(got, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "numbers", c.name+".json")
			if *updateNumbers {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-numbers to create it)", err)
			}
			var w numbers
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			diffNumbers(t, w, got)
			if lazy != nil {
				t.Run("lazy", func(t *testing.T) { diffNumbers(t, w, numbersOf(Analyze(lazy, opt))) })
			}
		})
	}
}

// numbers is what TestSameNumbers pins for one snapshot.
type numbers struct {
	Protocol int             `json:"protocol"`
	Sites    int             `json:"sites"`
	Devices  []deviceNumbers `json:"devices"`
}

type deviceNumbers struct {
	Device    int    `json:"device"`
	Headline  string `json:"headline"` // JSON of the report's scalar fields
	Rules     string `json:"rules"`    // JSON of CategoryRules and CategoriesAtPeak
	TopSites  string `json:"top_sites"`
	Largest   string `json:"largest"`
	Stacks    string `json:"stacks_sha256"` // the displayed stacks of TopSites and Largest
	Frag      string `json:"fragmentation"`
	OOMs      string `json:"ooms"`
	Warnings  string `json:"warnings"`
	Timeline  string `json:"timeline_sha256"`
	SiteBands string `json:"site_series_sha256"`
	PeakState string `json:"peak_state_sha256"`
	States    string `json:"states_sha256"`
	Series    string `json:"series_sha256"`
	Allocs    string `json:"allocs_sha256"`
	NumAllocs int    `json:"allocs"`
}

// headlineJSON is the JSON of a report's scalar fields without the
// diagnosis (its embedded fields come last, from "steps" on): the
// diagnosis came after the pins and has its own tests (diag_*_test.go, the
// CLI goldens, TestDiagnosisLazySame).
func headlineJSON(d DeviceReport) string {
	s := mustJSON(d)
	if i := strings.Index(s, `,"steps":`); i >= 0 {
		return s[:i] + "}"
	}
	return s
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func sum(v any) string {
	h := sha256.Sum256([]byte(mustJSON(v)))
	return hexenc.EncodeToString(h[:])
}

func numbersOf(a *Analysis) numbers {
	r := a.Report()
	n := numbers{Protocol: r.PickleProtocol, Sites: len(a.Sites)}
	for i, d := range r.Devices {
		dev := a.Devices[i]
		entries := d.Entries
		head := d
		head.CategoryRules, head.TopSites, head.LargestAtPeak, head.OOMEvents = nil, nil, nil, nil
		head.Timeline, head.SiteSeries, head.Warnings = nil, nil, nil
		head.FragmentationAtPeak = Fragmentation{}
		var stacks [][]string
		top := append([]SiteBytes(nil), d.TopSites...)
		for j := range top {
			stacks, top[j].Stack = append(stacks, top[j].Stack), nil
		}
		largest := append([]AllocationView(nil), d.LargestAtPeak...)
		for j := range largest {
			stacks, largest[j].Stack = append(stacks, largest[j].Stack), nil
		}
		ooms := append([]OOMEvent(nil), d.OOMEvents...)
		for j := range ooms {
			stacks, ooms[j].Stack = append(stacks, ooms[j].Stack), nil
			for k := range ooms[j].TopSites {
				stacks, ooms[j].TopSites[k].Stack = append(stacks, ooms[j].TopSites[k].Stack), nil
			}
		}
		var states []State
		for _, k := range []int{-1, entries / 3, 2 * entries / 3, entries - 1} {
			states = append(states, dev.StateAt(k, 24, 10))
		}
		type alloc struct {
			Addr          uint64
			Size, Block   int64
			Start, End    int32
			FreeRequested int32
			Site          string
			Origin        string
			Category      string
			Rule          string
			Pending       bool
		}
		allocs := make([]alloc, dev.NumAllocs())
		for k, al := range allocations(dev) {
			allocs[k] = alloc{al.Addr, al.Size, al.BlockSize, al.Start, al.End, al.FreeRequested,
				a.Sites[al.Site].Key, al.Origin.String(), al.Category.String(), al.Rule.ID(), al.Pending}
		}
		n.Devices = append(n.Devices, deviceNumbers{
			Device:    d.Device,
			Headline:  headlineJSON(head),
			Rules:     mustJSON([]any{d.CategoriesAtPeak, d.CategoryRules}),
			TopSites:  mustJSON(top),
			Largest:   mustJSON(largest),
			Stacks:    sum(stacks),
			Frag:      mustJSON(d.FragmentationAtPeak),
			OOMs:      mustJSON(ooms),
			Warnings:  mustJSON(d.Warnings),
			Timeline:  sum(d.Timeline),
			SiteBands: sum(d.SiteSeries),
			PeakState: sum(dev.StateAt(d.PeakIndex, -1, 10)),
			States:    sum(states),
			Series:    sum(dev.Series(entries/4, 3*entries/4, 300, 8)),
			Allocs:    sum(allocs),
			NumAllocs: len(allocs),
		})
	}
	return n
}

// diffNumbers reports each field that differs, with both values for the
// readable ones.
func diffNumbers(t *testing.T, want, got numbers) {
	t.Helper()
	if want.Protocol != got.Protocol || want.Sites != got.Sites || len(want.Devices) != len(got.Devices) {
		t.Fatalf("protocol/sites/devices = %d/%d/%d, want %d/%d/%d", got.Protocol, got.Sites, len(got.Devices),
			want.Protocol, want.Sites, len(want.Devices))
	}
	for i := range want.Devices {
		w, g := want.Devices[i], got.Devices[i]
		for _, f := range []struct{ name, w, g string }{
			{"headline", w.Headline, g.Headline}, {"rules", w.Rules, g.Rules}, {"top sites", w.TopSites, g.TopSites},
			{"largest", w.Largest, g.Largest}, {"displayed stacks", w.Stacks, g.Stacks}, {"fragmentation", w.Frag, g.Frag}, {"oom events", w.OOMs, g.OOMs},
			{"warnings", w.Warnings, g.Warnings}, {"timeline", w.Timeline, g.Timeline},
			{"site series", w.SiteBands, g.SiteBands}, {"peak state", w.PeakState, g.PeakState},
			{"states", w.States, g.States}, {"series", w.Series, g.Series}, {"allocations", w.Allocs, g.Allocs},
			{"allocation count", fmt.Sprint(w.NumAllocs), fmt.Sprint(g.NumAllocs)},
		} {
			if f.w != f.g {
				t.Errorf("device %d %s differs:\n got %s\nwant %s", w.Device, f.name, f.g, f.w)
			}
		}
	}
}
