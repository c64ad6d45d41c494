package estimator

import ()

// Fixed overheads and the caching allocator (docs/estimator.md#3-readouts-allocated-reserved-device).
const (
	// CUDAContextBytes is a CUDA context with lazy module loading, measured
	// in pytorch/pytorch PR #86509 (287,047,680 B; eager loading: 666,632,192).
	CUDAContextBytes int64 = 287_047_680
	// LibraryBytes is what kernels and library handles loaded on first use
	// take outside PyTorch's allocator (cuBLAS, cuDNN, attention and
	// Triton kernels under lazy loading): vLLM's start-up logs measure
	// 0.13–0.35 GiB of such non-torch memory on one GPU; 256 MiB here.
	LibraryBytes int64 = 256 << 20
	// CuBLASWorkspaceBytes is cuBLAS's legacy default workspace
	// (:4096:2:16:8), seen as a fixed block in memory snapshots.
	CuBLASWorkspaceBytes int64 = 8_519_680
	// NCCLTwoGPUBytes and NCCLBytes are one NCCL communicator's buffers on
	// 2 and on more than 2 GPUs (A100 NVLink, NVIDIA/nccl#964).
	NCCLTwoGPUBytes int64 = 544e6
	NCCLBytes       int64 = 688e6
	// FragmentationPercent is the allowance for the caching allocator's
	// fragmentation: reserved memory beyond the allocated bytes, as a
	// share of the bytes allocated and freed during a step (activations,
	// logits, gather and dequantization buffers). Calibrated on the
	// measured longest-context rows (docs/estimator.md#10-validation-the-error-band-and-the-capacity-bound, rows 44–45; see
	// TestCapacityBound), within the 2–15 % of allocated that reserved
	// typically exceeds it by.
	FragmentationPercent = 10
)

// Caching allocator sizes (c10/cuda/CUDACachingAllocator.cpp).
const (
	allocRound     = 512      // every block is a multiple of 512 B
	allocSmall     = 1 << 20  // blocks up to 1 MiB come from 2 MiB segments
	allocMinLarge  = 10 << 20 // blocks from 1 to 10 MiB share 20 MiB segments
	allocLargeSeg  = 20 << 20
	allocLargeStep = 2 << 20 // larger blocks are their own segment, rounded to 2 MiB
)

func roundUp(n, to int64) int64 { return ceilDiv(n, to) * to }

// blockWaste is what the caching allocator reserves for a tensor of n
// bytes beyond n: the 512 B rounding; a share of a 20 MiB segment for 1–10
// MiB tensors (as many as fit share one); the rounding to 2 MiB above.
func blockWaste(n int64) int64 {
	switch {
	case n <= 0:
		return 0
	case n <= allocSmall:
		return roundUp(n, allocRound) - n
	case n < allocMinLarge:
		b := roundUp(n, allocRound)
		k := allocLargeSeg / b
		return (allocLargeSeg-k*b)/k + b - n
	}
	return roundUp(n, allocLargeStep) - n
}

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

// paperNone is the formula of the overhead buckets in paper mode.
const paperNone = "none: paper mode counts model states, activations and logits only (switch to tally for the workspaces, allocator and CUDA context)"

// workspace is the cuBLAS workspaces bucket: allocated through PyTorch's
// caching allocator, so part of max_memory_allocated.
func (p *plan) workspace() Bucket {
	if p.r.Activations == ActivationsPaper {
		return Bucket{Name: BucketWorkspace, Formula: paperNone}
	}
	lt := p.g.cublasLtBytes()
	return bucket(BucketWorkspace, "", Term{"cublas workspace", sum(CuBLASWorkspaceBytes, lt), p.say("cuBLAS workspace 8,519,680 B + cuBLASLt workspace %s B (allocated through PyTorch)", num(lt))})
}

