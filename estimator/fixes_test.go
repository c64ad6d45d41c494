package estimator

import "testing"

// TestRungChanges applies each rung to one request and checks what it says
// it changed ("" when it does not apply) and the request it leaves.
func TestRungChanges(t *testing.T) {
	rungs := map[string]candidate{}
	for _, rg := range append(append(append([]candidate(nil), trainLadder...), inferLadder...), serveLadder...) {
		rungs[rg.name] = rg
	}
	infer := "mode=infer&"
	serve := "mode=serve&"
	tests := []struct {
		rung, query, change, after string
	}{
		{"micro-batch + accumulation", "batch=4&accum=3", "batch 4 → 1, accum 3 → 12 (same global batch)", "accum=12"},
		{"micro-batch + accumulation", "accum=5", "", "accum=5"},
		{"mixed precision", "dtype=fp32", "fp32 → bf16 autocast (fp32 weights, 16-bit activations)", "autocast=true"},
		{"mixed precision", "dtype=fp32&gpu=v100-32gb", "fp32 → fp16 autocast (fp32 weights, 16-bit activations)", "gpu=v100-32gb&dtype=fp16&autocast=true"},
		{"mixed precision", "", "", ""},
		{"activation checkpointing", "ckpt=selective", "ckpt selective → full", "ckpt=full"},
		{"activation checkpointing", "ckpt=full", "", "ckpt=full"},
		{"chunked cross-entropy", "logits=bf16", "logits bf16 → chunked", "logits=chunked"},
		{"chunked cross-entropy", "logits=chunked", "", "logits=chunked"},
		{"8-bit optimizer", "", "optimizer adamw → adamw-8bit", "optimizer=adamw-8bit"},
		{"8-bit optimizer", "optimizer=lion", "", "optimizer=lion"},
		{"LoRA", "lora_rank=8", "method full → lora (rank 8, all-linear)", "method=lora&lora_rank=8"},
		{"LoRA", "method=qlora", "", "method=qlora"},
		{"QLoRA", "method=lora", "method lora → qlora (NF4 base)", "method=qlora"},
		{"QLoRA", "", "", ""},
		{"ZeRO-3 sharding", "gpus=4&shard=ddp", "shard ddp → zero3, gpus 4 → 4", "gpus=4&shard=zero3"},
		{"ZeRO-3 sharding", "gpus=4&shard=zero3", "", "gpus=4&shard=zero3"},
		{"smaller batch", infer + "batch=8", "batch 8 → 1", "mode=infer"},
		{"smaller batch", infer, "", "mode=infer"},
		{"fp8 KV cache", infer, "kv_dtype auto → fp8", "mode=infer&kv_dtype=fp8"},
		{"fp8 KV cache", infer + "kv_dtype=fp8", "", "mode=infer&kv_dtype=fp8"},
		{"8-bit weights", infer, "quant auto → int8", "mode=infer&quant=int8"},
		{"8-bit weights", infer + "model=gpt-oss-20b", "", "model=gpt-oss-20b&mode=infer"},
		{"8-bit weights", infer + "quant=fp8", "", "mode=infer&quant=fp8"},
		{"4-bit weights", infer + "quant=int8", "quant int8 → int4", "mode=infer&quant=int4"},
		{"4-bit weights", infer + "quant=int4", "", "mode=infer&quant=int4"},
		{"16-bit optimizer states", "optim_dtype=fp32", "optim_dtype fp32 → bf16", "optim_dtype=bf16"},
		{"16-bit optimizer states", "", "", ""},
		{"CPU offload", "", "offload none → optimizer (optimizer states and gradients in host RAM)", "offload=optimizer"},
		{"tensor parallelism", "model=llama-3.1-70b&gpus=8", "tp 1 → 8, gpus 8 → 64", "model=llama-3.1-70b&gpus=64&tp=8"},
		{"tensor parallelism", "model=llama-3.1-8b&gpus=8&tp=8", "", "gpus=8&tp=8"},
		{"more of the card for the engine", serve, "gpu_memory_utilization 0.9 → 0.95", "mode=serve&gpu_memory_utilization=0.95"},
		{"more of the card for the engine", serve + "gpu_memory_utilization=0.97", "", "mode=serve&gpu_memory_utilization=0.97"},
		{"smaller profile batch", serve, "max_num_seqs 1024 → 256, max_num_batched_tokens 8192 → 2048 (a smaller start-up profile)", "mode=serve&max_num_seqs=256&max_num_batched_tokens=2048"},
		{"smaller profile batch", serve + "gpu=a100-80gb", "", "gpu=a100-80gb&mode=serve"},
		{"FP8 weights", serve, "quant auto → fp8", "mode=serve&quant=fp8"},
		{"FP8 weights", serve + "model=deepseek-r1", "", "model=deepseek-r1&mode=serve"},
		{"4-bit weights (AWQ)", serve, "quant auto → awq (a 4-bit AWQ checkpoint)", "mode=serve&quant=awq"},
		{"tensor parallelism", serve + "model=llama-3.1-70b", "tp 1 → 4", "model=llama-3.1-70b&mode=serve&tp=4"},
		{"shorter max_model_len", serve + "gpu=rtx-4090-24gb", "max_model_len 131072 → 48000 (the longest the KV cache holds)", "gpu=rtx-4090-24gb&mode=serve&max_model_len=48000"},
		{"shorter max_model_len", serve + "max_model_len=8192", "", "mode=serve&max_model_len=8192"},
	}
	for _, tt := range tests {
		rg, ok := rungs[tt.rung]
		if !ok {
			t.Fatalf("no rung %q", tt.rung)
		}
		p, err := newPlan(queryRequest(t, tt.query))
		if err != nil {
			t.Fatalf("%s: %v", tt.query, err)
		}
		if got := rg.apply(p); got != tt.change {
			t.Errorf("%s on %q: change %q, want %q", tt.rung, tt.query, got, tt.change)
		}
		if got := p.r.QueryString(); got != tt.after {
			t.Errorf("%s on %q: request %q after, want %q", tt.rung, tt.query, got, tt.after)
		}
	}
}
