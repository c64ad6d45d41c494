// Package fixes is the one catalog of out-of-memory remedies that the
// estimator, OOM triage and snapshot analysis share: each fix has a stable
// id, a title, the exact code or setting to apply, its language, a cost rank
// and the guide section that explains it. A tool adds only what the fix
// saves in its own context (the estimator's bytes for a setup, triage's
// reason, the snapshot's measured bytes).
//
// The ids appear in JSON output, URLs and tests; they do not change. Every
// fix links to the same guide section wherever it is shown (Fix.Guide).
package fixes

import (
	"slices"
	"strings"
)

// Fix is one remedy with the exact code or setting to apply.
type Fix struct {
	// ID names the fix, e.g. "expandable-segments".
	ID string `json:"id"`
	// Title is a short imperative title.
	Title string `json:"title"`
	// Why says what the fix changes and why it helps.
	Why string `json:"why"`
	// Code is the exact code or setting to copy.
	Code string `json:"code"`
	// Lang is the language of Code: "bash" or "python".
	Lang string `json:"lang"`
	// Cost ranks effort: 1 a setting, 2 one line, 3 a few lines, 4 a
	// restructure.
	Cost int `json:"cost"`
	// Guide is the site path of the guide section that explains the fix,
	// e.g. "/guides/fix-cheapest-first#the-ladder".
	Guide string `json:"guide"`
}

// Cost ranks.
const (
	CostSetting     = 1
	CostOneLine     = 2
	CostFewLines    = 3
	CostRestructure = 4
)

// The guide sections the fixes link to: "<slug>#<section id>", sections
// (second-level headings) of the guides in content/guides that teach the
// fix. TestGuideSections checks that each one exists.
const (
	secLadder      = "fix-cheapest-first#the-ladder"
	secInference   = "fix-cheapest-first#inference"
	secFragFixes   = "fragmentation#fixes"
	secClassify    = "read-the-message#classify"
	secWordings    = "read-the-message#older-and-other-wordings"
	secSnapshot    = "measure#record-a-memory-snapshot"
	secAllocator   = "read-a-snapshot#5-allocator-state"
	secLeaks       = "leaks#the-usual-culprits"
	secEvalOff     = "oom-in-evaluation#turn-autograd-off"
	secLongFixes   = "long-inputs#fixes"
	secServers     = "inference-and-serving#vllm-and-other-servers"
	secStrategies  = "multi-gpu#what-each-strategy-keeps-per-gpu"
	secNCCL        = "multi-gpu#nccl-and-other-memory-outside-pytorch"
	secHostRAM     = "host-ram#recognise-it"
	secCheckpoints = "host-ram#loading-checkpoints"
	secOffload     = "host-ram#offload"
)

// entry is a catalog row: the fix with "{dev}" where the device family
// goes ("cuda", "xpu", "mps"), and its guide section.
type entry struct {
	id, guide string
	fix       Fix
}

