package estimator

import (
	"fmt"

	"oomscope/bytesize"
)

// Fixed overheads (estimator-notes §6).
const (
	// CUDAContextBytes is a CUDA context with lazy module loading, measured
	// in pytorch/pytorch PR #86509 (287,047,680 B; eager loading: 666,632,192).
	CUDAContextBytes int64 = 287_047_680
	// CuBLASWorkspaceBytes is cuBLAS's legacy default workspace
	// (:4096:2:16:8), seen as a fixed block in memory snapshots.
	CuBLASWorkspaceBytes int64 = 8_519_680
	// NCCLTwoGPUBytes and NCCLBytes are one NCCL communicator's buffers on
	// 2 and on more than 2 GPUs (A100 NVLink, NVIDIA/nccl#964).
	NCCLTwoGPUBytes int64 = 544e6
	NCCLBytes       int64 = 688e6
	// AllocatorSlackPercent is the caching allocator's rounding and
	// fragmentation: reserved is typically 2–15 % above allocated.
	AllocatorSlackPercent = 3
)

// cublasLtBytes is the cuBLASLt workspace PyTorch allocates (PR #120925).
func (g GPU) cublasLtBytes() int64 {
	switch {
	case g.SM >= 90 || g.SM == 0:
		return 32 << 20
	case g.SM >= 80 && g.CapacityBytes >= 24e9:
		return 4 << 20
	}
	return 1 << 20
}

// overhead is the fixed and proportional overhead bucket. Paper mode counts
// none, like the published formula.
func (p *plan) overhead(allocated int64) Bucket {
	if p.r.Activations == ActivationsPaper {
		return Bucket{Name: BucketOverhead, Formula: "none: paper mode counts model states, activations and logits only (switch to tally for CUDA context, NCCL and allocator slack)"}
	}
	lt := p.g.cublasLtBytes()
	terms := []Term{
		{"cuda context", CUDAContextBytes, "CUDA context with lazy module loading (287,047,680 B measured; outside PyTorch's allocator)"},
		{"cublas workspace", sum(CuBLASWorkspaceBytes, lt), fmt.Sprintf("cuBLAS workspace 8,519,680 B + cuBLASLt workspace %s B", bytesize.Commas(lt))},
	}
	if n := p.gpus(); n > 1 {
		nccl, words := NCCLBytes, "one NCCL communicator on more than 2 GPUs (688 MB measured)"
		if n == 2 {
			nccl, words = NCCLTwoGPUBytes, "one NCCL communicator on 2 GPUs (544 MB measured)"
		}
		terms = append(terms, Term{"nccl", nccl, words})
	}
	slackBase := sum(allocated, terms[1].Bytes)
	terms = append(terms, Term{"allocator slack", fraction(slackBase, AllocatorSlackPercent, 100), fmt.Sprintf("%d %% of the bytes PyTorch allocates, the buckets above and the cuBLAS workspaces (caching allocator rounding and fragmentation)", AllocatorSlackPercent)})
	return bucket(BucketOverhead, joinFormulas(terms...), terms...)
}
