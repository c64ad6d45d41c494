package estimator

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
)

// startupLog is one line of testdata/vllm-startup-logs.jsonl: a real vLLM
// or SGLang start-up from a public source (its source field links each).
type startupLog struct {
	ID        string   `json:"id"`
	Status    string   `json:"status"`
	KVGiB     *float64 `json:"kv_cache_gib"`
	KVTokens  *int64   `json:"kv_cache_tokens"`
	Blocks    *int64   `json:"gpu_blocks"`
	BlockSize *int64   `json:"block_size"`
	Conc      *float64 `json:"max_concurrency"`
	ConcLen   *int64   `json:"max_concurrency_tokens_per_request"`
	Source    struct {
		URL string `json:"url"`
	} `json:"source"`
}

func readStartupLogs(t *testing.T) map[string]startupLog {
	t.Helper()
	f, err := os.Open("testdata/vllm-startup-logs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	logs := map[string]startupLog{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l startupLog
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		logs[l.ID] = l
	}
	return logs
}

// printed is what the log says of its KV cache: tokens where it prints
// them, from its blocks (16 tokens each unless block_size says) or its
// concurrency, else GiB.
func printed(l startupLog) (stat string, value float64) {
	switch {
	case l.KVTokens != nil:
		return "kv_tokens", float64(*l.KVTokens)
	case l.Blocks != nil:
		bs := int64(16)
		if l.BlockSize != nil {
			bs = *l.BlockSize
		}
		return "kv_tokens", float64(*l.Blocks * bs)
	case l.Conc != nil && l.ConcLen != nil:
		return "kv_tokens", math.Round(*l.Conc * float64(*l.ConcLen))
	}
	return "kv_bytes", *l.KVGiB * gibF
}

// TestServingAgainstStartupLogs reproduces the KV cache of real vLLM and
// SGLang start-ups: tokens where the log prints them (or its blocks or
// concurrency), GiB where it prints only those. Most must be within 10 %,
// and every log's verdict (started or failed) must match. The measured
// values come from the log file here, not from servingSetups' copy.
func TestServingAgainstStartupLogs(t *testing.T) {
	logs := readStartupLogs(t)
	byID := map[string]Measured{}
	for _, m := range MeasuredSetups() {
		byID[m.ID] = m
	}
	var within, compared int
	table := []string{fmt.Sprintf("| %-62s | %-9s | %14s | %14s | %8s |", "log", "compared", "printed", "estimate", "error")}
	skipped := map[string]string{
		"vllm-i13074-16xh20-deepseek-r1-tp8-pp2":           "pipeline parallelism (pp 2) is not modelled",
		"vllm-file-arm-dgx-spark-mistral-7b-gptq-len32768": "unified memory: the GPU's total is not printed",
	}
	for id, why := range skipped {
		table = append(table, fmt.Sprintf("| %-62s | %-9s | %14s | %14s | %8s | not compared: %s", id, "-", "-", "-", "-", why))
	}
	ids := make([]string, 0, len(logs))
	for id := range logs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		l := logs[id]
		m, ok := byID[id]
		if !ok {
			if skipped[id] == "" {
				t.Errorf("log %s has no measured setup and no reason to skip it", id)
			}
			continue
		}
		stat, value := printed(l)
		if m.Stat != stat || math.Abs(m.Value-value) > 0.5 || m.Source != l.Source.URL {
			t.Errorf("%s: setup says %s %.0f from %s, the log %s %.0f from %s", id, m.Stat, m.Value, m.Source, stat, value, l.Source.URL)
		}
		res := mustEstimate(t, queryRequest(t, m.Query))
		failed := strings.HasPrefix(l.Status, "failed")
		if failed != (res.Serving.Error != "") {
			t.Errorf("%s: status %q, estimate error %q", id, l.Status, res.Serving.Error)
		}
		compared++
		unit, scale := "tokens", 1.0
		if stat == "kv_bytes" {
			unit, scale = "GiB", gibF
		}
		switch {
		case value <= 0:
			// Nothing was left for the cache: the verdict is the comparison.
			within++
			table = append(table, fmt.Sprintf("| %-62s | %-9s | %14.2f | %14.2f | %8s | both fail to start", id, "verdict", value/scale, m.Estimate/scale, "-"))
		default:
			mark := ""
			if math.Abs(m.Error) <= 0.10 {
				within++
			} else {
				mark = " ✗ " + m.Note
			}
			table = append(table, fmt.Sprintf("| %-62s | %-9s | %14.2f | %14.2f | %+7.1f%% |%s", id, unit, value/scale, m.Estimate/scale, 100*m.Error, mark))
		}
	}
	t.Logf("KV cache, estimate vs printed (%d of %d within 10 %%):\n%s", within, compared, strings.Join(table, "\n"))
	if within*3 < compared*2 {
		t.Errorf("%d of %d logs within 10 %%, want at least two thirds", within, compared)
	}
}