// catalog lists every fix, in a stable order: by cost, then the order
// the guides teach them.
var catalog = []entry{
	{"expandable-segments", secFragFixes, Fix{Title: "Turn on expandable segments", Lang: "bash", Cost: CostSetting,
		Why:  "segments grow in place instead of being split, so reserved-but-unallocated memory stays usable for large requests",
		Code: "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n# or in Python, before the first allocation:\n# import os; os.environ[\"PYTORCH_CUDA_ALLOC_CONF\"] = \"expandable_segments:True\""}},
	{"find-other-process", secClassify, Fix{Title: "Find the process holding the GPU", Lang: "bash", Cost: CostSetting,
		Why:  "another job, notebook kernel or zombie worker holds memory on this GPU",
		Code: "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n# then stop it (kill <pid>) or pick a free GPU: export CUDA_VISIBLE_DEVICES=1"}},
	{"other-framework", secClassify, Fix{Title: "Stop JAX/TensorFlow in the same process from preallocating", Lang: "bash", Cost: CostSetting,
		Why:  "JAX and TensorFlow grab most of the GPU when imported, outside PyTorch's cache",
		Code: "export XLA_PYTHON_CLIENT_PREALLOCATE=false\nexport TF_FORCE_GPU_ALLOW_GROWTH=true"}},
	{"raise-fraction", secClassify, Fix{Title: "Raise or remove the per-process memory fraction", Lang: "python", Cost: CostSetting,
		Why:  "set_per_process_memory_fraction caps this process below the card's size",
		Code: "torch.cuda.set_per_process_memory_fraction(0.95)  # or remove the call"}},
	{"host-memory", secHostRAM, Fix{Title: "Check host RAM and container limits", Lang: "bash", Cost: CostSetting,
		Why:  "the CPU allocator failed: RAM, swap, a cgroup limit or ulimit ran out",
		Code: "free -h\ncat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes\nulimit -v\n# Docker: raise --memory and --shm-size"}},
	{"vllm-utilization", secServers, Fix{Title: "Give vLLM a larger memory share", Lang: "bash", Cost: CostSetting,
		Why:  "the KV cache gets what gpu_memory_utilization × total leaves after weights and activations",
		Code: "vllm serve MODEL --gpu-memory-utilization 0.95"}},
	{"vllm-max-len", secServers, Fix{Title: "Lower max_model_len", Lang: "bash", Cost: CostSetting,
		Why:  "one request of max_model_len must fit in the KV cache",
		Code: "vllm serve MODEL --max-model-len 8192"}},
	{"vllm-kv-fp8", secServers, Fix{Title: "Store the KV cache in fp8", Lang: "bash", Cost: CostSetting,
		Why:  "halves KV-cache bytes per token",
		Code: "vllm serve MODEL --kv-cache-dtype fp8"}},
	{"vllm-lower-util", secServers, Fix{Title: "Ask vLLM for no more than is free", Lang: "bash", Cost: CostSetting,
		Why:  "gpu_memory_utilization is a share of the whole GPU, including what others hold",
		Code: "vllm serve MODEL --gpu-memory-utilization 0.5"}},
	{"tf-growth", secWordings, Fix{Title: "Let TensorFlow grow its pool instead of preallocating", Lang: "bash", Cost: CostSetting,
		Why:  "by default TensorFlow maps nearly the whole GPU at start-up",
		Code: "export TF_FORCE_GPU_ALLOW_GROWTH=true\n# or in Python:\n# for g in tf.config.list_physical_devices('GPU'): tf.config.experimental.set_memory_growth(g, True)"}},
	{"jax-prealloc", secWordings, Fix{Title: "Control JAX's preallocation", Lang: "bash", Cost: CostSetting,
		Why:  "JAX preallocates 75 % of the GPU by default; preallocating avoids on-demand fragmentation, a smaller fraction leaves room for others",
		Code: "export XLA_PYTHON_CLIENT_PREALLOCATE=true\nexport XLA_PYTHON_CLIENT_MEM_FRACTION=.90"}},
	{"mps-watermark", secWordings, Fix{Title: "Raise the MPS memory ceiling (with care)", Lang: "bash", Cost: CostSetting,
		Why:  "the MPS allocator stops at 1.7 × the recommended working set; 0.0 lifts the cap but can make macOS swap or freeze",
		Code: "export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0"}},
	{"nccl-headroom", secNCCL, Fix{Title: "Leave headroom for NCCL buffers", Lang: "bash", Cost: CostSetting,
		Why:  "NCCL allocates its buffers outside PyTorch's cache; smaller buffers or a capped PyTorch share leave room",
		Code: "export NCCL_BUFFSIZE=2097152\nexport NCCL_NVLS_ENABLE=0\n# and/or: torch.cuda.set_per_process_memory_fraction(0.95)"}},
	{"launch-blocking", secWordings, Fix{Title: "Re-run with synchronous launches to find the real failing call", Lang: "bash", Cost: CostSetting,
		Why:  "CUDA errors are reported asynchronously; blocking launches point the traceback at the call that failed",
		Code: "CUDA_LAUNCH_BLOCKING=1 python train.py"}},
	{"micro-batch", secLadder, Fix{Title: "Halve the micro-batch, keep the batch with gradient accumulation", Lang: "python", Cost: CostOneLine,
		Why: "activations scale with the micro-batch; accumulation keeps the effective batch and the maths",
		Code: `accum = 4                      # effective batch = micro_batch * accum
for i, batch in enumerate(loader):   # loader built with batch_size = old_batch_size // accum
    loss = model(**batch).loss / accum
    loss.backward()
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)`}},
	{"smaller-batch", secInference, Fix{Title: "Serve a smaller batch", Lang: "python", Cost: CostOneLine,
		Why:  "activations and the KV cache grow with the number of sequences processed at once",
		Code: "for chunk in prompts.split(max(1, len(prompts) // 2)):   # half the batch at a time\n    outputs.append(model.generate(**chunk))"}},
	{"autocast", secLadder, Fix{Title: "Run the forward pass in bf16 autocast", Lang: "python", Cost: CostOneLine,
		Why: "halves most activations; weights stay fp32 for the optimizer",
		Code: `with torch.autocast(device_type="{dev}", dtype=torch.bfloat16):
    loss = model(**batch).loss
loss.backward()`}},
	{"optimizer-8bit", secLadder, Fix{Title: "Use an 8-bit optimizer", Lang: "python", Cost: CostOneLine,
		Why: "AdamW keeps two fp32 states per parameter (8 B); 8-bit AdamW keeps 2 B",
		Code: `import bitsandbytes as bnb
optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=2e-5)`}},
	{"inference-mode", secEvalOff, Fix{Title: "Evaluate under torch.inference_mode()", Lang: "python", Cost: CostOneLine,
		Why:  "without it every evaluation step keeps its autograd graph and activations",
		Code: "model.eval()\nwith torch.inference_mode():\n    outputs = model(**batch)"}},
	{"item-for-logging", secLeaks, Fix{Title: "Log losses with .item(), not the tensor", Lang: "python", Cost: CostOneLine,
		Why:  "accumulating the loss tensor keeps every step's graph alive, so memory grows step after step",
		Code: "running_loss += loss.item()   # not: running_loss += loss"}},
	{"release-retained", secLeaks, Fix{Title: "Keep detached CPU copies of what you store across steps", Lang: "python", Cost: CostOneLine,
		Why:  "a tensor kept in a list or dict across steps (outputs, logits, hidden states) holds its GPU memory, and its graph, until the list goes away",
		Code: "history.append(logits.detach().cpu())   # not: history.append(logits)\n# or keep only what you need: history.append(logits.argmax(-1).cpu())"}},
	{"cap-seq-len", secLongFixes, Fix{Title: "Cap the sequence length (or bucket by length)", Lang: "python", Cost: CostOneLine,
		Why:  "a rare long batch sets the peak; truncation bounds it",
		Code: `enc = tokenizer(texts, truncation=True, max_length=2048, padding="longest", return_tensors="pt")`}},
	{"sdpa", secLongFixes, Fix{Title: "Use SDPA / FlashAttention instead of eager attention", Lang: "python", Cost: CostOneLine,
		Why: "eager attention materialises batch × heads × seq² scores; SDPA never does",
		Code: `model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="sdpa", torch_dtype=torch.bfloat16)
# or in your own module:
out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)`}},
	{"empty-cache", secFragFixes, Fix{Title: "Free cached blocks between phases", Lang: "python", Cost: CostOneLine,
		Why:  "returns the split cached blocks to the driver between, e.g., evaluation and training, so the next phase starts unfragmented",
		Code: "del outputs, loss\nimport gc; gc.collect()\ntorch.{dev}.empty_cache()"}},
	{"find-non-pytorch", secClassify, Fix{Title: "Measure what the process holds outside PyTorch", Lang: "python", Cost: CostOneLine,
		Why:  "compares the device's view of the process with PyTorch's cache: the gap is context, NCCL, cuBLAS/cuDNN workspaces or another framework",
		Code: "free, total = torch.cuda.mem_get_info()\nprint(f\"device used {(total - free) / 2**30:.2f} GiB, PyTorch reserved {torch.cuda.memory_reserved() / 2**30:.2f} GiB\")"}},
	{"cudnn-benchmark-off", secClassify, Fix{Title: "Turn off cuDNN benchmark mode", Lang: "python", Cost: CostOneLine,
		Why:  "benchmark mode tries algorithms with large workspaces outside PyTorch's accounting",
		Code: "torch.backends.cudnn.benchmark = False"}},
	{"inspect-shape", secClassify, Fix{Title: "Print the shapes feeding the failing op", Lang: "python", Cost: CostOneLine,
		Why:  "a size this large comes from a wrong shape (N² of a wrong count, a broadcast, an overflow), not from memory pressure",
		Code: "print(x.shape, x.dtype, x.numel() * x.element_size() / 2**30, \"GiB\")  # before the failing line"}},
	{"move-to-gpu", secHostRAM, Fix{Title: "Make sure the model runs on the GPU", Lang: "python", Cost: CostOneLine,
		Why:  "an accidental CPU run puts every activation in host RAM",
		Code: "model = model.to(\"cuda\")\nbatch = {k: v.to(\"cuda\") for k, v in batch.items()}"}},
	{"load-lazily", secCheckpoints, Fix{Title: "Load checkpoints without a full copy in RAM", Lang: "python", Cost: CostOneLine,
		Why:  "loading a state dict and then the model doubles host memory",
		Code: "state = torch.load(path, mmap=True, weights_only=True)\n# Hugging Face:\nmodel = AutoModelForCausalLM.from_pretrained(name, low_cpu_mem_usage=True, torch_dtype=torch.bfloat16)"}},
	{"quant-int8", secInference, Fix{Title: "Load the weights in 8 bits", Lang: "python", Cost: CostOneLine,
		Why:  "int8 weights take 1 B per parameter instead of 2 (bf16)",
		Code: "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\nmodel = AutoModelForCausalLM.from_pretrained(name, quantization_config=BitsAndBytesConfig(load_in_8bit=True))"}},
	{"quant-int4", secInference, Fix{Title: "Load the weights in 4 bits", Lang: "python", Cost: CostOneLine,
		Why:  "4-bit weights take about 0.5 B per parameter instead of 2 (bf16)",
		Code: "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\nbnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\", bnb_4bit_compute_dtype=torch.bfloat16)\nmodel = AutoModelForCausalLM.from_pretrained(name, quantization_config=bnb)"}},
	{"optimizer-bf16-states", secLadder, Fix{Title: "Keep the optimizer states in bf16", Lang: "python", Cost: CostOneLine,
		Why: "torch.optim keeps its states in the parameters' dtype: bf16 states take 2 B per value instead of 4",
		Code: `model = model.to(torch.bfloat16)        # AdamW's moments follow the parameters' dtype
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)`}},
	{"vllm-max-num-seqs", secServers, Fix{Title: "Profile the engine with a smaller batch", Lang: "bash", Cost: CostSetting,
		Why:  "vLLM sizes its activation reserve at start-up from max_num_seqs and max_num_batched_tokens; smaller values leave more for the KV cache",
		Code: "vllm serve MODEL --max-num-seqs 256 --max-num-batched-tokens 2048"}},
	{"quant-fp8", secInference, Fix{Title: "Serve the weights in FP8", Lang: "bash", Cost: CostSetting,
		Why:  "FP8 weights take 1 B per parameter instead of 2",
		Code: "vllm serve MODEL --quantization fp8"}},
	{"quant-awq", secInference, Fix{Title: "Serve a 4-bit AWQ checkpoint", Lang: "bash", Cost: CostOneLine,
		Why:  "4-bit AWQ weights take about 0.5 B per parameter",
		Code: "vllm serve ORG/MODEL-AWQ --quantization awq"}},
	{"sync-before-free", secAllocator, Fix{Title: "Synchronize the side stream before its tensors are freed", Lang: "python", Cost: CostOneLine,
		Why:  "a tensor used on another stream (record_stream) is only returned to the cache once that stream's work is done; a missing synchronization keeps it held",
		Code: "torch.cuda.current_stream().wait_stream(side_stream)   # before dropping tensors used on side_stream\n# or, at a step boundary: torch.cuda.synchronize()"}},
	{"checkpointing", secLadder, Fix{Title: "Turn on activation checkpointing (use_reentrant=False)", Lang: "python", Cost: CostFewLines,
		Why: "keeps only block inputs and recomputes the rest in backward: activations drop to about one layer's worth",
		Code: `# Hugging Face models:
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
# plain PyTorch, per block:
from torch.utils.checkpoint import checkpoint
x = checkpoint(block, x, use_reentrant=False)`}},
	{"chunked-loss", secLongFixes, Fix{Title: "Compute the loss in chunks instead of full fp32 logits", Lang: "python", Cost: CostFewLines,
		Why: "batch × seq × vocab fp32 logits (and their softmax) are often the largest tensor; chunking keeps one slice alive",
		Code: `def chunked_ce(hidden, lm_head, labels, chunk=1024):
    total, count = 0.0, 0
    for h, y in zip(hidden.split(chunk, dim=1), labels.split(chunk, dim=1)):
        logits = lm_head(h).float()
        total = total + torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), y.flatten(), ignore_index=-100, reduction="sum")
        count += (y != -100).sum()
    return total / count`}},
	{"memory-snapshot", secSnapshot, Fix{Title: "Record a memory snapshot to see what fills the card", Lang: "python", Cost: CostFewLines,
		Why:  "the failing request is not the culprit; the snapshot shows every live tensor and its stack (open it in the Snapshot page)",
		Code: "torch.cuda.memory._record_memory_history(max_entries=100000)\ntry:\n    train()  # run until the OOM\nfinally:\n    torch.cuda.memory._dump_snapshot(\"oom_snapshot.pickle\")"}},
	{"jax-remat", secWordings, Fix{Title: "Rematerialise activations in JAX", Lang: "python", Cost: CostFewLines,
		Why:  "jax.checkpoint recomputes a block's activations in the backward pass",
		Code: "block = jax.checkpoint(block)  # a.k.a. jax.remat"}},
	{"xpu-split", secWordings, Fix{Title: "Keep single allocations under 4 GiB on Intel GPUs", Lang: "python", Cost: CostFewLines,
		Why:  "Intel GPUs limit one allocation to about 4 GiB even when more is free",
		Code: "outs = [fn(part) for part in x.split(x.shape[0] // 2, dim=0)]\ny = torch.cat(outs)"}},
	{"vllm-tp", secServers, Fix{Title: "Split the model over more GPUs", Lang: "bash", Cost: CostFewLines,
		Why:  "tensor parallelism divides the weights and leaves more room for KV cache on each GPU",
		Code: "vllm serve MODEL --tensor-parallel-size 2"}},
	{"cpu-offload", secOffload, Fix{Title: "Offload optimizer states and gradients to host RAM", Lang: "python", Cost: CostRestructure,
		Why: "the states live in host memory and are streamed in for the step: GPU memory for the model state drops, at some speed",
		Code: `from torch.distributed.fsdp import CPUOffloadPolicy, fully_shard
fully_shard(model, offload_policy=CPUOffloadPolicy())
# DeepSpeed: "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}`}},
	{"tensor-parallel", secStrategies, Fix{Title: "Split each layer over more GPUs (tensor parallelism)", Lang: "python", Cost: CostRestructure,
		Why: "each GPU holds a slice of every weight matrix, and of its activations",
		Code: `from torch.distributed.tensor.parallel import parallelize_module, ColwiseParallel, RowwiseParallel
parallelize_module(block, tp_mesh, {"mlp.up_proj": ColwiseParallel(), "mlp.down_proj": RowwiseParallel()})
# serving: vllm serve MODEL --tensor-parallel-size 2`}},
	{"lora", secLadder, Fix{Title: "Train LoRA adapters instead of every weight", Lang: "python", Cost: CostRestructure,
		Why: "freezes the base weights: no gradients or optimizer state for them, only for small adapters",
		Code: `from peft import LoraConfig, get_peft_model
model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM"))`}},
	{"lora-qlora", secLadder, Fix{Title: "Train LoRA adapters on a 4-bit base (QLoRA)", Lang: "python", Cost: CostRestructure,
		Why: "freezes the base weights (no gradients or optimizer state for them) and stores them in 4 bits",
		Code: `from transformers import AutoModelForCausalLM, BitsAndBytesConfig
from peft import LoraConfig, get_peft_model
bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16)
model = AutoModelForCausalLM.from_pretrained(name, quantization_config=bnb)
model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM"))`}},
	{"shard", secStrategies, Fix{Title: "Shard parameters, gradients and optimizer state (FSDP2 / ZeRO-3)", Lang: "python", Cost: CostRestructure,
		Why: "divides the fixed cost by the number of GPUs",
		Code: `from torch.distributed.fsdp import fully_shard
for block in model.model.layers:
    fully_shard(block)
fully_shard(model)`}},
}

