package triage

import (
	"fmt"
	"math"
	"strings"

	"oomscope/bytesize"
)

// Thresholds of the cause rules. Each is stated in the rule text it feeds.
const (
	gib = float64(1 << 30)
	mib = float64(1 << 20)
	// bogusFactor: a request this many times the card is a size bug.
	bogusFactor = 10.0
	// largestCard is the largest single-accelerator memory sold (B300,
	// MI355X: 288 GB); a request ≥ bogusFactor × largestCard is a size bug
	// even when the message does not print the card's size.
	largestCard = 288e9
	// guard1EB is PyTorch's "more than 1EB" guard (2^60 bytes).
	guard1EB = float64(1 << 60)
	// fragMinGiB and fragMinShare: reserved-but-unallocated must be at least
	// min(1 GiB, 10 % of the card) to be called fragmentation.
	fragMinGiB   = 1.0
	fragMinShare = 0.10
	// outsideMinGiB and outsideMinShare: memory outside this process's
	// allocator must be ≥ max(1.5 GiB, 30 % of the card) to infer another
	// process when the message has no process list (a CUDA context, cuBLAS
	// and cuDNN workspaces and a desktop take 0.3–1.5 GiB).
	outsideMinGiB   = 1.5
	outsideMinShare = 0.30
	// nonPyTorchMinGiB and nonPyTorchMinShare: this process's memory beyond
	// what PyTorch reserved must be ≥ max(2 GiB, 10 % of the card).
	nonPyTorchMinGiB   = 2.0
	nonPyTorchMinShare = 0.10
	// selfSlackGiB: a "Process N" figure within [reserved, reserved + 2 GiB]
	// is taken to be this process (containers hide its pid).
	selfSlackGiB = 2.0
	// freeSlack: free ≥ 1.05 × request means the numbers cannot explain the
	// failure.
	freeSlack = 1.05
	// drivePage is the driver's allocation granularity: cudaMalloc takes
	// whole 2 MiB pages, so a 1.12 MiB request needs 2 MiB of free memory.
	drivePage = 2 * mib
	// freeHeadroom: free must also exceed the page-rounded request by one
	// more page before the numbers are said not to explain the failure.
	freeHeadroom = drivePage
	// tinyRequest is the allocator's large-pool block (20 MiB): requests this
	// small fail only on an already full card.
	tinyRequest = 20 * mib
)

// diag carries the numbers a finding's rules compare.
type diag struct {
	f *Finding
}

// val returns b as a float and whether it is present.
func val(b *Bytes) (float64, bool) {
	if b == nil {
		return 0, false
	}
	return b.Float64(), true
}

// hb renders a byte count for a why text, in binary units.
func hb(x float64) string {
	if math.Abs(x) < 0x1p63 {
		return bytesize.Format(int64(math.Round(x)), bytesize.Binary)
	}
	return fmt.Sprintf("%.2f GiB", x/gib)
}

// saturate rounds x to an int64, saturating at the ends of its range
// instead of wrapping (a converted float past 2^63 is undefined in Go and
// becomes -2^63 on amd64); NaN becomes 0.
func saturate(x float64) int64 {
	switch {
	case x != x:
		return 0
	case x >= 0x1p63:
		return math.MaxInt64
	case x <= -0x1p63:
		return math.MinInt64
	}
	return int64(math.Round(x))
}

// addSat returns a + b saturated at the ends of int64.
func addSat(a, b int64) int64 {
	c := a + b
	switch {
	case a > 0 && b > 0 && c < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && c >= 0:
		return math.MinInt64
	}
	return c
}

// num is a named number of the evidence; one beyond int64 is saturated,
// and its formula says so.
func num(name string, x float64, formula string) Number {
	if math.Abs(x) >= 0x1p63 {
		formula += fmt.Sprintf(" (%s: beyond ±(2^63 − 1) B, shown saturated)", hb(x))
	}
	return Number{Name: name, Bytes: saturate(x), Formula: formula}
}

func (d *diag) set(c Cause, rule, why string, evidence ...Number) {
	d.f.Cause, d.f.Rule, d.f.Why, d.f.Evidence = c, rule, why, evidence
}

