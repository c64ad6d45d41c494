package triage

import (
	"strings"
)

// Messages with no allocator figures: the CUDA runtime's "out of memory"
// error, the THC-era error, and cuBLAS/cuDNN/NCCL allocation failures.

var (
	plainHead   = lazy(`(CUDA|HIP)\s+(driver\s+)?error\s*:\s*out\s+of\s+memory`)
	rePlainTail = lazy("^[ \\t]*\\r?\\n?[ \\t]*(?:CUDA\\s+kernel\\s+errors\\s+might\\s+be\\s+asynchronously\\s+reported[^\\n]*|For\\s+debugging\\s+consider\\s+passing\\s+[A-Z_]+_LAUNCH_BLOCKING=1\\.?|Compile\\s+with\\s+`TORCH_USE_[A-Z_]+_DSA`[^\\n]*|Search\\s+for\\s+`\\w+'[^\\n]*|For\\s+more\\s+detailed\\s+error\\s+information[^\\n]*)")
	legacyHead  = lazy(`cuda\s+runtime\s+err(?:or)?\s*\(\s*2\s*\)\s*:\s*out\s+of\s+memory(?:\s+at\s+[^\s]+)?|THCudaCheck\s+FAIL\s+file=\S+\s+line=\d+\s+error=2\s*:\s*out\s+of\s+memory`)
	reLegacyRT  = lazy(`cuda\s+runtime\s+err(?:or)?\s*\(\s*2\s*\)\s*:\s*out\s+of\s+memory(?:\s+at\s+[^\s]+)?`)

	cublasHead = lazy("(failed\\s+to\\s+create\\s+cublas\\s+handle\\s*:\\s*)?(?:CUDA\\s+error\\s*:\\s*)?CUBLAS_STATUS_(ALLOC_FAILED|NOT_INITIALIZED)(?:\\s+when\\s+calling\\s+`([^`\\n]{1,200})`)?")
	cudnnHead  = lazy(`Could\s+not\s+create\s+cudnn\s+handle\s*:\s*(CUDNN_STATUS_\w+)|(?:cuDNN\s+(?:Frontend\s+)?error\s*:\s*)?(CUDNN_STATUS_(?:ALLOC_FAILED|NOT_INITIALIZED))|(Unable\s+to\s+find\s+a\s+valid\s+cuDNN\s+algorithm\s+to\s+run\s+convolution|no\s+valid\s+convolution\s+algorithms\s+available\s+in\s+CuDNN)`)

	ncclWarnHead = lazy(`NCCL\s+WARN\b[^\n]{0,200}?(?:out\s+of\s+memory|OUT_OF_MEMORY|Failed\s+to\s+CUDA\s+(?:host\s+)?(?:calloc|malloc|alloc))`)
	ncclErrHead  = lazy(`NCCL\s+error\s+in\s*:\s*\S+|NCCL\s+Error\s+\d+\s*:`)
	reNCCLCalloc = lazy(`Failed\s+to\s+CUDA\s+(?:host\s+)?(?:calloc|malloc|alloc)(?:\s+async)?\s+(\d+)\s+bytes`)
	reNCCLDev    = lazy(`\[(\d+)\]\s+(?:\S+\s+)?NCCL\s+WARN`)
	reNCCLOOM    = lazy(`out\s+of\s+memory|OUT_OF_MEMORY|Failed\s+to\s+CUDA\s+(?:host\s+)?(?:calloc|malloc|alloc)`)
	reNCCLCuda   = lazy(`unhandled\s+cuda\s+error[^\n]*`)
)

// parsePlain reads "CUDA error: out of memory" and the suffix lines PyTorch
// appends to it.
func parsePlain(p *parser, h head) (Finding, bool) {
	backend := Backend(strings.ToLower(h.f.head.FindStringSubmatch(p.text[h.start:h.end])[1]))
	f := Finding{Kind: backend.ErrorPlain(), Backend: backend}
	m := newMsg(p, h, &f)
	for i := 0; i < 6 && m.extend(rePlainTail()); i++ {
	}
	tail := p.text[h.end:m.end]
	switch {
	case strings.Contains(p.text[h.start:h.end], "driver"):
		f.Variant = "CUDA driver API (cuMem*, e.g. expandable segments)"
	case strings.Contains(tail, "Search for"):
		f.Variant = "Search for cudaErrorMemoryAllocation (2.5+)"
	case strings.Contains(tail, "TORCH_USE_CUDA_DSA"):
		f.Variant = "TORCH_USE_CUDA_DSA suffix (2.0+)"
	case strings.Contains(tail, "LAUNCH_BLOCKING"):
		f.Variant = "CUDA_LAUNCH_BLOCKING suffix"
	}
	return m.done()
}

