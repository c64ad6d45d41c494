package triage

import "strings"

// Fix is one remedy with the exact code or setting to apply.
type Fix struct {
	// ID names the fix, e.g. "expandable-segments".
	ID string `json:"id"`
	// Title is a short imperative title.
	Title string `json:"title"`
	// Why says what the fix changes and why it helps here.
	Why string `json:"why"`
	// Code is the exact code or setting to copy.
	Code string `json:"code"`
	// Lang is the language of Code: "bash" or "python".
	Lang string `json:"lang"`
	// Cost ranks effort: 1 a setting, 2 one line, 3 a few lines, 4 a
	// restructure.
	Cost int `json:"cost"`
	// Reason says which rule suggested it: "cause: fragmentation" or "when:
	// only on long inputs".
	Reason string `json:"reason"`
}

// fixCatalog returns every fix, specialised for f (env var names, backend).
func fixCatalog(f *Finding) map[string]Fix {
	dev := "cuda"
	switch f.Backend {
	case "xpu":
		dev = "xpu"
	case "mps":
		dev = "mps"
	}
	fx := map[string]Fix{
		"micro-batch": {Title: "Halve the micro-batch, keep the batch with gradient accumulation", Lang: "python", Cost: 2,
			Why: "activations scale with the micro-batch; accumulation keeps the effective batch and the maths",
			Code: `accum = 4                      # effective batch = micro_batch * accum
for i, batch in enumerate(loader):   # loader built with batch_size = old_batch_size // accum
    loss = model(**batch).loss / accum
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)`},
		"autocast": {Title: "Run the forward pass in bf16 autocast", Lang: "python", Cost: 2,
			Why: "halves most activations; weights stay fp32 for the optimizer",
			Code: `with torch.autocast(device_type="` + dev + `", dtype=torch.bfloat16):
    loss = model(**batch).loss
loss.backward()`},
		"checkpointing": {Title: "Turn on activation checkpointing (use_reentrant=False)", Lang: "python", Cost: 3,
			Why: "keeps only block inputs and recomputes the rest in backward: activations drop to about one layer's worth",
			Code: `# Hugging Face models:
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
# plain PyTorch, per block:
from torch.utils.checkpoint import checkpoint
x = checkpoint(block, x, use_reentrant=False)`},
		"chunked-loss": {Title: "Compute the loss in chunks instead of full fp32 logits", Lang: "python", Cost: 3,
			Why: "batch × seq × vocab fp32 logits (and their softmax) are often the largest tensor; chunking keeps one slice alive",
			Code: `def chunked_ce(hidden, lm_head, labels, chunk=1024):
    total, count = 0.0, 0
    for h, y in zip(hidden.split(chunk, dim=1), labels.split(chunk, dim=1)):
        logits = lm_head(h).float()
        total = total + torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), y.flatten(), ignore_index=-100, reduction="sum")
        count += (y != -100).sum()
    return total / count`},
		"optimizer-8bit": {Title: "Use an 8-bit optimizer", Lang: "python", Cost: 2,
			Why: "AdamW keeps two fp32 states per parameter (8 B); 8-bit AdamW keeps 2 B",
			Code: `import bitsandbytes as bnb
optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=2e-5)`},
		"shard": {Title: "Shard parameters, gradients and optimizer state (FSDP2 / ZeRO-3)", Lang: "python", Cost: 4,
			Why: "divides the fixed cost by the number of GPUs",
			Code: `from torch.distributed.fsdp import fully_shard
for block in model.model.layers:
    fully_shard(block)
fully_shard(model)`},
		"lora-qlora": {Title: "Train LoRA adapters on a 4-bit base (QLoRA)", Lang: "python", Cost: 4,
			Why: "freezes the base weights (no gradients or optimizer state for them) and stores them in 4 bits",
			Code: `from transformers import AutoModelForCausalLM, BitsAndBytesConfig
from peft import LoraConfig, get_peft_model
bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16)
model = AutoModelForCausalLM.from_pretrained(name, quantization_config=bnb)
model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM"))`},
		"inference-mode": {Title: "Evaluate under torch.inference_mode()", Lang: "python", Cost: 2,
			Why:  "without it every evaluation step keeps its autograd graph and activations",
			Code: "model.eval()\nwith torch.inference_mode():\n    outputs = model(**batch)"},
		"item-for-logging": {Title: "Log losses with .item(), not the tensor", Lang: "python", Cost: 2,
			Why:  "accumulating the loss tensor keeps every step's graph alive, so memory grows step after step",
			Code: "running_loss += loss.item()   # not: running_loss += loss"},
		"cap-seq-len": {Title: "Cap the sequence length (or bucket by length)", Lang: "python", Cost: 2,
			Why:  "a rare long batch sets the peak; truncation bounds it",
			Code: `enc = tokenizer(texts, truncation=True, max_length=2048, padding="longest", return_tensors="pt")`},
		"sdpa": {Title: "Use SDPA / FlashAttention instead of eager attention", Lang: "python", Cost: 2,
			Why: "eager attention materialises batch × heads × seq² scores; SDPA never does",
			Code: `model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="sdpa", torch_dtype=torch.bfloat16)
# or in your own module:
out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)`},
		"empty-cache": {Title: "Free cached blocks between phases", Lang: "python", Cost: 2,
			Why:  "returns the split cached blocks to the driver between, e.g., evaluation and training, so the next phase starts unfragmented",
			Code: "del outputs, loss\nimport gc; gc.collect()\ntorch." + dev + ".empty_cache()"},
		"find-other-process": {Title: "Find the process holding the GPU", Lang: "bash", Cost: 1,
			Why:  "another job, notebook kernel or zombie worker holds memory on this GPU",
			Code: "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n# then stop it (kill <pid>) or pick a free GPU: export CUDA_VISIBLE_DEVICES=1"},
		"find-non-pytorch": {Title: "Measure what the process holds outside PyTorch", Lang: "python", Cost: 2,
			Why:  "compares the device's view of the process with PyTorch's cache: the gap is context, NCCL, cuBLAS/cuDNN workspaces or another framework",
			Code: "free, total = torch.cuda.mem_get_info()\nprint(f\"device used {(total - free) / 2**30:.2f} GiB, PyTorch reserved {torch.cuda.memory_reserved() / 2**30:.2f} GiB\")"},
		"other-framework": {Title: "Stop JAX/TensorFlow in the same process from preallocating", Lang: "bash", Cost: 1,
			Why:  "JAX and TensorFlow grab most of the GPU when imported, outside PyTorch's cache",
			Code: "export XLA_PYTHON_CLIENT_PREALLOCATE=false\nexport TF_FORCE_GPU_ALLOW_GROWTH=true"},
		"cudnn-benchmark-off": {Title: "Turn off cuDNN benchmark mode", Lang: "python", Cost: 2,
			Why:  "benchmark mode tries algorithms with large workspaces outside PyTorch's accounting",
			Code: "torch.backends.cudnn.benchmark = False"},
		"memory-snapshot": {Title: "Record a memory snapshot to see what fills the card", Lang: "python", Cost: 3,
			Why:  "the failing request is not the culprit; the snapshot shows every live tensor and its stack (open it in the Snapshot page)",
			Code: "torch.cuda.memory._record_memory_history(max_entries=100000)\ntry:\n    train()  # run until the OOM\nfinally:\n    torch.cuda.memory._dump_snapshot(\"oom_snapshot.pickle\")"},
		"inspect-shape": {Title: "Print the shapes feeding the failing op", Lang: "python", Cost: 2,
			Why:  "a size this large comes from a wrong shape (N² of a wrong count, a broadcast, an overflow), not from memory pressure",
			Code: "print(x.shape, x.dtype, x.numel() * x.element_size() / 2**30, \"GiB\")  # before the failing line"},
		"raise-fraction": {Title: "Raise or remove the per-process memory fraction", Lang: "python", Cost: 1,
			Why:  "set_per_process_memory_fraction caps this process below the card's size",
			Code: "torch.cuda.set_per_process_memory_fraction(0.95)  # or remove the call"},
		"host-memory": {Title: "Check host RAM and container limits", Lang: "bash", Cost: 1,
			Why:  "the CPU allocator failed: RAM, swap, a cgroup limit or ulimit ran out",
			Code: "free -h\ncat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes\nulimit -v\n# Docker: raise --memory and --shm-size"},
		"move-to-gpu": {Title: "Make sure the model runs on the GPU", Lang: "python", Cost: 2,
			Why:  "an accidental CPU run puts every activation in host RAM",
			Code: "model = model.to(\"cuda\")\nbatch = {k: v.to(\"cuda\") for k, v in batch.items()}"},
		"load-lazily": {Title: "Load checkpoints without a full copy in RAM", Lang: "python", Cost: 2,
			Why:  "loading a state dict and then the model doubles host memory",
			Code: "state = torch.load(path, mmap=True, weights_only=True)\n# Hugging Face:\nmodel = AutoModelForCausalLM.from_pretrained(name, low_cpu_mem_usage=True, torch_dtype=torch.bfloat16)"},
		"vllm-utilization": {Title: "Give vLLM a larger memory share", Lang: "bash", Cost: 1,
			Why:  "the KV cache gets what gpu_memory_utilization × total leaves after weights and activations",
			Code: "vllm serve MODEL --gpu-memory-utilization 0.95"},
		"vllm-max-len": {Title: "Lower max_model_len", Lang: "bash", Cost: 1,
			Why:  "one request of max_model_len must fit in the KV cache",
			Code: "vllm serve MODEL --max-model-len " + vllmLen(f)},
		"vllm-kv-fp8": {Title: "Store the KV cache in fp8", Lang: "bash", Cost: 1,
			Why:  "halves KV-cache bytes per token",
			Code: "vllm serve MODEL --kv-cache-dtype fp8"},
		"vllm-tp": {Title: "Split the model over more GPUs", Lang: "bash", Cost: 3,
			Why:  "tensor parallelism divides the weights and leaves more room for KV cache on each GPU",
			Code: "vllm serve MODEL --tensor-parallel-size 2"},
		"vllm-lower-util": {Title: "Ask vLLM for no more than is free", Lang: "bash", Cost: 1,
			Why:  "gpu_memory_utilization is a share of the whole GPU, including what others hold",
			Code: "vllm serve MODEL --gpu-memory-utilization " + vllmFreeShare(f)},
		"tf-growth": {Title: "Let TensorFlow grow its pool instead of preallocating", Lang: "bash", Cost: 1,
			Why:  "by default TensorFlow maps nearly the whole GPU at start-up",
			Code: "export TF_FORCE_GPU_ALLOW_GROWTH=true\n# or in Python:\n# for g in tf.config.list_physical_devices('GPU'): tf.config.experimental.set_memory_growth(g, True)"},
		"jax-prealloc": {Title: "Control JAX's preallocation", Lang: "bash", Cost: 1,
			Why:  "JAX preallocates 75 % of the GPU by default; preallocating avoids on-demand fragmentation, a smaller fraction leaves room for others",
			Code: "export XLA_PYTHON_CLIENT_PREALLOCATE=true\nexport XLA_PYTHON_CLIENT_MEM_FRACTION=.90"},
		"jax-remat": {Title: "Rematerialise activations in JAX", Lang: "python", Cost: 3,
			Why:  "jax.checkpoint recomputes a block's activations in the backward pass",
			Code: "block = jax.checkpoint(block)  # a.k.a. jax.remat"},
		"mps-watermark": {Title: "Raise the MPS memory ceiling (with care)", Lang: "bash", Cost: 1,
			Why:  "the MPS allocator stops at 1.7 × the recommended working set; 0.0 lifts the cap but can make macOS swap or freeze",
			Code: "export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0"},
		"nccl-headroom": {Title: "Leave headroom for NCCL buffers", Lang: "bash", Cost: 1,
			Why:  "NCCL allocates its buffers outside PyTorch's cache; smaller buffers or a capped PyTorch share leave room",
			Code: "export NCCL_BUFFSIZE=2097152\nexport NCCL_NVLS_ENABLE=0\n# and/or: torch.cuda.set_per_process_memory_fraction(0.95)"},
		"xpu-split": {Title: "Keep single allocations under 4 GiB on Intel GPUs", Lang: "python", Cost: 3,
			Why:  "Intel GPUs limit one allocation to about 4 GiB even when more is free",
			Code: "outs = [fn(part) for part in x.split(x.shape[0] // 2, dim=0)]\ny = torch.cat(outs)"},
		"launch-blocking": {Title: "Re-run with synchronous launches to find the real failing call", Lang: "bash", Cost: 1,
			Why:  "CUDA errors are reported asynchronously; blocking launches point the traceback at the call that failed",
			Code: "CUDA_LAUNCH_BLOCKING=1 python train.py"},
	}
	fx["expandable-segments"] = expandableSegments(f)
	for id, v := range fx {
		v.ID = id
		fx[id] = v
	}
	return fx
}

