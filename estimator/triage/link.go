package triage

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	"oomscope/estimator"
)

// gpuMatchTolerance is how far a catalog GPU's capacity may be from the
// printed total and still be taken for it: the printed value's rounding
// (±0.005 GiB) plus a little for driver differences.
const gpuMatchTolerance = 0.015 * (1 << 30)

// EstimatorLink is what a message tells the estimator: the GPU it ran on and
// how much of it was unavailable, as /estimate query parameters in the
// estimator's vocabulary (estimator.Keys), each with the reason.
type EstimatorLink struct {
	// Params are key/value pairs in the estimator's vocabulary.
	Params [][2]string `json:"params"`
	// Reasons explains each parameter, in the same order.
	Reasons []string `json:"reasons"`
	// Query is Params encoded in order, e.g. "gpu=a100-80gb&headroom=12".
	Query string `json:"query"`
	// Compare lists numbers the message or its log printed that the
	// estimate computes too (vLLM's KV cache), to check it against them.
	Compare []Printed `json:"compare,omitempty"`
	// Notes say what the link could not carry and why.
	Notes []string `json:"notes,omitempty"`
}

// Printed is a number a message printed that the estimator computes too.
type Printed struct {
	// Key is the estimate's JSON key, e.g. "serving.kv_cache_tokens".
	Key string `json:"key"`
	// Label names it in words.
	Label string `json:"label"`
	// Printed is the number as printed, e.g. "23648" or "5.59 GiB".
	Printed string `json:"printed"`
}

// EstimatorParams returns the /estimate parameters f implies, and false when
// the message says nothing the estimator can use (no capacity, not vLLM).
//
// gpu is the catalog GPU whose capacity matches the printed total within
// ±0.015 GiB, else the printed total itself (the estimator accepts a
// capacity such as "23.63GiB"). headroom covers memory the message shows
// held outside this process's PyTorch (other processes, context and
// libraries), as a percentage of the card, at least the estimator's default.
// The estimator has no separate "memory used by others" parameter, so
// headroom carries it. vLLM's messages get a serving link (servingParams).
func EstimatorParams(f *Finding) (EstimatorLink, bool) {
	if f.Backend == BackendVLLM {
		return servingParams(f), true
	}
	var l EstimatorLink
	tot, ok := val(f.TotalBytes)
	if !ok {
		tot, ok = val(f.MaxAllowedBytes)
		if !ok {
			return l, false
		}
		l.add("gpu", printedGiB(f, "max_allowed_bytes", tot), "the MPS allocator's max allowed, taken as the capacity (Apple GPUs are not in the catalog)")
	} else {
		l.addGPU(tot, printedGiB(f, "total_bytes", tot), "the printed total capacity")
	}
	if held, why := heldElsewhere(f); held > 0 && tot > 0 {
		pct := math.Ceil(100 * held / tot)
		def := estimator.DefaultRequest().Headroom
		if pct > def && pct < 100 {
			l.add("headroom", ftoa(pct), fmt.Sprintf("%s = %s is %.1f %% of the card: the estimate should leave it free", why, hb(held), 100*held/tot))
		}
	}
	l.encode()
	return l, true
}

// add appends one parameter and its reason.
func (l *EstimatorLink) add(k, v, why string) {
	l.Params = append(l.Params, [2]string{k, v})
	l.Reasons = append(l.Reasons, why)
}

// addGPU adds the catalog GPU of capacity tot, or the capacity as printed.
func (l *EstimatorLink) addGPU(tot float64, printed, what string) {
	if g, found := closestGPU(tot); found {
		l.add("gpu", g.ID, fmt.Sprintf("%s %s matches the %s (%s)", what, hb(tot), g.Name, hb(float64(g.CapacityBytes))))
	} else {
		l.add("gpu", printed, what+"; no catalog GPU reports this size")
	}
}

// encode sets Query from Params.
func (l *EstimatorLink) encode() {
	var q []string
	for _, p := range l.Params {
		q = append(q, url.QueryEscape(p[0])+"="+url.QueryEscape(p[1]))
	}
	l.Query = strings.Join(q, "&")
}

