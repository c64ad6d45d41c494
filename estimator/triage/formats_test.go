package triage

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// formatCase is a message written for this test from the wording in
// docs/triage.md#formats (not copied from the examples), with the values expected
// from it computed by hand: bytes = round_half_up(value × 2^10/2^20/2^30).
type formatCase struct {
	name  string
	text  string
	kind  Kind
	cause Cause
	// want maps JSON keys to their expected JSON values.
	want map[string]string
	// absent lists keys that must not appear.
	absent []string
}

var formatCases = []formatCase{
	{
		name: "2.x private pools, fragmentation",
		text: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 1 has a total capacity of 79.19 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 78.05 GiB memory in use. Of the allocated memory 70.40 GiB is allocated by PyTorch, with 6.00 GiB allocated in private pools (e.g., CUDA Graphs), and 7.10 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
		kind: "cuda-2x", cause: CauseFragmentation,
		want: map[string]string{"tried_bytes": "2684354560", "gpu_index": "1", "total_bytes": "85029615043", "free_bytes": "1202590843",
			"process_in_use_bytes": "83805549363", "allocated_bytes": "75591424410", "private_pools_bytes": "6442450944",
			"reserved_unallocated_bytes": "7623566950", "alloc_conf_var": `"PYTORCH_CUDA_ALLOC_CONF"`, "pytorch_version": `"2.4+"`},
		absent: []string{"other_processes", "reserved_total_bytes"},
	},
	{
		name: "2.9 hint, rank prefix, self line between processes",
		text: "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 3 has a total capacity of 39.49 GiB of which 301.88 MiB is free. Process 4242 has 4.00 GiB memory in use. Including non-PyTorch memory, this process has 34.90 GiB memory in use. Process 5151 has 300.00 MiB memory in use. Of the allocated memory 33.10 GiB is allocated by PyTorch, and 700.50 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-alloc-conf)",
		kind: "cuda-2x", cause: CauseOtherProcess,
		want: map[string]string{"tried_bytes": "536870912", "gpu_index": "3", "total_bytes": "42402064630", "free_bytes": "316544123",
			"other_processes":      `[{"pid":4242,"bytes":4294967296},{"pid":5151,"bytes":314572800}]`,
			"process_in_use_bytes": "37473589658", "allocated_bytes": "35540854374", "reserved_unallocated_bytes": "734527488",
			"alloc_conf_var": `"PYTORCH_ALLOC_CONF"`, "pytorch_version": `"2.9+"`},
	},
	{
		name: "2.x container: the only Process line is this process",
		text: "CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.69 GiB of which 512.00 MiB is free. Process 12 has 22.80 GiB memory in use. Of the allocated memory 21.90 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.",
		kind: "cuda-2x", cause: CauseCapacity,
		want: map[string]string{"tried_bytes": "1073741824", "total_bytes": "25436943811", "free_bytes": "536870912",
			"other_processes": `[{"pid":12,"bytes":24481313587}]`, "allocated_bytes": "23514945946", "reserved_unallocated_bytes": "314572800"},
		absent: []string{"process_in_use_bytes"},
	},
	{
		name: "2.3.x truncation after GPU",
		text: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU \n",
		kind: "cuda-2x-truncated", cause: CauseCapacity,
		want:   map[string]string{"tried_bytes": "3221225472"},
		absent: []string{"gpu_index", "total_bytes"},
	},
	{
		name: "2.3.x truncation with an absurd size",
		text: "CUDA out of memory. Tried to allocate 7450.58 GiB. GPU",
		kind: "cuda-2x-truncated", cause: CauseBogusSize,
		want: map[string]string{"tried_bytes": "7999999359058"},
	},
	{
		name: "1 EB guard",
		text: "RuntimeError: CUDA out of memory. Tried to allocate more than 1EB memory.",
		kind: "cuda-1eb", cause: CauseBogusSize,
		absent: []string{"tried_bytes"},
	},
	{
		name: "1.8+ allowed field binds",
		text: "RuntimeError: CUDA out of memory. Tried to allocate 1.50 GiB (GPU 0; 23.70 GiB total capacity; 10.20 GiB already allocated; 11.90 GiB free; 11.85 GiB allowed; 10.60 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
		kind: "cuda-1x", cause: CauseAllowedLimit,
		want: map[string]string{"tried_bytes": "1610612736", "gpu_index": "0", "total_bytes": "25447681229", "already_allocated_bytes": "10952166605",
			"free_bytes": "12777527706", "allowed_bytes": "12723840614", "reserved_total_bytes": "11381663334", "pytorch_version": `"1.10-2.0"`},
		absent: []string{"allocated_bytes", "reserved_unallocated_bytes"},
	},
	{
		name: "1.0-1.3 cached is reserved-but-unallocated",
		text: "RuntimeError: CUDA out of memory. Tried to allocate 1.20 GiB (GPU 2; 10.92 GiB total capacity; 7.00 GiB already allocated; 400.00 MiB free; 2.90 GiB cached)",
		kind: "cuda-1x", cause: CauseFragmentation,
		want: map[string]string{"tried_bytes": "1288490189", "gpu_index": "2", "total_bytes": "11725260718", "already_allocated_bytes": "7516192768",
			"free_bytes": "419430400", "reserved_unallocated_bytes": "3113851290", "pytorch_version": `"1.0-1.3"`},
		absent: []string{"reserved_total_bytes"},
	},
	{
		name: "HIP parenthesised",
		text: "HIP out of memory. Tried to allocate 64.00 MiB (GPU 0; 15.98 GiB total capacity; 15.20 GiB already allocated; 0 bytes free; 15.50 GiB reserved in total by PyTorch)",
		kind: "hip", cause: CauseCapacity,
		want: map[string]string{"tried_bytes": "67108864", "total_bytes": "17158394348", "already_allocated_bytes": "16320875725", "free_bytes": "0", "reserved_total_bytes": "16642998272"},
	},
	{
		name: "XPU 2.8 wording without free",
		text: "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 13.74 GiB. Of the allocated memory 8.02 GiB is allocated by PyTorch, and 512.00 MiB is reserved by PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.",
		// No free figure: the estimate total − reserved = 13.74 − 8.52 =
		// 5.22 GiB (what the XPU allocator itself prints as free when SYCL
		// cannot tell) is ≥ 1.05 × 4 GiB, so the figures do not explain it.
		kind: "xpu", cause: CauseUnknown,
		want:   map[string]string{"tried_bytes": "4294967296", "gpu_index": "0", "total_bytes": "14753212662", "allocated_bytes": "8611409428", "reserved_unallocated_bytes": "536870912"},
		absent: []string{"free_bytes"},
	},
	{
		name: "Ascend NPU with current active",
		text: "RuntimeError: NPU out of memory. Tried to allocate 2.00 MiB (NPU 0; 60.97 GiB total capacity; 59.76 GiB already allocated; 59.76 GiB current active; 7.56 MiB free; 60.50 GiB reserved in total by PyTorch)",
		// 7.56 MiB free ≥ 1.05 × the 2 MiB request: the figures do not explain it.
		kind: "npu", cause: CauseUnknown,
		want: map[string]string{"tried_bytes": "2097152", "gpu_index": "0", "total_bytes": "65466039009", "already_allocated_bytes": "64166811402",
			"current_active_bytes": "64166811402", "free_bytes": "7927235", "reserved_total_bytes": "64961380352"},
	},
	{
		name: "cudaMallocAsync with a memory fraction",
		text: "torch.OutOfMemoryError: Allocation on device 1 would exceed allowed memory. (out of memory)\nCurrently allocated     : 11.50 GiB\nRequested               : 1.00 GiB\nDevice limit            : 23.69 GiB\nFree (according to CUDA): 10.80 GiB\nPyTorch limit (set by user-supplied memory fraction)\n                        : 11.84 GiB\n",
		kind: "cuda-async", cause: CauseAllowedLimit,
		want: map[string]string{"gpu_index": "1", "allocated_bytes": "12348030976", "tried_bytes": "1073741824", "total_bytes": "25436943811",
			"free_bytes": "11596411699", "limit_bytes": "12713103196"},
	},
	{
		name: "cudaMallocAsync collapsed onto one line",
		text: "Allocation on device 0 would exceed allowed memory. (out of memory) Currently allocated : 6.00 GiB Requested : 1.00 GiB Device limit : 23.69 GiB Free (according to CUDA): 512.00 MiB PyTorch limit (set by user-supplied memory fraction) : 17179869184.00 GiB",
		kind: "cuda-async", cause: CauseOtherProcess,
		want: map[string]string{"gpu_index": "0", "allocated_bytes": "6442450944", "tried_bytes": "1073741824", "free_bytes": "536870912", "limit_bytes": "18446744073709551616"},
	},
	{
		name: "MPS 2.8 binary units on the shared pool",
		text: "MPS backend out of memory (MPS allocated: 15.72 GiB, other allocations: 1.25 GiB, max allowed: 18.13 GiB). Tried to allocate 1.50 GiB on shared pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).",
		kind: "mps", cause: CauseCapacity,
		want: map[string]string{"mps_allocated_bytes": "16879221473", "other_allocations_bytes": "1342177280", "max_allowed_bytes": "19466939269",
			"tried_bytes": "1610612736", "pool": `"shared"`, "pytorch_version": `"2.8+"`},
	},
	{
		name: "MPS watermark disabled, GB means GiB",
		text: "RuntimeError: MPS backend out of memory (MPS allocated: 30.00 GB, other allocations: 2.00 GB). Tried to allocate 512.00 MB on private pool.",
		kind: "mps", cause: CauseCapacity,
		want:   map[string]string{"mps_allocated_bytes": "32212254720", "other_allocations_bytes": "2147483648", "tried_bytes": "536870912"},
		absent: []string{"max_allowed_bytes"},
	},
	{
		name: "CPU allocator on Windows",
		text: `RuntimeError: [enforce fail at C:\cb\pytorch_1000000000000\work\c10\core\impl\alloc_cpu.cpp:81] data. DefaultCPUAllocator: not enough memory: you tried to allocate 34359738368 bytes.`,
		kind: "cpu", cause: CauseCPURAM,
		want: map[string]string{"tried_bytes": "34359738368", "start": "0"},
	},
	{
		name: "TH-era CPU allocator",
		text: "RuntimeError: $ Torch: not enough memory: you tried to allocate 72GB. Buy new RAM! at /pytorch/aten/src/TH/THGeneral.cpp:201",
		kind: "cpu-legacy", cause: CauseCPURAM,
		want: map[string]string{"tried_bytes": "77309411328"},
	},
	{
		name: "plain CUDA error with the Search-for suffix",
		text: "torch.AcceleratorError: CUDA error: out of memory\nSearch for `cudaErrorMemoryAllocation' in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information.\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n",
		kind: "cuda-error-plain", cause: CauseUnknown,
		absent: []string{"tried_bytes"},
	},
	{
		name: "HIP plain error",
		text: "RuntimeError: HIP error: out of memory",
		kind: "hip-error-plain", cause: CauseUnknown,
	},
	{
		name: "THC line and its RuntimeError are one message",
		text: "THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCStorage.cu line=66 error=2 : out of memory\nTraceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nRuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/generic/THCStorage.cu:66",
		kind: "cuda-legacy", cause: CauseUnknown,
	},
	{
		name: "TensorFlow cuBLAS handle",
		text: "E tensorflow/stream_executor/cuda/cuda_blas.cc:226] failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED",
		kind: "tf-cublas", cause: CausePreallocation,
	},
	{
		name: "TensorFlow cuDNN handle",
		text: "E tensorflow/stream_executor/cuda/cuda_dnn.cc:329] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR",
		kind: "tf-cudnn", cause: CausePreallocation,
	},
	{
		name: "cuDNN found no algorithm",
		text: "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution",
		kind: "cudnn", cause: CauseUnknown,
	},
	{
		name: "NCCL wrapper whose last error is out of memory",
		text: "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\nncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 'out of memory'",
		kind: "nccl", cause: CauseUnknown,
	},
	{
		name: "NCCL async calloc on device 1",
		text: "node7:1234:1300 [1] NCCL INFO Channel 00/02 : 0 1\nnode7:1234:1300 [1] include/alloc.h:124 NCCL WARN Failed to CUDA calloc async 4 bytes\n",
		kind: "nccl", cause: CauseCapacity,
		want: map[string]string{"gpu_index": "1", "tried_bytes": "4"},
	},
	{
		name: "XLA with BufferAssignment stats",
		text: "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2147483648 bytes.\nBufferAssignment OOM Debugging.\nBufferAssignment stats:\n             parameter allocation:    1.41GiB\n              constant allocation:         0B\n        maybe_live_out allocation:  372.76MiB\n     preallocated temp allocation:   48.5KiB\n",
		kind: "xla", cause: CauseCapacity,
		want: map[string]string{"tried_bytes": "2147483648", "xla_parameter_allocation_bytes": "1513975972", "xla_constant_allocation_bytes": "0",
			"xla_maybe_live_out_allocation_bytes": "390867190", "xla_preallocated_temp_allocation_bytes": "49664"},
	},
	{
		name: "XLA PJRT wording",
		text: "XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 16.00GiB (17179869184B) on device ordinal 2",
		kind: "xla", cause: CauseCapacity,
		want: map[string]string{"tried_bytes": "17179869184", "gpu_index": "2"},
	},
	{
		name: "TensorFlow activation on GPU 1",
		text: "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,256,56,56] and type half on /job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc [Op:Conv2D]",
		kind: "tf", cause: CauseCapacity,
		// 64·256·56·56 = 51380224 elements × 2 B (half).
		want: map[string]string{"tensor_shape": "[64,256,56,56]", "dtype": `"half"`, "tried_bytes": "102760448", "gpu_index": "1"},
	},
	{
		name: "TensorFlow 2 eager, no size",
		text: "tensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to allocate memory [Op:MatMul]",
		kind: "tf", cause: CauseCapacity,
		absent: []string{"tried_bytes"},
	},
	{
		name: "TensorFlow BFC log with rounded size",
		text: "W tensorflow/core/common_runtime/bfc_allocator.cc:457] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB (rounded to 1073741824)requested by op MatMul",
		kind: "tf-bfc", cause: CauseCapacity,
		want: map[string]string{"tried_bytes": "1073741824", "gpu_index": "0"},
	},
	{
		name: "TensorFlow start-up preallocation",
		text: "E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 2.12G (2282521344 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory",
		kind: "tf-device", cause: CausePreallocation,
		want: map[string]string{"tried_bytes": "2282521344"},
	},
	{
		name: "vLLM V1 KV needed vs available",
		text: "ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.25 GiB). Based on the available memory, the estimated maximum model length is 75776. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
		kind: "vllm", cause: CauseKVCacheBudget,
		want: map[string]string{"max_model_len": "131072", "kv_needed_bytes": "17179869184", "kv_available_bytes": "9932111872", "estimated_max_model_len": "75776"},
	},
	{
		name: "vLLM no memory for cache blocks",
		text: "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
		kind: "vllm", cause: CauseKVCacheBudget,
	},
	{
		name: "vLLM start-up with device name",
		text: "ValueError: Free memory on device cuda:0 (30.3/79.19 GiB) on startup is less than desired GPU memory utilization (0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
		kind: "vllm-startup", cause: CauseOtherProcess,
		want:   map[string]string{"device": `"cuda:0"`, "free_bytes": "32534377267", "total_bytes": "85029615043", "gpu_memory_utilization": "0.9", "requested_bytes": "76525579796"},
		absent: []string{"gpu_index"},
	},
	{
		name: "TPU compile out of HBM (G = 2^30)",
		text: "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 20.95G of 15.48G hbm. Exceeded hbm capacity by 5.47G.",
		kind: "xla", cause: CauseCapacity,
		want: map[string]string{"start": "0", "xla_program_bytes": "22494891213", "total_bytes": "16621523436", "xla_exceeded_bytes": "5873367777"},
	},
	{
		name: "NCCL 1.x wrapper: unhandled cuda error",
		text: "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:400, unhandled cuda error, NCCL version 2.7.8",
		kind: "nccl", cause: CauseUnknown,
	},
	{
		name: "NCCL Error 1 wrapper (PyTorch 1.x broadcast)",
		text: "RuntimeError: NCCL Error 1: unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
		kind: "nccl", cause: CauseUnknown,
	},
	{
		name: "cuBLAS not initialized at handle creation",
		text: "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`",
		kind: "cublas", cause: CauseCapacity,
	},
	{
		name: "MPS single buffer too large",
		text: "RuntimeError: Invalid buffer size: 20.00 GB",
		kind: "mps", cause: CauseCapacity,
		want: map[string]string{"tried_bytes": "21474836480"},
	},
	{
		name: "IPEX 4 GB single-allocation limit",
		text: "RuntimeError: Current platform can NOT allocate memory block with size larger than 4GB! Tried to allocate 6.00 GiB (GPU  0; 15.56 GiB total capacity; 2.00 GiB already allocated; 2.50 GiB reserved in total by PyTorch)",
		kind: "xpu", cause: CauseCapacity,
		// 15.56 × 2^30 = 16707422781.44.
		want: map[string]string{"tried_bytes": "6442450944", "gpu_index": "0", "total_bytes": "16707422781", "reserved_total_bytes": "2684354560"},
	},
	{
		name: "markdown quote wrapping a 1.x message",
		text: "> RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 15.98 GiB total capacity; 15.20 GiB already allocated; 0 bytes free; 15.50 GiB reserved\n> in total by PyTorch)",
		kind: "cuda-1x", cause: CauseCapacity,
		want: map[string]string{"tried_bytes": "67108864", "reserved_total_bytes": "16642998272"},
	},
	{
		name: "cudaMallocAsync lines behind torchrun's --tee prefix",
		text: "[default0]:torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n[default0]:Currently allocated     : 6.00 GiB\n[default0]:Requested               : 1.00 GiB\n[default0]:Device limit            : 23.69 GiB\n[default0]:Free (according to CUDA): 512.00 MiB\n[default0]:PyTorch limit (set by user-supplied memory fraction)\n[default0]:                        : 17179869184.00 GiB",
		kind: "cuda-async", cause: CauseOtherProcess,
		want: map[string]string{"allocated_bytes": "6442450944", "tried_bytes": "1073741824", "total_bytes": "25436943811", "free_bytes": "536870912", "limit_bytes": "18446744073709551616"},
	},
	{
		name: "message starting at Tried to allocate",
		text: "Tried to allocate 64.00 MiB (GPU 0; 15.98 GiB total capacity; 15.20 GiB already allocated; 0 bytes free; 15.50 GiB reserved in total by PyTorch)",
		kind: "cuda-1x", cause: CauseCapacity,
		want: map[string]string{"tried_bytes": "67108864", "free_bytes": "0"},
	},
	{
		name: "no-break spaces from a web page and an HTML-escaped >> in the hint",
		text: "CUDA out of memory. Tried to allocate 20.00\u00a0MiB (GPU\u00a00; 4.00\u202fGiB total capacity; 3.27 GiB already allocated; 0 bytes free; 3.38 GiB reserved in total by PyTorch) If reserved memory is &gt;&gt; allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
		kind: "cuda-1x", cause: CauseCapacity,
		// 20 MiB = 20971520; 4.00 GiB = 4294967296; 3.27 GiB = 3511135764.48 → 3511135764.
		want: map[string]string{"tried_bytes": "20971520", "gpu_index": "0", "total_bytes": "4294967296", "already_allocated_bytes": "3511135764",
			"pytorch_version": `"1.10-2.0"`},
	},
	{
		name: "request under one driver page: free must hold whole 2 MiB pages",
		// 1.50 MiB rounds up to one 2 MiB page; 3.50 MiB free < 2 + 2 MiB.
		text: "RuntimeError: CUDA out of memory. Tried to allocate 1.50 MiB (GPU 0; 10.92 GiB total capacity; 9.90 GiB already allocated; 3.50 MiB free; 600.00 MiB cached)",
		kind: "cuda-1x", cause: CauseCapacity,
		want: map[string]string{"tried_bytes": "1572864", "free_bytes": "3670016", "reserved_unallocated_bytes": "629145600"},
	},
	{
		name: "free holds the page-rounded request and one page more",
		// 1.50 MiB → 2 MiB of pages; 4.50 MiB free ≥ 2 + 2 MiB and ≥ 1.05 × 1.50 MiB.
		text: "RuntimeError: CUDA out of memory. Tried to allocate 1.50 MiB (GPU 0; 10.92 GiB total capacity; 9.90 GiB already allocated; 4.50 MiB free; 600.00 MiB cached)",
		kind: "cuda-1x", cause: CauseUnknown,
		want: map[string]string{"free_bytes": "4718592"},
	},
	{
		name: "TensorFlow tensor on the CPU device is host RAM",
		text: "ResourceExhaustedError: OOM when allocating tensor with shape[1024,1024,64] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator mklcpu",
		kind: "tf", cause: CauseCPURAM,
		// 1024·1024·64·4 B.
		want:   map[string]string{"tried_bytes": "268435456", "allocator": `"mklcpu"`},
		absent: []string{"gpu_index"},
	},
	{
		name: "terminal colour codes, with and without their ESC byte",
		text: "\x1b[0;31mOutOfMemoryError\x1b[0m: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 7.79 GiB of which 15.25 MiB is free. Including non-PyTorch memory, this process has 7.76 GiB memory in use. Of the allocated memory 7.50 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.\n[1;36m(VllmWorker rank=0 pid=7)[0;0m INFO next line",
		kind: "cuda-2x", cause: CauseCapacity,
		// 7.79 GiB = 8364448808.96 → 8364448809; 15.25 MiB = 15990784; the message
		// starts at OutOfMemoryError (after the 7-byte colour code) and ends at
		// "unallocated." (byte 328).
		want: map[string]string{"tried_bytes": "20971520", "total_bytes": "8364448809", "free_bytes": "15990784",
			"start": "7", "end": "328"},
	},
	{
		name: "XPU without free, reserved near the total",
		// 13.74 − (10.10 + 3.47) = 0.17 GiB estimated free < 4 GiB; 3.47 GiB
		// slack < 4 GiB: the card is full.
		text: "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 13.74 GiB. Of the allocated memory 10.10 GiB is allocated by PyTorch, and 3.47 GiB is reserved by PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.",
		kind: "xpu", cause: CauseCapacity,
		absent: []string{"free_bytes"},
	},
	{
		name: "CUDA driver API out of memory (expandable segments map pages with cuMem*)",
		text: "RuntimeError: CUDA driver error: out of memory",
		kind: "cuda-error-plain", cause: CauseUnknown,
		want:   map[string]string{"variant": `"CUDA driver API (cuMem*, e.g. expandable segments)"`, "start": "0", "end": "46"},
		absent: []string{"tried_bytes"},
	},
	{
		name: "container: the only Process line is this process, and most of the card is held elsewhere",
		// Process 7 (20.50 GiB) ≈ reserved 19.00 + 0.20 GiB + 1.30 GiB of context: this
		// process. 79.15 − 0.50 − 20.50 = 58.15 GiB is neither free nor ours,
		// ≥ the 2 GiB request and ≥ 30 % of the card: another process (inferred).
		text: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 512.00 MiB is free. Process 7 has 20.50 GiB memory in use. Of the allocated memory 19.00 GiB is allocated by PyTorch, and 204.80 MiB is reserved by PyTorch but unallocated.",
		kind: "cuda-2x", cause: CauseOtherProcess,
		want: map[string]string{"tried_bytes": "2147483648", "other_processes": `[{"pid":7,"bytes":22011707392}]`},
	},
	{
		name: "MPS buffer above maxBufferLength",
		text: "RuntimeError: Invalid buffer size: 36.00 GB",
		kind: "mps", cause: CauseCapacity,
		want: map[string]string{"tried_bytes": "38654705664",
			"rule": `"a single Metal buffer larger than the device's maxBufferLength cannot be created"`},
	},
}