// expandableSegments returns the allocator setting against fragmentation,
// with the variable name the message's PyTorch version reads.
func expandableSegments(f *Finding) Fix {
	fx := Fix{Title: "Turn on expandable segments", Lang: "bash", Cost: 1,
		Why: "segments grow in place instead of being split, so reserved-but-unallocated memory stays usable for large requests"}
	v := f.AllocConfVar
	// expandable_segments arrived in PyTorch 2.1; older wordings get the
	// setting that existed then.
	old := strings.HasPrefix(f.PyTorchVersion, "1.") || strings.HasPrefix(f.PyTorchVersion, "<") || strings.HasSuffix(f.Kind, "-1x")
	switch {
	case f.Backend == "xpu":
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
		if f.Backend == "xla" {
			return []string{"jax-prealloc"}, []string{"micro-batch", "jax-remat"}
		}
		return []string{"expandable-segments", "empty-cache"}, []string{"micro-batch", "autocast", "checkpointing"}
	case CauseCapacity:
		switch {
		case strings.Contains(f.Variant, "IPEX 4GB"):
			return []string{"xpu-split"}, []string{"micro-batch"}
		case f.Backend == "mps":
			return nil, []string{"empty-cache", "micro-batch", "autocast", "checkpointing", "mps-watermark"}
		case f.Backend == "xla":
			return nil, []string{"micro-batch", "jax-prealloc", "jax-remat"}
		case f.Kind == "tf" || f.Kind == "tf-bfc":
			return nil, []string{"micro-batch", "tf-growth"}
		case f.Kind == "nccl":
			return []string{"nccl-headroom"}, []string{"micro-batch", "checkpointing"}
		case f.Kind == "cublas":
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
		case "vllm-startup":
			return []string{"find-other-process", "vllm-lower-util"}, nil
		case "tf":
			return []string{"find-other-process", "tf-growth"}, []string{"micro-batch"}
		}
		return []string{"find-other-process"}, []string{"micro-batch", "autocast", "checkpointing"}
	case CauseNonPyTorch:
		if f.Backend == "mps" {
			return []string{"empty-cache"}, []string{"micro-batch", "mps-watermark"}
		}
		return []string{"find-non-pytorch", "other-framework", "cudnn-benchmark-off"}, []string{"nccl-headroom", "micro-batch"}
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
		if f.Backend == "xla" {
			return []string{"jax-prealloc", "find-other-process"}, nil
		}
		return []string{"tf-growth", "find-other-process"}, nil
	}
	// Unknown.
	switch {
	case f.Backend == "xpu":
		return []string{"xpu-split"}, []string{"memory-snapshot"}
	case strings.HasSuffix(f.Kind, "-error-plain") || f.Kind == "cudnn" || f.Kind == "cuda-legacy" || f.Kind == "cublas":
		return []string{"find-other-process", "launch-blocking"}, []string{"cudnn-benchmark-off", "micro-batch"}
	}
	return []string{"find-other-process", "memory-snapshot"}, []string{"micro-batch"}
}

// pytorchGPU reports whether the When table applies: a PyTorch workload on
// an accelerator, with a cause the workload's shape can change.
func pytorchGPU(f *Finding) bool {
	switch f.Backend {
	case "cpu", "vllm", "xla", "tf":
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
	var out []Fix
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
