package triage

import (
	"fmt"
	"strings"
)

// mps applies the Apple MPS rules.
func (d *diag) mps() {
	f := d.f
	t, hasT := val(f.TriedBytes)
	ma, hasMA := val(f.MPSAllocatedBytes)
	oa, hasOA := val(f.OtherAllocationsBytes)
	mx, hasMX := val(f.MaxAllowedBytes)
	if hasMX {
		// max allowed = high-watermark ratio (default 1.7) × recommendedMaxWorkingSetSize.
		f.Derived = append(f.Derived, num("recommended_working_set", mx/1.7, fmt.Sprintf("max allowed / 1.7 (default PYTORCH_MPS_HIGH_WATERMARK_RATIO) = %s / 1.7: the Mac's recommended working set", hb(mx))))
	}
	if hasMA && hasOA {
		f.Derived = append(f.Derived, num("process_total", ma+oa, "MPS allocated + other allocations"))
	}
	T := num("tried", t, "printed request")
	switch {
	case hasT && hasMX && t >= bogusFactor*mx:
		d.set(CauseBogusSize, "request ≥ 10 × max allowed: a shape or size bug",
			fmt.Sprintf("the request %s is ≥ 10 × the %s max allowed", hb(t), hb(mx)), T, num("max_allowed", mx, "printed"))
	case hasT && hasMX && t > mx:
		d.set(CauseCapacity, "request > max allowed: one tensor larger than the whole allowance",
			fmt.Sprintf("the single request %s exceeds the %s the MPS allocator may use at all", hb(t), hb(mx)), T, num("max_allowed", mx, "printed"))
	case hasMA && hasOA && oa > ma:
		d.set(CauseNonPyTorch, "other allocations > MPS allocated: memory outside PyTorch's heaps dominates",
			fmt.Sprintf("%s of other allocations (Metal/MPSGraph outside PyTorch's heaps) vs %s in PyTorch's MPS heaps", hb(oa), hb(ma)),
			num("other_allocations", oa, "printed"), num("mps_allocated", ma, "printed"))
	case hasT && hasMA && hasOA && hasMX && ma+oa+t < 0.95*mx:
		d.set(CauseUnknown, "MPS allocated + other + request < 95 % of max allowed: the figures do not explain the failure (5 % covers the printed rounding)",
			fmt.Sprintf("%s + %s + %s is well under the %s allowed", hb(ma), hb(oa), hb(t), hb(mx)))
	default:
		why := "PyTorch's MPS heaps fill the allowance"
		if hasMA && hasMX && mx > 0 {
			why = fmt.Sprintf("PyTorch's MPS heaps hold %s of the %s allowed (%.0f %%)", hb(ma), hb(mx), 100*ma/mx)
		}
		if hasT && t <= tinyRequest {
			why += fmt.Sprintf("; the %s request is only the last straw", hb(t))
		}
		d.set(CauseCapacity, "MPS heaps fill the high-watermark allowance: the workload does not fit this Mac as configured", why,
			num("mps_allocated", ma, "printed"), num("max_allowed", mx, "printed"))
	}
}

// cpu explains host-memory failures.
func (d *diag) cpu() {
	f := d.f
	if t, ok := val(f.TriedBytes); ok {
		d.set(CauseCPURAM, "the CPU allocator failed: host RAM (or a container/ulimit cap) is exhausted",
			fmt.Sprintf("a %s host allocation failed: the machine's RAM, a container memory limit or ulimit is the constraint, or the model is accidentally running on the CPU", hb(t)),
			num("tried", t, "printed request"))
		return
	}
	d.set(CauseCPURAM, "the CPU allocator failed: host RAM (or a container/ulimit cap) is exhausted",
		"posix_memalign failed with ENOMEM (12): host RAM or a container limit is exhausted; this wording prints no size")
}

