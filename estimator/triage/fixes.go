package triage

import (
	"strings"

	"oomscope/fixes"
)

// Suggestion is one fix of the shared catalog (package fixes) with the reason
// this finding suggests it.
type Suggestion struct {
	fixes.Fix
	// Reason says which rule suggested it: "cause: fragmentation" or "when:
	// only on long inputs".
	Reason string `json:"reason"`
}

// fixCatalog returns every fix of the shared catalog, specialised for f:
// the device family in the code, the allocator variable its PyTorch
// version reads, vLLM's lengths and shares from the message.
func fixCatalog(f *Finding) map[string]Suggestion {
	dev := "cuda"
	switch f.Backend {
	case BackendXPU:
		dev = "xpu"
	case BackendMPS:
		dev = "mps"
	}
	fx := map[string]Suggestion{}
	for _, c := range fixes.All(dev) {
		fx[c.ID] = Suggestion{Fix: c}
	}
	fx["expandable-segments"] = expandableSegments(f, fx["expandable-segments"])
	set := func(id, code string) {
		v := fx[id]
		v.Code = code
		fx[id] = v
	}
	set("vllm-max-len", "vllm serve MODEL --max-model-len "+vllmLen(f))
	set("vllm-lower-util", "vllm serve MODEL --gpu-memory-utilization "+vllmFreeShare(f))
	return fx
}

// expandableSegments returns the allocator setting against fragmentation,
// with the variable name the message's PyTorch version reads.
func expandableSegments(f *Finding, fx Suggestion) Suggestion {
	v := f.AllocConfVar
	// expandable_segments arrived in PyTorch 2.1; older wordings get the
	// setting that existed then.
	old := strings.HasPrefix(f.PyTorchVersion, "1.") || strings.HasPrefix(f.PyTorchVersion, "<") || f.Kind == KindCUDA1x
	switch {
	case f.Backend == BackendXPU:
		fx.Title, fx.Lang = "Release cached blocks (XPU)", "python"
		fx.Why = "the XPU allocator has no expandable segments in this version; empty_cache returns split blocks"
		fx.Code = "torch.xpu.empty_cache()"
	case old:
		fx.Title = "Cap the split block size (expandable_segments needs PyTorch ≥ 2.1)"
		fx.Why = "on PyTorch ≤ 2.0, max_split_size_mb stops large cached blocks from being split, which limits fragmentation; upgrading to ≥ 2.1 allows expandable_segments:True"
		fx.Code = "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128"
	case v == "PYTORCH_ALLOC_CONF":
		fx.Code = "export PYTORCH_ALLOC_CONF=expandable_segments:True\n# PyTorch 2.9.1 ignores PYTORCH_ALLOC_CONF for CUDA (pytorch/pytorch#183387); the old name still works there:\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
	default:
		if v == "" || v == "PYTORCH_ALLOC_CONF" {
			v = "PYTORCH_CUDA_ALLOC_CONF"
		}
		fx.Code = "export " + v + "=expandable_segments:True\n# or in Python, before the first allocation:\n# import os; os.environ[\"" + v + "\"] = \"expandable_segments:True\""
	}
	return fx
}

func vllmLen(f *Finding) string {
	switch {
	case f.EstimatedMaxModelLen != nil:
		return itoa(*f.EstimatedMaxModelLen)
	case f.KVCacheTokens != nil:
		return itoa(*f.KVCacheTokens)
	}
	return "8192"
}

func vllmFreeShare(f *Finding) string {
	free, ok1 := val(f.FreeBytes)
	tot, ok2 := val(f.TotalBytes)
	if !ok1 || !ok2 || tot <= 0 {
		return "0.5"
	}
	share := float64(int(free/tot*100*0.95)) / 100 // leave 5 % slack
	if share < 0.01 {
		share = 0.01
	}
	return ftoa(share)
}