// diagnose assigns the cause of f from its numbers.
func diagnose(f *Finding) {
	d := &diag{f: f}
	switch {
	case f.Kind == KindMPS && strings.HasPrefix(f.Variant, "Invalid buffer size"):
		d.set(CauseCapacity, "a single Metal buffer larger than the device's maxBufferLength cannot be created",
			"one buffer of "+f.TriedBytes.Human()+" exceeds what Metal allows in a single allocation: split the tensor (smaller batch or resolution, chunked computation)")
	case f.Kind == KindMPS:
		d.mps()
	case f.Backend == BackendCPU:
		d.cpu()
	case f.Kind == KindVLLM:
		d.vllmKV()
	case f.Kind == KindVLLMStartup:
		d.vllmStart()
	case f.Backend == BackendXLA || f.Kind == KindCuPy:
		d.xla()
	case f.Backend == BackendTF:
		d.tf()
	case f.Kind == KindCUBLAS:
		why := "CUBLAS_STATUS_ALLOC_FAILED comes from cuBLAS's own allocation outside PyTorch's cache, when the GPU is already full (often another job on the same GPU); no figures are printed"
		if !strings.HasSuffix(f.Variant, "ALLOC_FAILED") {
			why = "CUBLAS_STATUS_NOT_INITIALIZED at cublasCreate usually means the handle's workspace did not fit on an already full GPU (a broken CUDA install is the other cause); no figures are printed"
		}
		d.set(CauseCapacity, "cuBLAS could not create its handle or workspace: the first matmul found the card already full", why)
	case f.Kind == KindCUDNN:
		d.set(CauseUnknown, "cuDNN allocation failures print no figures",
			"cuDNN failed to allocate its handle or workspace outside the caching allocator's view ("+f.Variant+"); the message has no sizes to decide between a full card and another cause")
	case f.Kind == KindNCCL:
		if strings.HasPrefix(f.Variant, "NCCL WARN") {
			why := "NCCL's own CUDA allocation failed"
			if t, ok := val(f.TriedBytes); ok {
				why += " (" + hb(t) + ")"
			}
			d.set(CauseCapacity, "NCCL allocates its buffers outside PyTorch's cache; when that fails the training job has filled the GPU",
				why+": the job left no headroom for NCCL's buffers, which live outside PyTorch's caching allocator")
		} else {
			d.set(CauseUnknown, "NCCL wrapper messages print no memory figures",
				"an NCCL CUDA call ran out of memory; the wrapper prints no sizes (run with NCCL_DEBUG=WARN to see NCCL's own lines)")
		}
	case f.Kind.IsErrorPlain():
		d.set(CauseUnknown, "a plain CUDA runtime out-of-memory error prints no figures",
			"\"CUDA error: out of memory\" comes from a path outside the caching allocator (context creation, a library workspace, pinned memory, graph capture, an extension); it prints no sizes")
	case f.Kind == KindCUDALegacy:
		d.set(CauseUnknown, "THC-era (PyTorch ≤ 0.4) errors print no figures",
			"cudaErrorMemoryAllocation (code 2) from PyTorch ≤ 0.4, with no sizes")
	case strings.Contains(f.Variant, "IPEX 4GB"):
		d.set(CauseCapacity, "Intel's IPEX allocator refuses any single block above 4 GiB",
			"the request is larger than the 4 GiB single-allocation limit of this Intel GPU platform: split the tensor (smaller batch, chunked computation)")
	default:
		d.alloc()
	}
}