// servingParams is the mode=serve link of a vLLM message: the card (the
// start-up check's total, or total_gpu_memory in the log), the model the
// log names (vllm_setup.go), and the settings the message or, failing it,
// the log states; the KV numbers printed go to Compare. Each parameter is
// one the estimator accepts, and together they make an estimate it can
// compute: a value it rejects is left out with a note.
func servingParams(f *Finding) EstimatorLink {
	var l EstimatorLink
	set := f.settings
	logSays := func(s setting) string { return fmt.Sprintf("the log: %s", clipPhrase(s.phrase)) }
	try := func(k, v, why string) {
		r := estimator.DefaultRequest()
		if err := r.Set(k, v); err != nil {
			l.Notes = append(l.Notes, fmt.Sprintf("%s=%s is left out: %v", k, v, err))
			return
		}
		l.add(k, v, why)
	}
	if tot, ok := val(f.TotalBytes); ok {
		l.addGPU(tot, printedGiB(f, "total_bytes", tot), "the printed total memory")
	} else if s, ok := set["total_gpu_memory"]; ok {
		if b, err := parseSize(strings.TrimSuffix(s.value, "GiB"), "GiB"); err == nil && strings.HasSuffix(s.value, "GiB") {
			l.addGPU(b.Float64(), s.value, fmt.Sprintf("the log's total_gpu_memory (%s)", clipPhrase(s.phrase)))
		}
	}
	if len(l.Params) == 0 {
		l.Notes = append(l.Notes, "neither the message nor its log prints the card's memory: choose the GPU in the estimator")
	}
	l.add("mode", estimator.ModeServe, "vLLM serves: it budgets gpu_memory_utilization × the card for weights, activations and KV cache")
	l.add("engine", estimator.EngineVLLM, "the message is vLLM's")
	quant, quantWhy := "", ""
	if s, ok := set["model"]; ok {
		m, q, found := catalogModel(s.value)
		switch {
		case found:
			l.add("model", m.ID, fmt.Sprintf("%s (the catalog's %s)", logSays(s), m.Name))
		default:
			l.Notes = append(l.Notes, fmt.Sprintf("the log names the model %q, which is not in the catalog: choose custom and paste its config.json", s.value))
		}
		if q != "" && found {
			quant, quantWhy = q, fmt.Sprintf("the checkpoint's name %q ends in its quantization", s.value)
		}
	}
	if s, ok := set["quant"]; ok {
		if q := vllmQuant("quant", s.value); q != "" {
			quant, quantWhy = q, logSays(s)
		}
	}
	if quant != "" {
		try("quant", quant, quantWhy)
	}
	if s, ok := set["tp"]; ok {
		try("tp", s.value, logSays(s))
	}
	if f.MaxModelLen != nil {
		try("max_model_len", itoa(*f.MaxModelLen), "the message's max seq len")
	} else if s, ok := set["max_model_len"]; ok {
		try("max_model_len", s.value, logSays(s))
	}
	if f.GPUMemoryUtilization != nil {
		try("gpu_memory_utilization", ftoa(*f.GPUMemoryUtilization), "the message's desired GPU memory utilization")
	} else if s, ok := set["gpu_memory_utilization"]; ok {
		try("gpu_memory_utilization", s.value, logSays(s))
	}
	if s, ok := set["kv_dtype"]; ok {
		if q := vllmQuant("kv_dtype", s.value); q != "" {
			try("kv_dtype", q, logSays(s))
		}
	}
	for _, k := range []string{"max_num_seqs", "max_num_batched_tokens", "block_size"} {
		if s, ok := set[k]; ok {
			try(k, s.value, logSays(s))
		}
	}
	l.dropUnestimable()
	l.compare(f)
	l.encode()
	return l
}

// dropUnestimable leaves out max_model_len when the estimate would refuse
// it (longer than the model's context): without the model named, the
// estimator's default model may be shorter than the user's.
func (l *EstimatorLink) dropUnestimable() {
	q := url.Values{}
	for _, p := range l.Params {
		q.Set(p[0], p[1])
	}
	r, err := estimator.ParseQuery(q)
	if err == nil {
		_, err = estimator.Estimate(r)
	}
	var fe *estimator.FieldError
	if !errors.As(err, &fe) || fe.Key != "max_model_len" {
		return
	}
	then := "; choose the model, then set it"
	if q.Has("model") {
		then = ""
	}
	for i, p := range l.Params {
		if p[0] == "max_model_len" {
			l.Notes = append(l.Notes, fmt.Sprintf("max_model_len=%s is left out: %s%s", p[1], fe.Msg, then))
			l.Params = slices.Delete(l.Params, i, i+1)
			l.Reasons = slices.Delete(l.Reasons, i, i+1)
			return
		}
	}
}

