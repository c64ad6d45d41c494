package main

// Independent witnesses of the triage goldens (testdata/triage): the
// numbers are read again from the raw messages with the test's own
// patterns and converted as PyTorch's format_size defines them (binary
// units, round half up; docs/triage.md#sizes), and the causes are the ones
// the rules of docs/triage.md#causes give when applied by hand (stated
// beside each), never what package triage says.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"strings"
	"testing"
)

// printedBytes converts a printed size ("7.10 GiB") to bytes: value × unit,
// rounded half up.
func printedBytes(t *testing.T, value, unit string) int64 {
	t.Helper()
	v, ok := new(big.Rat).SetString(value)
	if !ok {
		t.Fatalf("bad number %q", value)
	}
	shift := map[string]uint{"bytes": 0, "KiB": 10, "MiB": 20, "GiB": 30}[unit]
	v.Mul(v, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), shift)))
	v.Add(v, big.NewRat(1, 2))
	return new(big.Int).Quo(v.Num(), v.Denom()).Int64()
}

// rawNumbers reads the named numbers of the first message in path with
// patterns whose first group is the value and second the unit (or only
// the value, for counts).
func rawNumbers(t *testing.T, path string, patterns map[string]string) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for key, p := range patterns {
		m := regexp.MustCompile(p).FindStringSubmatch(string(b))
		if m == nil {
			t.Fatalf("%s: no %s (%s) in the raw message", path, key, p)
		}
		if len(m) == 3 {
			out[key] = printedBytes(t, m[1], m[2])
		} else {
			var n int64
			if _, err := fmt.Sscan(m[1], &n); err != nil {
				t.Fatalf("%s: %s: %v", path, key, err)
			}
			out[key] = n
		}
	}
	return out
}

const size = `(\d+(?:\.\d+)?) (bytes|KiB|MiB|GiB)`

// triageFindings reads the findings of a JSON golden as maps.
func triageFindings(t *testing.T, golden string) []map[string]any {
	t.Helper()
	var r struct {
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(testdataText(t, "triage", golden)), &r); err != nil {
		t.Fatal(err)
	}
	return r.Findings
}

func checkFinding(t *testing.T, golden string, f map[string]any, nums map[string]int64, cause string) {
	t.Helper()
	for k, v := range nums {
		if got, ok := f[k].(float64); !ok || int64(got) != v {
			t.Errorf("%s: %s = %v, the raw message says %d", golden, k, f[k], v)
		}
	}
	if f["cause"] != cause {
		t.Errorf("%s: cause %v, the rules by hand give %s", golden, f["cause"], cause)
	}
}