// alloc applies the caching-allocator rules, in order.
func (d *diag) alloc() {
	f := d.f
	t, hasT := val(f.TriedBytes)
	tot, hasTot := val(f.TotalBytes)
	free, hasFree := val(f.FreeBytes)
	a, hasA := val(f.AllocatedBytes)
	aName := "allocated"
	if !hasA {
		a, hasA = val(f.AlreadyAllocatedBytes)
		aName = "already allocated"
	}
	ru, hasRU := val(f.ReservedUnallocatedBytes)
	rt, hasRT := val(f.ReservedTotalBytes)
	switch {
	case hasRT && hasA && !hasRU:
		ru, hasRU = rt-a, true
		f.Derived = append(f.Derived, num("reserved_unallocated", ru, fmt.Sprintf("reserved in total − already allocated = %s − %s", hb(rt), hb(a))))
	case hasRU && hasA && !hasRT:
		rt, hasRT = a+ru, true
		f.Derived = append(f.Derived, num("reserved_total", rt, fmt.Sprintf("%s + reserved but unallocated = %s + %s", aName, hb(a), hb(ru))))
	}
	p, hasP := val(f.ProcessInUseBytes)
	if hasP && p == 0 {
		hasP = false // NVML printed 0 bytes: unknown, not zero
		f.Derived = append(f.Derived, num("process_in_use", 0, "NVML reported 0 bytes for this process: treated as unknown"))
	}
	var selfPID int64 = -1
	if !hasP && hasRT && len(f.OtherProcesses) > 0 && f.ProcessInUseBytes == nil {
		best := math.Inf(1)
		for _, pr := range f.OtherProcesses {
			x := pr.Bytes.Float64()
			if x >= rt && x-rt <= selfSlackGiB*gib && x-rt < best {
				best, selfPID = x-rt, pr.PID
			}
		}
		if selfPID >= 0 {
			p, hasP = rt+best, true
			f.Derived = append(f.Derived, num("self_process", p, fmt.Sprintf("no \"this process\" sentence; Process %d holds %s ≈ reserved %s + %s of context: taken to be this process (PID namespace of a container)", selfPID, hb(p), hb(rt), hb(best))))
		}
	}
	others, hasOthers := 0.0, false
	for _, pr := range f.OtherProcesses {
		if pr.PID != selfPID {
			others += pr.Bytes.Float64()
			hasOthers = true
		}
	}
	if hasOthers {
		f.Derived = append(f.Derived, num("other_processes_total", others, "sum of the other \"Process N has … memory in use\" figures"))
	}
	np, hasNP := 0.0, false
	if hasP && hasRT {
		np, hasNP = p-rt, true
		f.Derived = append(f.Derived, num("non_pytorch_in_process", np, fmt.Sprintf("this process in use − reserved by PyTorch = %s − %s (CUDA context, cuBLAS/cuDNN workspaces, NCCL, other libraries)", hb(p), hb(rt))))
	}
	// Memory held outside this process's allocator.
	mine, mineName := 0.0, ""
	switch {
	case hasP:
		mine, mineName = p, "this process"
	case hasRT:
		mine, mineName = rt, "reserved by PyTorch"
	case hasA:
		mine, mineName = a, aName+" by PyTorch"
	}
	outside, hasOutside := 0.0, false
	if hasTot && hasFree && mineName != "" {
		outside, hasOutside = tot-free-mine-others, true
		formula := fmt.Sprintf("total − free − %s = %s − %s − %s", mineName, hb(tot), hb(free), hb(mine))
		if hasOthers {
			formula += " − other processes " + hb(others)
		}
		f.Derived = append(f.Derived, num("outside_this_process", outside, formula))
	}

	// Intel's XPU wordings print no free figure (IPEX's parenthesis never
	// had one; torch 2.8 dropped "of which … is free"), and the allocator
	// itself only estimates free as total − reserved: use that estimate.
	freeEstimated := false
	if f.Backend == BackendXPU && !hasFree && hasTot && mineName != "" {
		free, hasFree, freeEstimated = tot-mine, true, true
		f.Derived = append(f.Derived, num("free_estimate", free, fmt.Sprintf("the XPU message prints no free figure: total − %s = %s − %s (an upper bound)", mineName, hb(tot), hb(mine))))
	}
	freeName := "reported free"
	if freeEstimated {
		freeName = "estimated free (total − " + mineName + ")"
	}

	T := num("tried", t, "printed request")
	switch {
	case f.Kind == KindCUDA1EB:
		d.set(CauseBogusSize, "request ≥ 2^60 B (PyTorch's 1 EB guard): a size computed from garbage, not memory pressure",
			"PyTorch refused a request of more than 1 EB before touching the device: the size was computed from a wrong shape or an overflow (e.g. right after an NCCL timeout)",
			num("guard", guard1EB, "2^60 B"))
	case hasT && (t >= guard1EB || hasTot && t >= bogusFactor*tot || !hasTot && t >= bogusFactor*largestCard):
		lim, limName := bogusFactor*tot, fmt.Sprintf("10 × total capacity = 10 × %s", hb(tot))
		if !hasTot {
			lim, limName = bogusFactor*largestCard, "10 × 288 GB (the largest single accelerator; the message does not print the card)"
		}
		d.set(CauseBogusSize, "request ≥ 10 × total capacity: a shape or size bug, not memory pressure",
			fmt.Sprintf("the request %s is ≥ %s = %s: an N² tensor from a wrong count, a wrong reshape or an overflow", hb(t), limName, hb(lim)),
			T, num("limit", lim, limName))
	case hasT && hasTot && t > tot:
		d.set(CauseCapacity, "request > total capacity: one tensor larger than the whole card cannot fit, whatever is freed",
			fmt.Sprintf("the single request %s is %.1f × the card's total %s: shrink that tensor (batch, resolution, sequence length, chunking, SDPA instead of eager attention)", hb(t), t/tot, hb(tot)),
			T, num("total", tot, "printed total capacity"))
	case hasT && hasRU && ru >= t && ru >= math.Min(fragMinGiB*gib, fragMinShare*orInf(tot, hasTot)):
		floor := math.Min(fragMinGiB*gib, fragMinShare*orInf(tot, hasTot))
		d.set(CauseFragmentation, "reserved-but-unallocated ≥ request and ≥ min(1 GiB, 10 % of total): the cache holds enough bytes, but only in split blocks",
			fmt.Sprintf("%s is reserved by PyTorch but unallocated, ≥ the %s request and ≥ %s; after its flush-and-retry the allocator could not return these split blocks, so the request found no contiguous space: fragmentation", hb(ru), hb(t), hb(floor)),
			num("reserved_unallocated", ru, "reserved but unallocated"), T, num("floor", floor, "min(1 GiB, 10 % of total)"))
	case d.allowedLimit(t, hasT, rt, hasRT, a, hasA):
	case hasT && hasOthers && others >= t:
		d.set(CauseOtherProcess, "other processes on this GPU hold at least the request",
			fmt.Sprintf("%d other process(es) hold %s on this GPU, ≥ the %s request: freeing them (or using another GPU) gets past this step", countOthers(f, selfPID), hb(others), hb(t)),
			num("other_processes", others, "sum of Process N figures"), T)
	case hasT && hasOutside && !hasOthers && outside >= t && outside >= math.Max(outsideMinGiB*gib, outsideMinShare*tot):
		d.set(CauseOtherProcess, "no other process listed: total − free − this process ≥ request and ≥ max(1.5 GiB, 30 % of total), so memory is held outside this process (inferred)",
			fmt.Sprintf("%s of the %s card is neither free nor held by this process (%s − %s free − %s %s), ≥ the %s request and ≥ %s: another process (or another allocator in this process) holds it; the message lists no other process, so this is inferred",
				hb(outside), hb(tot), hb(tot), hb(free), hb(mine), mineName, hb(t), hb(math.Max(outsideMinGiB*gib, outsideMinShare*tot))),
			num("outside", outside, "total − free − "+mineName), T)
	case !hasT && hasOutside && !hasOthers && outside >= math.Max(outsideMinGiB*gib, outsideMinShare*tot):
		d.set(CauseOtherProcess, "no request and no other process listed: total − free − this process ≥ max(1.5 GiB, 30 % of total), so memory is held outside this process (inferred)",
			fmt.Sprintf("%s of the %s card is neither free nor held by this process (%s − %s free − %s %s), ≥ %s: another process (or another allocator in this process) holds it; the message names neither the request nor the processes, so this is inferred",
				hb(outside), hb(tot), hb(tot), hb(free), hb(mine), mineName, hb(math.Max(outsideMinGiB*gib, outsideMinShare*tot))),
			num("outside", outside, "total − free − "+mineName))
	case hasT && hasNP && np >= t && np >= math.Max(nonPyTorchMinGiB*gib, nonPyTorchMinShare*orZero(tot, hasTot)):
		d.set(CauseNonPyTorch, "this process holds much more than PyTorch reserved: non-PyTorch memory ≥ request and ≥ max(2 GiB, 10 % of total)",
			fmt.Sprintf("this process has %s in use but PyTorch reserved only %s: %s is held by the CUDA context, NCCL, cuBLAS/cuDNN workspaces or another library in the process, ≥ the %s request", hb(p), hb(rt), hb(np), hb(t)),
			num("non_pytorch", np, "this process − reserved"), T)
	case hasT && hasFree && free >= freeSlack*t && free >= pageRound(t)+freeHeadroom:
		d.set(CauseUnknown, "free ≥ 1.05 × request and ≥ the request rounded up to whole 2 MiB driver pages plus one page: the printed numbers cannot explain the failure",
			fmt.Sprintf("%s is %s, more than the %s request: free is sampled after the allocator's cleanup, so a transient peak, a per-process cap, a driver limit (e.g. Intel's ~4 GiB single-allocation limit, Windows/ROCm runtime) or a failure outside PyTorch is more likely than a full card", hb(free), freeName, hb(t)),
			num("free", free, "printed free"), T, num("request_in_pages", pageRound(t), "request rounded up to whole 2 MiB driver pages"))
	case hasT && t <= tinyRequest && !hasA && !hasRT && !hasP:
		d.set(CauseCapacity, "request ≤ 20 MiB and the message does not say what holds the card: the card was already full, and this allocation is only the last straw",
			fmt.Sprintf("only %s was requested (≤ one 20 MiB allocator block): the card was already full and whatever filled it is the culprit; the message does not say who holds the memory", hb(t)),
			T)
	case hasT || hasA || hasTot:
		d.capacity(t, hasT, tot, hasTot, free, hasFree, a, hasA, aName, ru, hasRU)
	default:
		d.set(CauseUnknown, "the message was cut before its figures",
			"only the head of the message survived, with no sizes to reason about; paste the full message")
	}
}

