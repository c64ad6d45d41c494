package triage

import "strings"

// Kind names the format of a message (docs/triage.md#formats). Its JSON
// value is the string, e.g. "cuda-2x".
type Kind string

// Message formats. Caching-allocator messages of other accelerators are
// the backend's name (KindHIP, KindXPU, KindNPU, or any other backend word
// the message prints), and a plain runtime error is the backend's name
// with "-error-plain" (Backend.ErrorPlain).
const (
	// KindCUDA2x: the multi-sentence caching-allocator message (PyTorch 2.1+).
	KindCUDA2x Kind = "cuda-2x"
	// KindCUDA2xTruncated: a 2.x message cut after "GPU" (the 2.3.x bug).
	KindCUDA2xTruncated Kind = "cuda-2x-truncated"
	// KindCUDA1x: the parenthesised message (PyTorch 1.0 – 2.0).
	KindCUDA1x Kind = "cuda-1x"
	// KindCUDA1xFragment: the parenthesis of a 1.x message without its head.
	KindCUDA1xFragment Kind = "cuda-1x-fragment"
	// KindCUDATruncated: a caching-allocator head cut before any figure.
	KindCUDATruncated Kind = "cuda-truncated"
	// KindCUDA1EB: "Tried to allocate more than 1EB memory".
	KindCUDA1EB Kind = "cuda-1eb"
	// KindCUDAAsync: the cudaMallocAsync backend's message.
	KindCUDAAsync Kind = "cuda-async"
	// KindCUDALegacy: THC-era "cuda runtime error (2)" (PyTorch ≤ 0.4).
	KindCUDALegacy Kind = "cuda-legacy"
	// KindHIP, KindXPU and KindNPU: the caching-allocator message of ROCm,
	// Intel and Ascend builds.
	KindHIP Kind = "hip"
	KindXPU Kind = "xpu"
	KindNPU Kind = "npu"
	// KindMPS: Apple's MPS allocator (also "Invalid buffer size").
	KindMPS Kind = "mps"
	// KindCPU and KindCPULegacy: PyTorch's CPU allocator, and its TH-era
	// and posix_memalign wordings.
	KindCPU       Kind = "cpu"
	KindCPULegacy Kind = "cpu-legacy"
	// KindCUBLAS and KindCUDNN: the library wrappers' allocation failures;
	// KindTFCUBLAS and KindTFCUDNN the same seen from TensorFlow.
	KindCUBLAS   Kind = "cublas"
	KindCUDNN    Kind = "cudnn"
	KindTFCUBLAS Kind = "tf-cublas"
	KindTFCUDNN  Kind = "tf-cudnn"
	// KindNCCL: NCCL's WARN lines or PyTorch's NCCL error wrapper.
	KindNCCL Kind = "nccl"
	// KindXLA: JAX/XLA RESOURCE_EXHAUSTED messages; KindCuPy CuPy's pool.
	KindXLA  Kind = "xla"
	KindCuPy Kind = "cupy"
	// KindTF, KindTFBFC and KindTFDevice: TensorFlow's OOM, its BFC
	// allocator log and its start-up device allocation.
	KindTF       Kind = "tf"
	KindTFBFC    Kind = "tf-bfc"
	KindTFDevice Kind = "tf-device"
	// KindVLLM: vLLM's KV-cache checks; KindVLLMStartup its start-up
	// free-memory check.
	KindVLLM        Kind = "vllm"
	KindVLLMStartup Kind = "vllm-startup"
)

// errorPlainSuffix ends the kind of a plain runtime error.
const errorPlainSuffix = "-error-plain"

// IsErrorPlain reports whether k is a plain "<BACKEND> error: out of
// memory" (no figures).
func (k Kind) IsErrorPlain() bool { return strings.HasSuffix(string(k), errorPlainSuffix) }

// Backend is the device family a message comes from. Its JSON value is the
// string, e.g. "cuda".
type Backend string

// Device families.
const (
	BackendCUDA Backend = "cuda"
	BackendHIP  Backend = "hip"
	BackendXPU  Backend = "xpu"
	BackendNPU  Backend = "npu"
	BackendMPS  Backend = "mps"
	BackendCPU  Backend = "cpu"
	BackendXLA  Backend = "xla"
	BackendTF   Backend = "tf"
	BackendVLLM Backend = "vllm"
)

// ErrorPlain is the kind of a plain runtime error of backend b.
func (b Backend) ErrorPlain() Kind { return Kind(string(b) + errorPlainSuffix) }

// cachingAllocator reports whether b is an accelerator served by PyTorch's
// caching allocator (CUDA and its hipified, Intel and Ascend builds).
func (b Backend) cachingAllocator() bool {
	return b == BackendCUDA || b == BackendHIP || b == BackendXPU || b == BackendNPU
}