// compare lists the KV-cache numbers f or its log printed.
func (l *EstimatorLink) compare(f *Finding) {
	add := func(key, label, printed string) {
		l.Compare = append(l.Compare, Printed{Key: key, Label: label, Printed: printed})
	}
	printed := func(key string) string {
		for _, fd := range f.Fields {
			if fd.Key == key {
				return fd.Printed
			}
		}
		return ""
	}
	if f.KVCacheTokens != nil {
		add("serving.kv_cache_tokens", "Tokens the KV cache holds", printed("kv_cache_tokens"))
	} else if s, ok := f.settings["kv_cache_tokens"]; ok {
		add("serving.kv_cache_tokens", "Tokens the KV cache holds", s.value)
	}
	if f.KVAvailableBytes != nil {
		add("serving.kv_cache_bytes", "KV cache memory", printed("kv_available_bytes"))
	} else if s, ok := f.settings["kv_cache_bytes"]; ok {
		add("serving.kv_cache_bytes", "KV cache memory", s.value+" GiB")
	}
	if s, ok := f.settings["kv_blocks"]; ok {
		add("serving.kv_blocks", "KV cache blocks", s.value)
	}
	if f.KVNeededBytes != nil {
		add("serving.request_kv_bytes", "KV cache one max_model_len request needs", printed("kv_needed_bytes"))
	}
	if f.EstimatedMaxModelLen != nil {
		add("max_seq", "Longest max_model_len that fits", printed("estimated_max_model_len"))
	}
}

// clipPhrase is a phrase of the paste on one line, at most 80 bytes.
func clipPhrase(phrase string) string {
	p := strings.Join(strings.Fields(phrase), " ")
	if len(p) > 80 {
		p = p[:77] + "..."
	}
	return p
}

// closestGPU finds the catalog GPU whose capacity is nearest to tot, within
// gpuMatchTolerance.
func closestGPU(tot float64) (estimator.GPU, bool) {
	best, bestD := estimator.GPU{}, math.Inf(1)
	for _, g := range estimator.GPUs() {
		if d := math.Abs(float64(g.CapacityBytes) - tot); d < bestD {
			best, bestD = g, d
		}
	}
	return best, bestD <= gpuMatchTolerance
}

// printedGiB renders a capacity as the estimator reads it, e.g. "23.63GiB",
// using the message's own digits when it printed GiB.
func printedGiB(f *Finding, key string, x float64) string {
	for _, fd := range f.Fields {
		if fd.Key == key {
			if num, unit, ok := strings.Cut(fd.Printed, " "); ok && (unit == "GiB" || unit == "GB") {
				return num + "GiB"
			}
		}
	}
	return fmt.Sprintf("%.2fGiB", x/gib)
}

// heldElsewhere is the memory the message shows unavailable to this
// process's PyTorch: total − free − what PyTorch reserved (other processes,
// the CUDA context, libraries, the display), or for vLLM's start-up check
// total − free; for MPS the other allocations.
func heldElsewhere(f *Finding) (float64, string) {
	tot, okT := val(f.TotalBytes)
	free, okF := val(f.FreeBytes)
	if f.Kind == KindVLLMStartup && okT && okF {
		return tot - free, "memory in use before vLLM started (total − free)"
	}
	if okT && okF {
		if rt, ok := val(f.ReservedTotalBytes); ok {
			return tot - free - rt, "total − free − reserved by PyTorch"
		}
		for _, d := range f.Derived {
			if d.Name == "reserved_total" {
				return tot - free - float64(d.Bytes), "total − free − reserved by PyTorch"
			}
		}
		if a, ok := val(f.AllocatedBytes); ok {
			return tot - free - a, "total − free − allocated by PyTorch"
		}
		if a, ok := val(f.AlreadyAllocatedBytes); ok {
			return tot - free - a, "total − free − allocated by PyTorch"
		}
	}
	if oa, ok := val(f.OtherAllocationsBytes); ok {
		return oa, "other allocations (outside PyTorch's MPS heaps)"
	}
	return 0, ""
}
