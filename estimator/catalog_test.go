package estimator

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"oomscope/bytesize"
)

// Text-only counts of Gemma 3 (docs/estimator.md#1-models-and-gpus), checking the vision tower apart.
var wantGemma3Text = map[string]int64{
	"gemma-3-4b":  3_880_263_168,
	"gemma-3-12b": 11_766_034_176,
	"gemma-3-27b": 27_009_346_304,
}

// TestCatalogParams checks every catalog model, built from its config.json
// fields through ParseConfig, against the parameter total its record cites:
// exactly where a source states the exact count, and to the precision of the
// published rounded total ("8.03B") always.
func TestCatalogParams(t *testing.T) {
	_, recs, err := loadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 45 {
		t.Errorf("catalog has %d models, want at least 45", len(recs))
	}
	seen := map[string]bool{}
	for _, rec := range recs {
		t.Run(rec.ID, func(t *testing.T) {
			if seen[rec.ID] {
				t.Errorf("duplicate id")
			}
			seen[rec.ID] = true
			if rec.ID != strings.ToLower(rec.ID) || strings.ContainsAny(rec.ID, " _/") {
				t.Errorf("id %q is not a lower-case slug", rec.ID)
			}
			m, ok := LookupModel(rec.ID)
			if !ok {
				t.Fatalf("not in the catalog")
			}
			if rec.Published == "" || rec.PublishedSource == "" {
				t.Fatalf("no published total or no source for it")
			}
			if rec.Params != 0 && m.Params() != rec.Params {
				t.Errorf("Params() = %d, want %d (diff %d)", m.Params(), rec.Params, m.Params()-rec.Params)
			}
			if !matchesPublished(m.Params(), rec.Published) {
				t.Errorf("Params() = %d does not round to the published %s", m.Params(), rec.Published)
			}
			if text, ok := wantGemma3Text[m.ID]; ok {
				if got := m.Params() - m.VisionParams; got != text {
					t.Errorf("text params = %d, want %d", got, text)
				}
			}
			if strings.Contains(rec.Name, m.Size()) || strings.Contains(rec.Name, "(") {
				t.Errorf("name %q repeats the size or carries a parenthesis (labels add the size)", rec.Name)
			}
		})
	}
	// The models the serving logs (vllm-startup-logs.jsonl) need.
	for _, id := range []string{"llama-3-8b", "llama-3.1-8b", "qwen2-7b", "qwen3-14b", "qwen3-32b", "qwen3-235b-a22b",
		"mistral-small-3.2-24b", "deepseek-r1", "deepseek-r1-distill-qwen-7b", "llama-3.2-11b-vision", "llama-2-7b",
		"llama-2-70b", "llama-3.3-70b", "gpt-oss-20b", "gpt-oss-120b", "granite-4.0-micro", "mistral-7b-v0.2", "deepseek-coder-v2-lite"} {
		if _, ok := LookupModel(id); !ok {
			t.Errorf("catalog lacks %s", id)
		}
	}
}

var publishedRE = regexp.MustCompile(`^(\d+)(?:\.(\d+))?([MB])$`)

// matchesPublished reports whether n rounds to a published total such as
// "8.03B" or "124M" at the precision it is written with. Some model cards
// (Qwen2.5: 7,615,616,512 is "7.61B") truncate instead, so that is accepted.
func matchesPublished(n int64, published string) bool {
	mm := publishedRE.FindStringSubmatch(published)
	if mm == nil {
		return false
	}
	unit := 1e9
	if mm[3] == "M" {
		unit = 1e6
	}
	decimals := len(mm[2])
	v, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(published, "B"), "M"), 64)
	scale := math.Pow(10, float64(decimals))
	x := float64(n) / unit * scale
	return math.Round(x) == math.Round(v*scale) || math.Floor(x) == math.Round(v*scale)
}

func TestMatchesPublished(t *testing.T) {
	tests := []struct {
		n    int64
		p    string
		want bool
	}{
		{8_030_261_248, "8.03B", true},
		{8_030_261_248, "8.04B", false},
		{7_615_616_512, "7.61B", true},
		{7_615_616_512, "7.60B", false},
		{124_439_808, "124M", true},
		{124_439_808, "125M", false},
		{1, "nonsense", false},
	}
	for _, tt := range tests {
		if got := matchesPublished(tt.n, tt.p); got != tt.want {
			t.Errorf("matchesPublished(%d, %q) = %v, want %v", tt.n, tt.p, got, tt.want)
		}
	}
}