// allowedLimit applies the memory-fraction rules ("X allowed;" and the
// cudaMallocAsync "PyTorch limit") and reports whether one fired.
func (d *diag) allowedLimit(t float64, hasT bool, rt float64, hasRT bool, a float64, hasA bool) bool {
	f := d.f
	held, heldName := rt, "reserved"
	if !hasRT {
		held, heldName = a, "allocated"
	}
	if allowed, ok := val(f.AllowedBytes); ok && (hasRT || hasA) {
		// The printed figures carry ±0.005 of their unit, so allow 1 %.
		if hasT && held+t > 0.99*allowed || !hasT && held >= 0.9*allowed {
			rule := "reserved + request > allowed (within the 1 % the printed rounding allows): the set_per_process_memory_fraction cap binds, not the card"
			why := fmt.Sprintf("%s %s + %s request > %s allowed: torch.cuda.set_per_process_memory_fraction caps this process, so free device memory is irrelevant", hb(held), heldName, hb(t), hb(allowed))
			if !hasT {
				rule = "reserved ≥ 90 % of allowed: the set_per_process_memory_fraction cap binds, not the card"
				why = fmt.Sprintf("%s %s is %.1f %% of the %s allowed: torch.cuda.set_per_process_memory_fraction caps this process, so free device memory is irrelevant", hb(held), heldName, 100*held/allowed, hb(allowed))
			}
			d.set(CauseAllowedLimit, rule, why, num(heldName, held, "printed"), num("allowed", allowed, "printed allowed"))
			return true
		}
	}
	if limit, ok := val(f.LimitBytes); ok && hasT && hasA && limit < 0x1p63 && a+t > limit {
		d.set(CauseAllowedLimit, "allocated + request > PyTorch limit: the memory-fraction cap binds, not the card",
			fmt.Sprintf("%s allocated + %s requested > the %s PyTorch limit set by set_per_process_memory_fraction", hb(a), hb(t), hb(limit)),
			num("allocated", a, "printed"), num("limit", limit, "printed PyTorch limit"))
		return true
	}
	return false
}

