package triage

// Apple MPS messages and the cudaMallocAsync backend's message.

var (
	mpsHead        = lazy(`MPS\s+backend\s+out\s+of\s+memory`)
	mpsBufferHead  = rx(`Invalid\s+buffer\s+size\s*:\s*SIZE`)
	reMPSAllocated = rx(`MPS\s+allocated\s*:\s*SIZE`)
	reMPSOther     = rx(`other\s+allocations\s*:\s*SIZE`)
	reMPSMax       = rx(`max\s+allowed\s*:\s*SIZE`)
	reMPSTried     = rx(`Tried\s+to\s+allocate\s+SIZE(?:\s+on\s+(private|shared)\s+pool\.?)?`)
	reMPSHint      = lazy(`^\.?\s*Use\s+PYTORCH_MPS_HIGH_WATERMARK_RATIO=0\.0\s+to\s+disable\s+upper\s+limit\s+for\s+memory\s+allocations\s*(?:\(may\s+cause\s+system\s+failure\)\.?)?`)

	asyncHead     = lazy(`Allocation\s+on\s+device(?:\s+(\d+))?\s+would\s+exceed\s+allowed\s+memory\.?(?:\s*\(out\s+of\s+memory\))?`)
	reAsyncAlloc  = rx(`Currently\s+allocated\s*:\s*SIZE`)
	reAsyncReq    = rx(`Requested\s*:\s*SIZE`)
	reAsyncDevice = rx(`Device\s+limit\s*:\s*SIZE`)
	reAsyncFree   = rx(`Free\s*\(according\s+to\s+CUDA\)\s*:\s*SIZE`)
	reAsyncLimit  = rx(`PyTorch\s+limit[^:]{0,120}:\s*SIZE`)
)

// parseMPS reads "MPS backend out of memory (MPS allocated: …, other
// allocations: …[, max allowed: …]). Tried to allocate … on private pool."
func parseMPS(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindMPS, Backend: BackendMPS}
	m := newMsg(p, h, &f)
	var units []string
	if sub := m.find(reMPSAllocated()); sub != nil {
		f.MPSAllocatedBytes = m.size("mps_allocated_bytes", "MPS allocated (PyTorch heaps)", sub, 1)
		units = append(units, m.group(sub, 2))
	}
	if sub := m.find(reMPSOther()); sub != nil {
		f.OtherAllocationsBytes = m.size("other_allocations_bytes", "Other allocations (Metal, outside PyTorch)", sub, 1)
		units = append(units, m.group(sub, 2))
	}
	if sub := m.find(reMPSMax()); sub != nil {
		f.MaxAllowedBytes = m.size("max_allowed_bytes", "Max allowed (high watermark)", sub, 1)
		units = append(units, m.group(sub, 2))
	}
	if sub := m.find(reMPSTried()); sub != nil {
		f.TriedBytes = m.size("tried_bytes", "Tried to allocate", sub, 1)
		f.Pool = m.group(sub, 3)
		units = append(units, m.group(sub, 2))
	}
	m.extend(reMPSHint())
	f.Variant = "KiB/MiB/GiB units (2.8+)"
	f.PyTorchVersion = "2.8+"
	for _, u := range units {
		if u == "GB" || u == "MB" || u == "KB" {
			f.Variant = "KB/MB/GB units, binary (<=2.7)"
			f.PyTorchVersion = "<=2.7"
		}
	}
	if len(units) == 0 {
		f.Variant, f.PyTorchVersion = "", ""
	}
	if f.MPSAllocatedBytes != nil && f.MaxAllowedBytes == nil {
		f.Variant += " + watermark disabled"
	}
	return m.done()
}

// parseMPSBuffer reads "Invalid buffer size: 36.00 GB" (a single Metal
// buffer above the device's maxBufferLength).
func parseMPSBuffer(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindMPS, Backend: BackendMPS, Variant: "Invalid buffer size (one buffer above maxBufferLength)"}
	m := newMsg(p, h, &f)
	f.TriedBytes = m.size("tried_bytes", "Invalid buffer size", h.sub, 1)
	if f.TriedBytes == nil {
		return Finding{}, false // a size too long to be one
	}
	return m.done()
}

// parseAsync reads the cudaMallocAsync backend's line-oriented message.
func parseAsync(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindCUDAAsync, Backend: BackendCUDA, Variant: "cudaMallocAsync backend"}
	m := newMsg(p, h, &f)
	f.GPUIndex = m.index(h.sub, 1)
	if sub := m.find(reAsyncAlloc()); sub != nil {
		f.AllocatedBytes = m.size("allocated_bytes", "Currently allocated by PyTorch", sub, 1)
	}
	if sub := m.find(reAsyncReq()); sub != nil {
		f.TriedBytes = m.size("tried_bytes", "Requested", sub, 1)
	}
	if sub := m.find(reAsyncDevice()); sub != nil {
		f.TotalBytes = m.size("total_bytes", "Device limit (total memory)", sub, 1)
	}
	if sub := m.find(reAsyncFree()); sub != nil {
		f.FreeBytes = m.size("free_bytes", "Free (according to CUDA)", sub, 1)
	}
	if sub := m.find(reAsyncLimit()); sub != nil {
		f.LimitBytes = m.size("limit_bytes", "PyTorch limit (memory fraction)", sub, 1)
	}
	return m.done()
}
