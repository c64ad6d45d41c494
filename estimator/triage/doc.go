// Package triage reads out-of-memory error messages pasted from PyTorch and
// neighbouring stacks (CUDA, ROCm/HIP, MPS, XPU, the CPU allocator, cuBLAS,
// cuDNN, NCCL, JAX/XLA, TensorFlow, vLLM), extracts every number they print,
// names the likely cause with the rule and numbers that decided it, and lists
// the fixes for that cause, cheapest first.
//
// Triage finds every message in any pasted text (whole tracebacks, logs with
// rank prefixes, several errors in a row) and returns one Finding per message.
// Sizes are converted to bytes as round-half-up of value × unit, with the
// binary units PyTorch prints (KiB = 2^10, MiB = 2^20, GiB = 2^30; the "GB"
// of MPS messages before PyTorch 2.8 is also 2^30). Numbers a message does not
// print are absent, never zero.
//
// The package is pure Go with no I/O; it runs in the browser (WebAssembly) and
// in the oomscope CLI.
package triage
