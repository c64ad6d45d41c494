// Package estimator computes where the GPU memory of a PyTorch training
// job, an inference job or a serving engine (vLLM, SGLang) goes, bucket by
// bucket, in bytes: weights, gradients, optimizer states, activations,
// logits, KV cache, workspaces, the caching allocator's waste and what lies
// outside PyTorch. The buckets add up to the three numbers a job prints —
// allocated (max_memory_allocated), reserved (max_memory_reserved) and
// device (nvidia-smi) — and serve mode also gives what the engine prints at
// start-up: weights per GPU, the profile's activation peak, the KV cache in
// bytes, blocks and tokens, and the concurrency it allows.
//
// The model catalog is data (models/*.json: each model's config.json
// fields, built through ParseConfig like a user's file and checked against
// its published parameter total); the GPU catalog holds the capacities
// PyTorch reports. Around an estimate, Advise answers the practical
// questions: does it fit, the smallest GPU that fits, the GPUs ZeRO-3 (or
// tensor parallelism) needs, the feasible region of micro-batch × sequence
// length, the error band of the nearest measured setups, and the fixes that
// bring it down, cheapest first.
//
// Every number comes with the formula that produced it, in words, so the UI
// and the CLI can show why; docs/estimator.md explains each rule. The
// request vocabulary (Request, described field by field by Fields) is
// shared by the /estimate page URL, the `oomscope estimate` flags and JSON.
package estimator