// parseLegacy reads the THC-era (0.1–0.4) "cuda runtime error (2) : out of
// memory", together with the "THCudaCheck FAIL" line that precedes it.
func parseLegacy(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindCUDALegacy, Backend: BackendCUDA, Variant: "THC (<=0.4)", PyTorchVersion: "<=0.4"}
	m := newMsg(p, h, &f)
	if strings.HasPrefix(p.text[h.start:h.end], "THCudaCheck") {
		// The RuntimeError that follows (after the traceback) is the message;
		// this stderr line only announces it.
		if reLegacyRT().MatchString(p.text[h.end:min(len(p.text), h.end+3000)]) {
			return Finding{}, false
		}
	}
	return m.done()
}

// parseCublas reads cuBLAS handle/workspace allocation failures (PyTorch's
// TORCH_CUDABLAS_CHECK wording and TensorFlow's).
func parseCublas(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindCUBLAS, Backend: BackendCUDA, Variant: "CUBLAS_STATUS_" + p.text[h.sub[4]:h.sub[5]]}
	if h.sub[2] >= 0 {
		f.Kind, f.Backend = KindTFCUBLAS, BackendTF
	}
	m := newMsg(p, h, &f)
	return m.done()
}

// parseCudnn reads cuDNN allocation failures.
func parseCudnn(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindCUDNN, Backend: BackendCUDA}
	m := newMsg(p, h, &f)
	switch {
	case h.sub[2] >= 0:
		f.Kind, f.Backend, f.Variant = KindTFCUDNN, BackendTF, m.group(h.sub, 1)
	case h.sub[4] >= 0:
		f.Variant = m.group(h.sub, 2)
	default:
		f.Variant = "no valid cuDNN algorithm (every workspace failed)"
	}
	return m.done()
}

// parseNCCLWarn reads NCCL's own debug lines ("host:pid:tid [dev] file:line
// NCCL WARN Cuda failure 'out of memory'", "… Failed to CUDA calloc N
// bytes"), merging the consecutive WARN lines of one failure.
func parseNCCLWarn(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindNCCL, Backend: BackendCUDA, Variant: "NCCL WARN (NCCL_DEBUG output)"}
	m := newMsg(p, h, &f)
	// Start at the line start: host:pid:tid [dev] file:line.
	lo := h.start
	for lo > p.consumed && lo > h.start-300 && p.text[lo-1] != '\n' {
		lo--
	}
	m.lo, f.Start = lo, lo
	m.end = lineEnd(p.text, h.end, m.hi)
	// Absorb following NCCL WARN lines (blank lines allowed between).
	for n := 0; n < 10; n++ {
		next := m.end
		for next < m.hi && (p.text[next] == '\n' || p.text[next] == '\r' || p.text[next] == ' ' || p.text[next] == '\t') {
			next++
		}
		le := lineEnd(p.text, next, m.hi)
		if next >= le || !strings.Contains(p.text[next:le], "NCCL WARN") || ncclProcess(p.text[next:le]) != ncclProcess(p.text[lo:m.end]) {
			break
		}
		m.end = le
	}
	m.hi = m.end
	if sub := m.find(reNCCLDev()); sub != nil {
		f.GPUIndex = m.index(sub, 1)
	}
	if sub := m.find(reNCCLCalloc()); sub != nil {
		f.TriedBytes = m.exact("tried_bytes", "NCCL tried to allocate", sub, 1)
	}
	return m.done()
}

// reNCCLProc matches NCCL's "host:pid:tid [dev]" line prefix.
var reNCCLProc = lazy(`(\S+:\d+):\d+\s+\[\d+\]`)

// ncclProcess returns the "host:pid" of an NCCL debug line, "" if none: one
// failure's lines come from one process.
func ncclProcess(line string) string {
	if m := reNCCLProc().FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}

// parseNCCLError reads PyTorch's "NCCL error in: file:line, …" wrapper when
// its detail says the CUDA call ran out of memory.
func parseNCCLError(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindNCCL, Backend: BackendCUDA, Variant: "NCCL error wrapper"}
	m := newMsg(p, h, &f)
	// The detail runs to the first blank line.
	if i := strings.Index(p.text[h.start:m.hi], "\n\n"); i >= 0 {
		m.hi = h.start + i
	}
	m.hi = min(m.hi, h.start+1200)
	oom := m.find(reNCCLOOM())
	if oom == nil {
		// "unhandled cuda error" without its detail: often, not always, an
		// out-of-memory; reported so the user can check.
		cuda := m.find(reNCCLCuda())
		if cuda == nil || cuda[0]-h.end > 200 {
			return Finding{}, false
		}
		f.Variant = "NCCL error wrapper: unhandled cuda error (detail not shown)"
		m.end = cuda[1]
		return m.done()
	}
	m.end = lineEnd(p.text, oom[1], m.hi)
	if sub := m.find(reNCCLCalloc()); sub != nil {
		f.TriedBytes = m.exact("tried_bytes", "NCCL tried to allocate", sub, 1)
	}
	return m.done()
}

// lineEnd returns the offset of the end of the line holding i (before the
// newline), at most hi.
func lineEnd(text string, i, hi int) int {
	if i >= hi {
		return hi
	}
	if nl := strings.IndexByte(text[i:hi], '\n'); nl >= 0 {
		return i + nl
	}
	return hi
}