// persistentWaste sums blockWaste over the tensors that live for the whole
// run: every weight matrix and its gradient, master copy and optimizer
// states, each a tensor (sharded ones as their shard), plus the
// embedding and lm_head.
func (p *plan) persistentWaste() int64 {
	pb := p.paramBytes()
	tp := p.tp()
	// Per-element bytes of one trained matrix's states beyond the weight.
	var trained int64
	if p.train() {
		trained = pb // gradient
		if p.r.Master {
			trained += 4
		}
		sb, eight, _ := p.stateDtype()
		if eight {
			sb = 1
		}
		switch p.r.Optimizer {
		case OptAdamW, OptAdamW8bit:
			trained += 2 * sb
		case OptSGDMomentum, OptLion:
			trained += sb
		}
	}
	wdiv, _ := p.shardDiv(p.shardsWeights())
	sdiv, _ := p.shardDiv(p.shardsGradients())
	format, expertsOnly, _ := p.weightFormat()
	var w int64
	add := func(count, elems, bytesPer, div int64) {
		if count > 0 && bytesPer > 0 {
			w = sum(w, mul(count, blockWaste(ceilDiv(mul(elems, bytesPer), div))))
		}
	}
	emb := ceilDiv(p.m.EmbeddingParams(), tp)
	add(1, emb, pb, wdiv)
	if !p.m.TiedEmbeddings {
		add(1, ceilDiv(int64(p.m.Vocab)*int64(p.m.Hidden), tp), pb, wdiv)
	}
	for _, k := range p.kinds {
		for _, l := range k.Linears {
			n := ceilDiv(int64(l.In)*int64(l.Out), tp)
			copies := mul(int64(k.Count), int64(l.Count))
			switch {
			case p.train() && p.r.Method == MethodQLoRA:
				add(copies, nf4Bytes(n), 1, wdiv)
			case !p.train() && format != fmtDtype && (!expertsOnly || l.Group == groupExpert):
				add(copies, linearBytes(format, int64(l.In), int64(l.Out), 1, pb)/tp, 1, 1)
			default:
				add(copies, n, pb, wdiv)
			}
			if p.full() && !p.offloads(OffloadOptimizer) {
				add(copies, n, trained, sdiv)
			}
		}
	}
	return w
}

// allocator is the reserved-minus-allocated bucket: the modelled block
// rounding of the persistent tensors plus the fragmentation allowance on
// what is allocated and freed every step.
func (p *plan) allocator(transient int64) Bucket {
	if p.r.Activations == ActivationsPaper {
		return Bucket{Name: BucketAllocator, Formula: paperNone}
	}
	round := Term{"block rounding", p.persistentWaste(), "the caching allocator's rounding of each weight, gradient and optimizer-state tensor (512 B; 20 MiB segments shared by 1–10 MiB tensors; 2 MiB above), summed tensor by tensor"}
	frag := Term{"fragmentation", fraction(transient, FragmentationPercent, 100), p.say("%d %% of the %s B allocated and freed every step (activations, logits, gather and dequantization buffers): blocks cached but not reusable at the peak (a fixed allowance)", FragmentationPercent, num(transient))}
	return bucket(BucketAllocator, joinFormulas(round, frag), round, frag)
}

// ncclBytes is one NCCL communicator over n ranks.
func ncclBytes(n int64) (int64, string) {
	if n == 2 {
		return NCCLTwoGPUBytes, "544 MB measured on 2 GPUs"
	}
	return NCCLBytes, "688 MB measured on more than 2 GPUs"
}

// nonTorch is the memory outside PyTorch's allocator: the CUDA context,
// libraries' kernels and handles, and one NCCL communicator per process
// group (data parallel, tensor parallel).
func (p *plan) nonTorch() Bucket {
	if p.r.Activations == ActivationsPaper {
		return Bucket{Name: BucketNonTorch, Formula: paperNone}
	}
	terms := []Term{
		{"cuda context", CUDAContextBytes, "CUDA context with lazy module loading (287,047,680 B measured, PyTorch PR #86509)"},
		{"libraries", LibraryBytes, "kernels and library handles loaded on first use (vLLM measures 0.13–0.35 GiB of such non-torch memory on one GPU)"},
	}
	if n := p.gpus(); n > 1 {
		b, words := ncclBytes(n)
		terms = append(terms, Term{"nccl data parallel", b, p.say("the data-parallel group's NCCL communicator (%s)", words)})
	}
	if n := p.tp(); n > 1 {
		b, words := ncclBytes(n)
		terms = append(terms, Term{"nccl tensor parallel", b, p.say("the tensor-parallel group's NCCL communicator (%s)", words)})
	}
	return bucket(BucketNonTorch, joinFormulas(terms...), terms...)
}