func TestFormats(t *testing.T) {
	for _, tc := range formatCases {
		t.Run(tc.name, func(t *testing.T) {
			res := Triage(tc.text, Options{})
			if len(res.Findings) != 1 {
				for _, f := range res.Findings {
					t.Logf("found %s: %q", f.Kind, f.Text)
				}
				t.Fatalf("found %d messages, want 1", len(res.Findings))
			}
			f := res.Findings[0]
			if f.Kind != tc.kind || f.Cause != tc.cause {
				t.Errorf("kind, cause = %s, %s; want %s, %s (why: %s)", f.Kind, f.Cause, tc.kind, tc.cause, f.Why)
			}
			raw, _ := json.Marshal(f)
			got := decodeNumbers(t, raw).(map[string]any)
			for k, w := range tc.want {
				if !reflect.DeepEqual(got[k], decodeNumbers(t, []byte(w))) {
					t.Errorf("%s = %v, want %s", k, got[k], w)
				}
			}
			for _, k := range tc.absent {
				if v, ok := got[k]; ok {
					t.Errorf("%s = %v, want absent", k, v)
				}
			}
			for _, fd := range f.Fields {
				if tc.text[fd.Start:fd.End] != fd.Phrase {
					t.Errorf("field %s: phrase %q is not the input at [%d,%d)", fd.Key, fd.Phrase, fd.Start, fd.End)
				}
			}
		})
	}
}