// index maps an id to its catalog row.
var index = func() map[string]int {
	m := make(map[string]int, len(catalog))
	for i, e := range catalog {
		m[e.id] = i
	}
	return m
}()

// Get returns the fix with the given id, its code written for the device
// family dev ("cuda", "xpu" or "mps"; "" means cuda).
func Get(id, dev string) (Fix, bool) {
	i, ok := index[id]
	if !ok {
		return Fix{}, false
	}
	return build(catalog[i], dev), true
}

// Must is Get for ids the caller names in its own code; it panics on an
// unknown id, which a test of the caller catches.
func Must(id, dev string) Fix {
	fx, ok := Get(id, dev)
	if !ok {
		panic("fixes: unknown fix " + id)
	}
	return fx
}

// All returns every fix for device family dev, in catalog order (cheapest
// first).
func All(dev string) []Fix {
	out := make([]Fix, len(catalog))
	for i, e := range catalog {
		out[i] = build(e, dev)
	}
	return out
}

// IDs lists every fix id in catalog order.
func IDs() []string {
	out := make([]string, len(catalog))
	for i, e := range catalog {
		out[i] = e.id
	}
	return out
}

// GuidePath returns the site path of the guide section of fix id ("" when
// the id is unknown): /guides/<slug>#<section>.
func GuidePath(id string) string {
	i, ok := index[id]
	if !ok {
		return ""
	}
	return "/guides/" + catalog[i].guide
}

// Guides lists the guide sections the catalog links to ("<slug>#<section
// id>"), sorted, each once.
func Guides() []string {
	var out []string
	for _, e := range catalog {
		if !slices.Contains(out, e.guide) {
			out = append(out, e.guide)
		}
	}
	slices.Sort(out)
	return out
}

func build(e entry, dev string) Fix {
	if dev == "" {
		dev = "cuda"
	}
	fx := e.fix
	fx.ID = e.id
	fx.Code = strings.ReplaceAll(fx.Code, "{dev}", dev)
	fx.Guide = "/guides/" + e.guide
	return fx
}

// ByCost orders fixes cheapest first, keeping the given order among fixes
// of equal cost.
func ByCost(fs []Fix) {
	slices.SortStableFunc(fs, func(a, b Fix) int { return a.Cost - b.Cost })
}
