package triage

// formats lists every message format Triage recognises. Keywords are lower
// case single words (so line-wrapped pastes still hit them); a format's head
// pattern is only run near them.
var formats = []*format{
	{name: "alloc", keywords: []string{"memory"}, head: allocHead, parse: parseAlloc},
	{name: "tried", keywords: []string{"allocate"}, head: triedHead, weak: true, parse: parseAlloc},
	{name: "fragment", keywords: []string{"capacity", "allocated", "active", "allowed", "reserved", "cached"}, head: fragmentHead, weak: true, parse: parseFragment},
	{name: "async", keywords: []string{"exceed"}, head: asyncHead, parse: parseAsync},
	{name: "mps", keywords: []string{"mps"}, head: mpsHead, parse: parseMPS},
	{name: "mps-buffer", keywords: []string{"buffer"}, head: mpsBufferHead, parse: parseMPSBuffer},
	{name: "cpu", keywords: []string{"defaultcpuallocator"}, head: cpuHead, parse: parseCPU},
	{name: "cpu-memalign", keywords: []string{"posix_memalign"}, head: cpuMemalign, parse: parseCPULegacy},
	{name: "cpu-th", keywords: []string{"memory"}, head: cpuTHHead, parse: parseCPULegacy},
	{name: "plain", keywords: []string{"memory"}, head: plainHead, parse: parsePlain},
	{name: "legacy", keywords: []string{"memory"}, head: legacyHead, parse: parseLegacy},
	{name: "cublas", keywords: []string{"cublas_status_"}, head: cublasHead, parse: parseCublas},
	{name: "cudnn", keywords: []string{"cudnn"}, head: cudnnHead, parse: parseCudnn},
	// NCCL WARN lines are weak so that one failure's consecutive lines merge.
	{name: "nccl-warn", keywords: []string{"nccl"}, head: ncclWarnHead, weak: true, parse: parseNCCLWarn},
	{name: "nccl-error", keywords: []string{"nccl"}, head: ncclErrHead, parse: parseNCCLError},
	{name: "xla", keywords: []string{"memory"}, head: xlaHead, parse: parseXLA},
	{name: "xla-pjrt", keywords: []string{"request"}, head: xlaPJRTHead, parse: parseXLAPJRT},
	{name: "tf", keywords: []string{"oom"}, head: tfHead, parse: parseTF},
	{name: "tf-bfc", keywords: []string{"memory"}, head: tfBFCHead, parse: parseTFBFC},
	{name: "tf-device", keywords: []string{"cuda_error_out_of_memory"}, head: tfDevHead, parse: parseTFDevice},
	{name: "vllm-nomem", keywords: []string{"cache"}, head: vllmNoMemHead, parse: parseVLLMKV},
	{name: "vllm-seqlen", keywords: []string{"cache"}, head: vllmSeqLenHead, parse: parseVLLMKV},
	{name: "vllm-serve", keywords: []string{"serve"}, head: vllmServeHead, parse: parseVLLMKV},
	{name: "vllm-startup", keywords: []string{"startup"}, head: vllmStartHead, parse: parseVLLMStart},
}
