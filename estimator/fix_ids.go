package estimator

// rungFix maps each ladder rung to the id of the fix it applies in the
// shared catalog (package fixes), so the pages show the same code, cost and
// guide section for it as triage and snapshot analysis do.
var rungFix = map[string]string{
	"micro-batch + accumulation": "micro-batch",
	"mixed precision":            "autocast",
	"activation checkpointing":   "checkpointing",
	"chunked cross-entropy":      "chunked-loss",
	"8-bit optimizer":            "optimizer-8bit",
	"LoRA":                       "lora",
	"QLoRA":                      "lora-qlora",
	"ZeRO-3 sharding":            "shard",
	"16-bit optimizer states":    "optimizer-bf16-states",
	"CPU offload":                "cpu-offload",
	"tensor parallelism":         "tensor-parallel",
	"smaller batch":              "smaller-batch",
	"fp8 KV cache":               "vllm-kv-fp8",
	"8-bit weights":              "quant-int8",
	"4-bit weights":              "quant-int4",
	// Serving (vLLM, SGLang).
	"more of the card for the engine": "vllm-utilization",
	"smaller profile batch":           "vllm-max-num-seqs",
	"FP8 weights":                     "quant-fp8",
	"4-bit weights (AWQ)":             "quant-awq",
	"shorter max_model_len":           "vllm-max-len",
}