// capacity explains the default verdict: the card is full of this
// process's own tensors.
func (d *diag) capacity(t float64, hasT bool, tot float64, hasTot bool, free float64, hasFree bool, a float64, hasA bool, aName string, ru float64, hasRU bool) {
	var parts []string
	if hasA && hasTot && tot > 0 {
		parts = append(parts, fmt.Sprintf("PyTorch tensors hold %s of the %s card (%.0f %%)", hb(a), hb(tot), 100*a/tot))
	}
	if hasRU {
		parts = append(parts, fmt.Sprintf("only %s is reserved but unallocated (too little to be fragmentation)", hb(ru)))
	}
	if hasT && hasFree {
		parts = append(parts, fmt.Sprintf("%s free < the %s request", hb(free), hb(t)))
	}
	if hasT && t <= tinyRequest {
		parts = append(parts, fmt.Sprintf("the %s request is tiny: it is only the last straw on a full card", hb(t)))
	}
	if len(parts) == 0 {
		parts = append(parts, "only the request survived in the message; a full card is the usual reason")
	}
	ev := []Number{}
	if hasT {
		ev = append(ev, num("tried", t, "printed request"))
	}
	if hasA {
		ev = append(ev, num(strings.ReplaceAll(aName, " ", "_"), a, "printed"))
	}
	if hasTot {
		ev = append(ev, num("total", tot, "printed total capacity"))
	}
	d.set(CauseCapacity, "no other rule fired: the card is full and this process's own tensors fill it; the workload does not fit as configured",
		strings.Join(parts, "; "), ev...)
}

// pageRound rounds a request up to whole driver pages (drivePage).
func pageRound(t float64) float64 { return math.Ceil(t/drivePage) * drivePage }

func orInf(x float64, ok bool) float64 {
	if ok {
		return x
	}
	return math.Inf(1)
}

func orZero(x float64, ok bool) float64 {
	if ok {
		return x
	}
	return 0
}

func countOthers(f *Finding, selfPID int64) int {
	n := 0
	for _, p := range f.OtherProcesses {
		if p.PID != selfPID {
			n++
		}
	}
	return n
}
