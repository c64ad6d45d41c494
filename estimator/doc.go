// Package estimator computes where the GPU memory of a PyTorch training or
// inference job goes, bucket by bucket, in bytes: weights, gradients,
// optimizer states, activations, logits, KV cache and fixed overhead.
//
// It holds a catalog of real models (dimensions from their Hugging Face
// config.json) and GPUs (the capacity PyTorch reports and the marketed
// size), reads custom config.json files, and answers the practical
// questions: does it fit with headroom, which is the smallest GPU that fits,
// how many GPUs ZeRO-3 needs, the largest micro-batch and sequence that fit,
// and which fixes bring the total down, cheapest first.
//
// Every number comes with the formula that produced it, in words, so the UI
// and the CLI can show why. The request vocabulary (see Request) is shared by
// the /estimate page URL, the `oomscope estimate` flags and JSON.
//
// Two activation models exist: ActivationsTally (default) counts the tensors
// a real Hugging Face / torchtune decoder block saves for backward; and
// ActivationsPaper uses Korthikanti et al.'s per-layer formula.
package estimator