func TestTriageGoldenWitness(t *testing.T) {
	// training-log.txt: a 2.x message, then an NCCL WARN line.
	train := rawNumbers(t, "testdata/triage/training-log.txt", map[string]string{
		"tried_bytes":                `Tried to allocate ` + size,
		"total_bytes":                `total capacity of ` + size,
		"free_bytes":                 `of which ` + size + ` is free`,
		"process_in_use_bytes":       `this process has ` + size + ` memory in use`,
		"allocated_bytes":            `Of the allocated memory ` + size,
		"reserved_unallocated_bytes": `and ` + size + ` is reserved by PyTorch but unallocated`,
	})
	fs := triageFindings(t, "training-log.json")
	if len(fs) != 2 {
		t.Fatalf("training-log.json: %d findings, the log holds 2 messages (the OOM and the NCCL WARN line)", len(fs))
	}
	// Reserved but unallocated 7.10 GiB ≥ the 2.50 GiB request and
	// ≥ min(1 GiB, 10 % of 79.19 GiB): fragmentation (rule 3).
	if train["reserved_unallocated_bytes"] < train["tried_bytes"] {
		t.Fatal("the hand rule's premise does not hold")
	}
	checkFinding(t, "training-log.json", fs[0], train, "fragmentation")
	// An NCCL WARN line with a figure: NCCL's own allocation failed.
	if fs[1]["kind"] != "nccl" || fs[1]["cause"] != "capacity" {
		t.Errorf("training-log.json: second finding %v / %v, want nccl / capacity", fs[1]["kind"], fs[1]["cause"])
	}
	out := testdataText(t, "triage", "training-log.out")
	for k, v := range train {
		if !strings.Contains(out, fmt.Sprintf("= %d B", v)) {
			t.Errorf("training-log.out lacks %s = %d B", k, v)
		}
	}
	if !strings.Contains(out, "Cause: fragmentation") {
		t.Error("training-log.out does not say fragmentation")
	}

	// eval-1x.txt: a 1.x message. Reserved − allocated = 7.21 − 7.10 GiB is
	// under min(1 GiB, 10 % of 7.79 GiB); no process is listed; free 12.50
	// MiB < the 20 MiB request; the message says what is allocated:
	// capacity (rule 10). --when eval puts inference-mode first.
	eval := rawNumbers(t, "testdata/triage/eval-1x.txt", map[string]string{
		"tried_bytes":             `Tried to allocate ` + size,
		"total_bytes":             size + ` total capacity`,
		"already_allocated_bytes": size + ` already allocated`,
		"free_bytes":              size + ` free`,
		"reserved_total_bytes":    size + ` reserved in total by PyTorch`,
	})
	fs = triageFindings(t, "eval-1x-when-eval.json")
	if len(fs) != 1 {
		t.Fatalf("eval-1x-when-eval.json: %d findings, want 1", len(fs))
	}
	checkFinding(t, "eval-1x-when-eval.json", fs[0], eval, "capacity")
	if fx, _ := fs[0]["fixes"].([]any); len(fx) == 0 || fx[0].(map[string]any)["id"] != "inference-mode" {
		t.Errorf("eval-1x-when-eval.json: first fix %v, want inference-mode (docs/triage.md#when-it-failed)", fx)
	}
	if out := testdataText(t, "triage", "eval-1x-when-eval.out"); !strings.Contains(out, "Cause: capacity") ||
		!strings.Contains(out, fmt.Sprintf("= %d B", eval["reserved_total_bytes"])) {
		t.Error("eval-1x-when-eval.out lacks the cause or the reserved total")
	}

	// vllm.txt: the KV-cache check (kv-cache-budget).
	vllm := rawNumbers(t, "testdata/triage/vllm.txt", map[string]string{
		"max_model_len":           `max seq len \((\d+)\)`,
		"kv_needed_bytes":         `\(` + size + ` KV cache is needed`,
		"kv_available_bytes":      `available KV cache memory \(` + size + `\)`,
		"estimated_max_model_len": `maximum model length is (\d+)`,
	})
	fs = triageFindings(t, "vllm.json")
	if len(fs) != 1 {
		t.Fatalf("vllm.json: %d findings, want 1", len(fs))
	}
	checkFinding(t, "vllm.json", fs[0], vllm, "kv-cache-budget")

	// logits.txt with Llama 3.1 8B, batch 4, sequence 2048: the fp32
	// logits b·s·V·4 bytes are a whole number of 2 MiB pages, and print
	// as the request (3.91 GiB).
	logits := int64(4 * 2048 * 128256 * 4)
	req := rawNumbers(t, "testdata/triage/logits.txt", map[string]string{"tried": `Tried to allocate ` + size})["tried"]
	if d := logits - req; logits%(2<<20) != 0 || d < -(1<<30)/200 || d > (1<<30)/200 {
		t.Fatalf("the hand calculation does not match the message: %d B vs %d B printed", logits, req)
	}
	if out := testdataText(t, "triage", "logits-setup.out"); !strings.Contains(out, fmt.Sprintf("logits in fp32 (or their softmax / gradient): %d B", logits)) {
		t.Errorf("logits-setup.out does not match the %d B fp32 logits", logits)
	}
}