func TestNotOOM(t *testing.T) {
	for _, text := range []string{
		"",
		"I keep getting CUDA out of memory errors when I train with batch 64, any idea?",
		"W bfc_allocator.cc:239] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.13GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.",
		"RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:32, unhandled system error, NCCL version 2.4.8",
		"Epoch 1/10 loss=0.231 memory=12.3GiB allocated=10.1GiB",
		"    raise ValueError(\"No available memory for the cache blocks. \"",
	} {
		if res := Triage(text, Options{}); len(res.Findings) != 0 {
			t.Errorf("Triage(%q) found %d messages (first %s: %q), want none", text, len(res.Findings), res.Findings[0].Kind, res.Findings[0].Text)
		}
	}
}

func TestSeveralMessages(t *testing.T) {
	msgA := "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity; 3.40 GiB already allocated; 4.00 MiB free; 3.45 GiB reserved in total by PyTorch)"
	msgB := "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
	text := "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n" + msgA +
		"\n\nDuring handling of the above exception, another exception occurred:\n\n" + msgB + "\n" + msgA + "\n"
	res := Triage(text, Options{})
	var kinds []string
	for _, f := range res.Findings {
		kinds = append(kinds, string(f.Kind))
	}
	if strings.Join(kinds, ",") != "cuda-1x,vllm,cuda-1x" {
		t.Fatalf("kinds = %v, want cuda-1x,vllm,cuda-1x", kinds)
	}
	if res.Findings[0].Text != msgA || res.Findings[1].Text != msgB {
		t.Errorf("texts = %q / %q", res.Findings[0].Text, res.Findings[1].Text)
	}
	if d := res.Findings[2].DuplicateOf; d == nil || *d != 0 {
		t.Errorf("third message DuplicateOf = %v, want 0", d)
	}
	if res.Findings[0].DuplicateOf != nil {
		t.Errorf("first message marked duplicate")
	}
}
