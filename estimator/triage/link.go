package triage

import (
	"fmt"
	"math"
	"net/url"
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
}

// EstimatorParams returns the /estimate parameters f implies, and false when
// the message says nothing the estimator can use (no capacity).
//
// gpu is the catalog GPU whose capacity matches the printed total within
// ±0.015 GiB, else the printed total itself (the estimator accepts a
// capacity such as "23.63GiB"). headroom covers memory the message shows
// held outside this process's PyTorch (other processes, context and
// libraries), as a percentage of the card, at least the estimator's default.
// The estimator has no separate "memory used by others" parameter, so
// headroom carries it.
func EstimatorParams(f *Finding) (EstimatorLink, bool) {
	var l EstimatorLink
	add := func(k, v, why string) {
		l.Params = append(l.Params, [2]string{k, v})
		l.Reasons = append(l.Reasons, why)
	}
	tot, ok := val(f.TotalBytes)
	if !ok {
		tot, ok = val(f.MaxAllowedBytes)
		if !ok {
			return l, false
		}
		add("gpu", printedGiB(f, "max_allowed_bytes", tot), "the MPS allocator's max allowed, taken as the capacity (Apple GPUs are not in the catalog)")
	} else if g, found := closestGPU(tot); found {
		add("gpu", g.ID, fmt.Sprintf("the printed total capacity %s matches the %s (%s)", hb(tot), g.Name, hb(float64(g.CapacityBytes))))
	} else {
		add("gpu", printedGiB(f, "total_bytes", tot), "the printed total capacity; no catalog GPU reports this size")
	}
	if f.Backend == "vllm" {
		add("mode", estimator.ModeInfer, "vLLM serves inference")
	}
	if held, why := heldElsewhere(f); held > 0 && tot > 0 {
		pct := math.Ceil(100 * held / tot)
		def := estimator.DefaultRequest().Headroom
		if pct > def && pct < 100 {
			add("headroom", ftoa(pct), fmt.Sprintf("%s = %s is %.1f %% of the card: the estimate should leave it free", why, hb(held), 100*held/tot))
		}
	}
	var q []string
	for _, p := range l.Params {
		q = append(q, url.QueryEscape(p[0])+"="+url.QueryEscape(p[1]))
	}
	l.Query = strings.Join(q, "&")
	return l, true
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
	if f.Kind == "vllm-startup" && okT && okF {
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