func TestActiveParams(t *testing.T) {
	tests := []struct {
		id   string
		want int64
	}{
		{"mixtral-8x7b", 12_879_925_248}, // the notes' layout table
		{"qwen3-30b-a3b", 3_353_032_704}, // the notes' layout table
		{"llama-3.1-8b", 8_030_261_248},  // dense: all params
	}
	for _, tt := range tests {
		m, _ := LookupModel(tt.id)
		if got := m.ActiveParams(); got != tt.want {
			t.Errorf("%s ActiveParams() = %d, want %d", tt.id, got, tt.want)
		}
	}
	// DeepSeek-V3: "active ≈ 37.55B" (docs/estimator.md#1-models-and-gpus).
	m, _ := LookupModel("deepseek-v3")
	if got := float64(m.ActiveParams()) / 1e9; math.Abs(got-37.55) > 0.01 {
		t.Errorf("deepseek-v3 active = %.3fB, want ≈ 37.55B", got)
	}
}

func TestKVBytesPerToken(t *testing.T) {
	// bf16 K+V bytes per token for full attention (docs/estimator.md#7-kv-cache-and-serving-engines), as the
	// notes' layout table lists them.
	tests := []struct {
		id   string
		want int64
	}{
		{"llama-3.1-8b", 131_072},
		{"llama-2-7b", 524_288},
		{"qwen2.5-7b", 57_344},
		{"gemma-2-9b", 344_064},
		{"phi-3-mini", 393_216},
		{"gpt2", 36_864},
		{"qwen3-30b-a3b", 98_304},
	}
	for _, tt := range tests {
		m, _ := LookupModel(tt.id)
		if got := int64(2 * m.Layers * m.KVHeads * m.HeadDim * 2); got != tt.want {
			t.Errorf("%s KV bytes/token = %d, want %d", tt.id, got, tt.want)
		}
	}
}

func TestGPUCatalog(t *testing.T) {
	gs := GPUs()
	if len(gs) < 25 {
		t.Errorf("catalog has %d GPUs, want at least 25", len(gs))
	}
	seen := map[string]bool{}
	for i, g := range gs {
		if seen[g.ID] {
			t.Errorf("duplicate id %s", g.ID)
		}
		seen[g.ID] = true
		if i > 0 && g.CapacityBytes < gs[i-1].CapacityBytes {
			t.Errorf("GPUs() not ordered by capacity at %s", g.ID)
		}
		// PyTorch sees less than the nameplate's GiB and, on every part we
		// know, more than 90 % of the nameplate's GB.
		if g.CapacityBytes > int64(g.MarketedGB)*bytesize.GiB || float64(g.CapacityBytes) < 0.9*float64(g.MarketedGB)*1e9 {
			t.Errorf("%s: capacity %s implausible for a %d GB part", g.ID, bytesize.Format(g.CapacityBytes, bytesize.Binary), g.MarketedGB)
		}
		if g.Evidence == "" {
			t.Errorf("%s: no evidence", g.ID)
		}
	}
	// Spot checks against the capacities of docs/estimator.md#1-models-and-gpus.
	spot := map[string]string{"h100-sxm-80gb": "79.18 GiB", "a100-80gb": "79.15 GiB", "l4-24gb": "22.03 GiB", "h200-141gb": "139.80 GiB", "rtx-4090-24gb": "23.99 GiB"}
	for id, want := range spot {
		g, ok := LookupGPU(id)
		if !ok {
			t.Errorf("%s missing", id)
			continue
		}
		if got := bytesize.Format(g.CapacityBytes, bytesize.Binary); got != want {
			t.Errorf("%s capacity %s, want %s", id, got, want)
		}
	}
}

func TestResolveGPU(t *testing.T) {
	tests := []struct {
		in      string
		wantCap int64
		wantErr string
	}{
		{"h100-sxm-80gb", 81082 << 20, ""},
		{"H100-SXM-80GB", 81082 << 20, ""},
		{"80GiB", 80 << 30, ""},
		{"22.03GiB", int64(math.Round(22.03 * (1 << 30))), ""},
		{"40 GB", 40e9, ""},
		{"nope", 0, "unknown GPU"},
		{"12furlongs", 0, "unknown unit"},
		{"1MiB", 0, "out of range"},
		{"", 0, "unknown GPU"},
	}
	for _, tt := range tests {
		g, err := ResolveGPU(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ResolveGPU(%q) error %v, want it to contain %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || g.CapacityBytes != tt.wantCap {
			t.Errorf("ResolveGPU(%q) = %d, %v; want %d", tt.in, g.CapacityBytes, err, tt.wantCap)
		}
	}
}