// vllmKV explains vLLM's KV-cache checks.
func (d *diag) vllmKV() {
	f := d.f
	rule := "vLLM's KV cache (what remains of gpu_memory_utilization × total after weights and activations) cannot hold one request of max_model_len"
	switch {
	case f.MaxModelLen != nil && f.KVCacheTokens != nil:
		d.set(CauseKVCacheBudget, rule, fmt.Sprintf("the KV cache holds %d tokens < max_model_len %d: lower max_model_len to ≤ %d or give the cache more memory", *f.KVCacheTokens, *f.MaxModelLen, *f.KVCacheTokens))
	case f.KVNeededBytes != nil && f.KVAvailableBytes != nil:
		why := fmt.Sprintf("one request of %d tokens needs %s of KV cache but only %s is available", deref(f.MaxModelLen), f.KVNeededBytes.Human(), f.KVAvailableBytes.Human())
		if f.EstimatedMaxModelLen != nil {
			why += fmt.Sprintf("; vLLM estimates max_model_len ≤ %d fits", *f.EstimatedMaxModelLen)
		}
		d.set(CauseKVCacheBudget, rule, why,
			num("kv_needed", f.KVNeededBytes.Float64(), "printed"), num("kv_available", f.KVAvailableBytes.Float64(), "printed"))
	default:
		d.set(CauseKVCacheBudget, "after loading the weights and profiling, nothing was left for the KV cache",
			"no memory was left for KV-cache blocks after the weights and the profiling run: raise gpu_memory_utilization, quantize, or use tensor parallelism")
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// vllmStart explains vLLM's start-up free-memory check.
func (d *diag) vllmStart() {
	f := d.f
	free, okF := val(f.FreeBytes)
	tot, okT := val(f.TotalBytes)
	req, okR := val(f.RequestedBytes)
	if !okF || !okT || !okR {
		d.set(CauseOtherProcess, "vLLM found less free memory at start-up than its utilization target", "the GPU was partly used before vLLM loaded anything")
		return
	}
	used := tot - free
	f.Derived = append(f.Derived, num("used_before_start", used, fmt.Sprintf("total − free = %s − %s", hb(tot), hb(free))))
	d.set(CauseOtherProcess, "free at start-up < gpu_memory_utilization × total: memory was already in use before vLLM loaded anything",
		fmt.Sprintf("%s of the %s GPU was in use before vLLM started (only %s free), but gpu_memory_utilization asks for %s: another process (or a previous vLLM instance) holds the GPU", hb(used), hb(tot), hb(free), hb(req)),
		num("used_before_start", used, "total − free"), num("requested", req, "printed"))
}

// xla explains JAX/XLA (and CuPy) messages.
func (d *diag) xla() {
	f := d.f
	t, hasT := val(f.TriedBytes)
	fr, hasFr := val(f.XLATotalFragmentationBytes)
	if prog, ok := val(f.XLAProgramBytes); ok {
		tot, _ := val(f.TotalBytes)
		d.set(CauseCapacity, "the compiled program needs more device memory than the memory space holds",
			fmt.Sprintf("the program needs %s but the memory space holds %s: shrink the batch, shard the model or rematerialise", hb(prog), hb(tot)),
			num("program", prog, "printed Used"), num("total", tot, "printed capacity"))
		return
	}
	switch {
	case hasT && hasFr && fr >= t:
		d.set(CauseFragmentation, "XLA's total fragmentation ≥ request",
			fmt.Sprintf("BufferAssignment reports %s of fragmentation, ≥ the %s request", hb(fr), hb(t)),
			num("fragmentation", fr, "printed"), num("tried", t, "printed"))
	case hasT && t >= bogusFactor*largestCard:
		d.set(CauseBogusSize, "request ≥ 10 × 288 GB: a shape or size bug", fmt.Sprintf("the %s buffer is larger than any accelerator", hb(t)), num("tried", t, "printed"))
	default:
		why := "the computation needs more device memory than is available"
		if hasT {
			why = fmt.Sprintf("a single %s buffer did not fit: the computation (batch, sequence or input size) is too big for the device as configured", hb(t))
		}
		var ev []Number
		if hasT {
			ev = append(ev, num("tried", t, "printed"))
		}
		d.set(CauseCapacity, "XLA could not place a buffer: the program does not fit", why, ev...)
	}
}

// tf explains TensorFlow messages.
func (d *diag) tf() {
	f := d.f
	t, hasT := val(f.TriedBytes)
	switch f.Kind {
	case KindTFCUBLAS, KindTFCUDNN:
		d.set(CausePreallocation, "TensorFlow's BFC allocator took (nearly) the whole GPU up front, so cuBLAS/cuDNN found nothing left for their handles",
			"creating the cuBLAS/cuDNN handle failed: TensorFlow preallocates most of the GPU by default (or another process holds it), leaving no room for library workspaces")
		return
	case KindTFDevice:
		d.set(CausePreallocation, "TensorFlow could not preallocate its memory pool at start-up",
			fmt.Sprintf("TensorFlow tried to reserve %s for its BFC pool at start-up and the driver refused: another process holds the GPU, or two TF processes share it", hb(t)), num("tried", t, "printed"))
		return
	}
	if f.Kind == KindTF && onHost(f) {
		why := "TensorFlow's host allocator could not place a tensor: the machine's RAM (or a container limit) is exhausted"
		if hasT {
			why = fmt.Sprintf("the tensor %v of type %s needs %s on the CPU device (allocator %q): host RAM or a container memory limit is exhausted, or the op was placed on the CPU by mistake", f.TensorShape, f.DType, hb(t), f.Allocator)
		}
		d.set(CauseCPURAM, "the tensor was to live on the CPU device (/device:CPU:N, allocator cpu): host memory ran out, not the GPU", why, num("tried", t, "printed"))
		return
	}
	if hasT && t >= bogusFactor*largestCard {
		d.set(CauseBogusSize, "request ≥ 10 × 288 GB: a shape or size bug", fmt.Sprintf("the tensor %v needs %s, more than any accelerator holds: the shape comes from a wrong count or an overflow", f.TensorShape, hb(t)), num("tried", t, "printed"))
		return
	}
	why := "TensorFlow could not place a tensor"
	if hasT {
		why = fmt.Sprintf("the tensor %v of type %s needs %s and did not fit: the model or the batch is too big for the GPU, or another process holds part of it (TensorFlow prints no device figures to tell)", f.TensorShape, f.DType, hb(t))
	}
	if f.Kind == KindTFBFC && hasT {
		why = fmt.Sprintf("the BFC allocator (%s) could not find %s: the model and batch do not fit", f.Allocator, hb(t))
	}
	d.set(CauseCapacity, "TensorFlow's allocator could not place a tensor of this size: the model and batch do not fit", why, num("tried", t, "printed"))
}

// onHost reports whether a TensorFlow message names a CPU device or the cpu
// allocator.
func onHost(f *Finding) bool {
	return strings.Contains(f.tfDevice, "device:CPU:") || strings.EqualFold(f.Allocator, "cpu")
}
