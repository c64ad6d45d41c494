package triage

import "sync"

// formats lists every message format Triage recognises. Keywords are lower
// case literals, short enough to survive most line wraps and rare in
// ordinary logs; a format's head pattern is only run near them. The list,
// its patterns and their leaders are built on first use (see lazy).
var formats = sync.OnceValue(func() []*format {
	fs := []*format{
		{name: "alloc", keywords: []string{"of memory", "allocate memory block"}, head: allocHead(), parse: parseAlloc},
		{name: "tried", keywords: []string{"tried to allocate"}, head: triedHead(), weak: true, parse: parseAlloc},
		{name: "fragment", keywords: []string{"total capacity", "already allocated", "current active", "allowed;", "in total by", "cached)"}, head: fragmentHead(), weak: true, parse: parseFragment},
		{name: "async", keywords: []string{"exceed allowed"}, head: asyncHead(), parse: parseAsync},
		{name: "mps", keywords: []string{"mps backend"}, head: mpsHead(), parse: parseMPS},
		{name: "mps-buffer", keywords: []string{"invalid buffer size"}, head: mpsBufferHead(), parse: parseMPSBuffer},
		{name: "cpu", keywords: []string{"defaultcpuallocator"}, head: cpuHead(), parse: parseCPU},
		{name: "cpu-memalign", keywords: []string{"posix_memalign"}, head: cpuMemalign(), parse: parseCPULegacy},
		{name: "cpu-th", keywords: []string{"you tried to allocate"}, head: cpuTHHead(), parse: parseCPULegacy},
		{name: "plain", keywords: []string{"of memory"}, head: plainHead(), parse: parsePlain},
		{name: "legacy", keywords: []string{"of memory"}, head: legacyHead(), parse: parseLegacy},
		{name: "cublas", keywords: []string{"cublas_status_"}, head: cublasHead(), parse: parseCublas},
		{name: "cudnn", keywords: []string{"cudnn_status_", "cudnn algorithm", "algorithms available in cudnn"}, head: cudnnHead(), parse: parseCudnn},
		// NCCL WARN lines are weak so that one failure's consecutive lines merge.
		{name: "nccl-warn", keywords: []string{"nccl warn"}, head: ncclWarnHead(), weak: true, parse: parseNCCLWarn},
		{name: "nccl-error", keywords: []string{"nccl error"}, head: ncclErrHead(), parse: parseNCCLError},
		{name: "xla", keywords: []string{"of memory while", "of memory allocating"}, head: xlaHead(), parse: parseXLA},
		{name: "xla-tpu", keywords: []string{"memory space"}, head: xlaTPUHead(), parse: parseXLATPU},
		{name: "xla-pjrt", keywords: []string{"allocate request for"}, head: xlaPJRTHead(), parse: parseXLAPJRT},
		{name: "tf", keywords: []string{"oom when"}, head: tfHead(), parse: parseTF},
		{name: "tf-eager", keywords: []string{"failed to allocate memory"}, head: tfEagerHead(), parse: parseTFEager},
		{name: "tf-bfc", keywords: []string{"ran out of memory"}, head: tfBFCHead(), parse: parseTFBFC},
		{name: "tf-device", keywords: []string{"cuda_error_out_of_memory"}, head: tfDevHead(), parse: parseTFDevice},
		{name: "vllm-nomem", keywords: []string{"cache blocks"}, head: vllmNoMemHead(), parse: parseVLLMKV},
		{name: "vllm-seqlen", keywords: []string{"in kv cache"}, head: vllmSeqLenHead(), parse: parseVLLMKV},
		{name: "vllm-serve", keywords: []string{"one request with"}, head: vllmServeHead(), parse: parseVLLMKV},
		{name: "vllm-startup", keywords: []string{"on startup"}, head: vllmStartHead(), parse: parseVLLMStart},
	}
	for _, f := range fs {
		f.lead = newLeader(f.head)
	}
	return fs
})