// causeFixes lists, per cause, the fixes that address it: lead fixes first
// (they act on the cause itself), then the rest, cheapest first.
func causeFixes(f *Finding) (lead, rest []string) {
	switch f.Cause {
	case CauseFragmentation:
		if f.Backend == BackendXLA {
			return []string{"jax-prealloc"}, []string{"micro-batch", "jax-remat"}
		}
		return []string{"expandable-segments", "empty-cache"}, []string{"micro-batch", "autocast", "checkpointing"}
	case CauseCapacity:
		switch {
		case strings.Contains(f.Variant, "IPEX 4GB"):
			return []string{"xpu-split"}, []string{"micro-batch"}
		case f.Backend == BackendMPS:
			return nil, []string{"empty-cache", "micro-batch", "autocast", "checkpointing", "mps-watermark"}
		case f.Backend == BackendXLA:
			return nil, []string{"micro-batch", "jax-prealloc", "jax-remat"}
		case f.Kind == KindTF || f.Kind == KindTFBFC:
			return nil, []string{"micro-batch", "tf-growth"}
		case f.Kind == KindNCCL:
			return []string{"nccl-headroom"}, []string{"micro-batch", "checkpointing"}
		case f.Kind == KindCUBLAS:
			return []string{"find-other-process"}, []string{"micro-batch", "autocast"}
		}
		t, okT := val(f.TriedBytes)
		tot, okTot := val(f.TotalBytes)
		if okT && t <= tinyRequest && f.AllocatedBytes == nil && f.AlreadyAllocatedBytes == nil && f.ReservedTotalBytes == nil && f.ProcessInUseBytes == nil {
			// A tiny request and no figure of what fills the card: find
			// what does before shrinking anything (the last-straw fixes).
			return causeFixes(&Finding{Cause: CauseLastStraw})
		}
		if okT && okTot && t > tot {
			return []string{"inspect-shape"}, []string{"micro-batch", "sdpa", "chunked-loss", "checkpointing"}
		}
		return nil, []string{"micro-batch", "autocast", "checkpointing", "chunked-loss", "optimizer-8bit", "lora-qlora", "shard"}
	case CauseOtherProcess:
		switch f.Kind {
		case KindVLLMStartup:
			return []string{"find-other-process", "vllm-lower-util"}, nil
		case KindTF:
			return []string{"find-other-process", "tf-growth"}, []string{"micro-batch"}
		}
		return []string{"find-other-process"}, []string{"micro-batch", "autocast", "checkpointing"}
	case CauseNonPyTorch:
		if f.Backend == BackendMPS {
			return []string{"empty-cache"}, []string{"micro-batch", "mps-watermark"}
		}
		return []string{"find-non-pytorch", "other-framework", "cudnn-benchmark-off"}, []string{"nccl-headroom", "micro-batch"}
	case CauseLeak:
		return []string{"item-for-logging", "release-retained"}, []string{"inference-mode", "memory-snapshot"}
	case CauseLastStraw:
		return []string{"memory-snapshot"}, []string{"item-for-logging", "micro-batch", "checkpointing"}
	case CauseCPURAM:
		return []string{"host-memory", "move-to-gpu", "load-lazily"}, nil
	case CauseKVCacheBudget:
		return []string{"vllm-max-len", "vllm-utilization", "vllm-kv-fp8", "vllm-tp"}, nil
	case CauseBogusSize:
		return []string{"inspect-shape"}, []string{"memory-snapshot"}
	case CauseAllowedLimit:
		return []string{"raise-fraction"}, []string{"micro-batch", "autocast"}
	case CausePreallocation:
		if f.Backend == BackendXLA {
			return []string{"jax-prealloc", "find-other-process"}, nil
		}
		return []string{"tf-growth", "find-other-process"}, nil
	}
	// Unknown.
	switch {
	case f.Backend == BackendXPU:
		return []string{"xpu-split"}, []string{"memory-snapshot"}
	case f.Kind.IsErrorPlain() || f.Kind == KindCUDNN || f.Kind == KindCUDALegacy || f.Kind == KindCUBLAS:
		return []string{"find-other-process", "launch-blocking"}, []string{"cudnn-benchmark-off", "micro-batch"}
	}
	return []string{"find-other-process", "memory-snapshot"}, []string{"micro-batch"}
}

// pytorchGPU reports whether the When table applies: a PyTorch workload on
// an accelerator, with a cause the workload's shape can change.
func pytorchGPU(f *Finding) bool {
	switch f.Backend {
	case BackendCPU, BackendVLLM, BackendXLA, BackendTF:
		return false
	}
	switch f.Cause {
	case CauseCPURAM, CauseKVCacheBudget, CauseBogusSize, CauseAllowedLimit, CausePreallocation:
		return false
	}
	return true
}

// chooseFixes fills f.Fixes: the cause's lead fixes, then the fixes the
// When table names, then the cause's other fixes, without repeats.
func chooseFixes(f *Finding, when When) {
	cat := fixCatalog(f)
	lead, rest := causeFixes(f)
	seen := map[string]bool{}
	var out []Suggestion
	add := func(ids []string, reason string) {
		for _, id := range ids {
			fx, ok := cat[id]
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			fx.Reason = reason
			out = append(out, fx)
		}
	}
	add(lead, "cause: "+string(f.Cause))
	if wf, ok := whenFixes[when]; ok && pytorchGPU(f) {
		add(wf.fixes, "when: "+wf.meaning)
	}
	add(rest, "cause: "+string(f.Cause))
	f.Fixes = out
}
