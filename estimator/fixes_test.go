package estimator

import "testing"

// TestRungChanges applies each rung to one request and checks what it says
// it changed ("" when it does not apply) and the request it leaves.
func TestRungChanges(t *testing.T) {
	rungs := map[string]rung{}
	for _, rg := range append(append([]rung(nil), trainLadder...), inferLadder...) {
		rungs[rg.name] = rg
	}
	infer := "mode=infer&"
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
		{"8-bit weights", infer, "quant none → int8", "mode=infer&quant=int8"},
		{"8-bit weights", infer + "quant=fp8", "", "mode=infer&quant=fp8"},
		{"4-bit weights", infer + "quant=int8", "quant int8 → int4", "mode=infer&quant=int4"},
		{"4-bit weights", infer + "quant=int4", "", "mode=infer&quant=int4"},
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
