package triage

// Finding is one out-of-memory message found in the pasted text: where it
// is, every number it printed (absent numbers are nil), the cause with the
// rule and numbers that decided it, and the fixes for that cause.
//
// The JSON keys of the numbers follow the corpus's `expect` records:
// tried_bytes, gpu_index, total_bytes, free_bytes, process_in_use_bytes,
// other_processes, allocated_bytes, reserved_unallocated_bytes,
// reserved_total_bytes, already_allocated_bytes and the backend-specific keys.
type Finding struct {
	// Kind names the message format, e.g. "cuda-2x", "cuda-1x", "mps", "xla".
	Kind Kind `json:"kind"`
	// Variant is the version fingerprint of the wording, when it has one.
	Variant string `json:"variant,omitempty"`
	// PyTorchVersion is the PyTorch version range the wording implies.
	PyTorchVersion string `json:"pytorch_version,omitempty"`
	// Backend is the device family: cuda, hip, xpu, npu, mps, cpu, xla, tf, vllm.
	Backend Backend `json:"backend"`
	// Start and End are byte offsets of the message in the input.
	Start int `json:"start"`
	End   int `json:"end"`
	// Text is the message itself, input[Start:End].
	Text string `json:"text"`
	// DuplicateOf is the index of an earlier finding with the same text.
	DuplicateOf *int `json:"duplicate_of,omitempty"`

	TriedBytes               *Bytes    `json:"tried_bytes,omitempty"`
	GPUIndex                 *int      `json:"gpu_index,omitempty"`
	TotalBytes               *Bytes    `json:"total_bytes,omitempty"`
	FreeBytes                *Bytes    `json:"free_bytes,omitempty"`
	ProcessInUseBytes        *Bytes    `json:"process_in_use_bytes,omitempty"`
	OtherProcesses           []Process `json:"other_processes,omitempty"`
	AllocatedBytes           *Bytes    `json:"allocated_bytes,omitempty"`
	ReservedUnallocatedBytes *Bytes    `json:"reserved_unallocated_bytes,omitempty"`
	ReservedTotalBytes       *Bytes    `json:"reserved_total_bytes,omitempty"`
	AlreadyAllocatedBytes    *Bytes    `json:"already_allocated_bytes,omitempty"`
	CurrentActiveBytes       *Bytes    `json:"current_active_bytes,omitempty"`
	AllowedBytes             *Bytes    `json:"allowed_bytes,omitempty"`
	PrivatePoolsBytes        *Bytes    `json:"private_pools_bytes,omitempty"`
	// LimitBytes is the cudaMallocAsync "PyTorch limit" (2^64 when unset).
	LimitBytes *Bytes `json:"limit_bytes,omitempty"`

	// MPS (Apple) fields.
	MPSAllocatedBytes     *Bytes `json:"mps_allocated_bytes,omitempty"`
	OtherAllocationsBytes *Bytes `json:"other_allocations_bytes,omitempty"`
	MaxAllowedBytes       *Bytes `json:"max_allowed_bytes,omitempty"`
	Pool                  string `json:"pool,omitempty"`

	// XLA BufferAssignment stats.
	XLAParameterBytes            *Bytes `json:"xla_parameter_allocation_bytes,omitempty"`
	XLAConstantBytes             *Bytes `json:"xla_constant_allocation_bytes,omitempty"`
	XLAMaybeLiveOutBytes         *Bytes `json:"xla_maybe_live_out_allocation_bytes,omitempty"`
	XLAPreallocatedTempBytes     *Bytes `json:"xla_preallocated_temp_allocation_bytes,omitempty"`
	XLAPreallocatedTempFragBytes *Bytes `json:"xla_preallocated_temp_fragmentation_bytes,omitempty"`
	XLATotalAllocationBytes      *Bytes `json:"xla_total_allocation_bytes,omitempty"`
	XLATotalFragmentationBytes   *Bytes `json:"xla_total_fragmentation_bytes,omitempty"`

	// XLA TPU compile figures.
	XLAProgramBytes  *Bytes `json:"xla_program_bytes,omitempty"`
	XLAExceededBytes *Bytes `json:"xla_exceeded_bytes,omitempty"`

	// TensorFlow fields.
	TensorShape []int64 `json:"tensor_shape,omitempty"`
	DType       string  `json:"dtype,omitempty"`
	Allocator   string  `json:"allocator,omitempty"`

	// vLLM fields.
	MaxModelLen          *int64   `json:"max_model_len,omitempty"`
	KVCacheTokens        *int64   `json:"kv_cache_tokens,omitempty"`
	KVNeededBytes        *Bytes   `json:"kv_needed_bytes,omitempty"`
	KVAvailableBytes     *Bytes   `json:"kv_available_bytes,omitempty"`
	EstimatedMaxModelLen *int64   `json:"estimated_max_model_len,omitempty"`
	GPUMemoryUtilization *float64 `json:"gpu_memory_utilization,omitempty"`
	RequestedBytes       *Bytes   `json:"requested_bytes,omitempty"`

	// Device is the device string a message names ("cuda:0", "/device:GPU:0").
	Device string `json:"device,omitempty"`
	// ErrorCode is the errno or CUDA error code the message prints.
	ErrorCode *int `json:"error_code,omitempty"`
	// AllocConfVar is the allocator-config variable the message's hint names
	// (PYTORCH_CUDA_ALLOC_CONF, PYTORCH_ALLOC_CONF, PYTORCH_HIP_ALLOC_CONF).
	AllocConfVar string `json:"alloc_conf_var,omitempty"`

	// Cause is the likely cause: fragmentation, capacity, other-process,
	// non-pytorch, last-straw, cpu-ram, kv-cache-budget, bogus-size,
	// allowed-limit, preallocation, leak (snapshots only) or unknown.
	Cause Cause `json:"cause"`
	// Why explains the cause with the numbers that decided it.
	Why string `json:"why"`
	// Rule is the rule that fired, stated generally.
	Rule string `json:"rule"`
	// Evidence lists the numbers the rule compared.
	Evidence []Number `json:"evidence,omitempty"`
	// Derived lists quantities computed from the printed numbers, each with
	// its formula (reserved total, non-PyTorch memory in the process, ...).
	Derived []Number `json:"derived,omitempty"`
	// Fixes are the fixes for the cause (steered by Options.When), cheapest
	// first.
	Fixes []Suggestion `json:"fixes"`
	// Estimator is what the message tells the /estimate page (GPU and
	// headroom), when it prints a capacity.
	Estimator *EstimatorLink `json:"estimator,omitempty"`
	// TensorMatches names the tensors of Options.Setup whose size matches
	// tried_bytes, when a setup was given.
	TensorMatches *Matching `json:"tensor_matches,omitempty"`
	// Fields lists every number read, in message order, with the phrase it
	// came from; a page shows these as the table of numbers.
	Fields []Field `json:"fields"`

	// tfDevice is the TensorFlow device a tensor was to be placed on
	// ("/job:localhost/replica:0/task:0/device:CPU:0"), kept for the cause
	// rules; the JSON device key stays for devices the corpus records.
	tfDevice string
	// settings are what the paste's vLLM log states around a vLLM
	// message, by key (servingParams).
	settings map[string]setting
}

// Process is one "Process N has X memory in use" sentence.
type Process struct {
	PID   int64 `json:"pid"`
	Bytes Bytes `json:"bytes"`
}

// Field is one number read from the message, with the phrase it came from.
type Field struct {
	// Key is the JSON key of the number, e.g. "free_bytes".
	Key string `json:"key"`
	// Label is a short human name, e.g. "Free on the device".
	Label string `json:"label"`
	// Printed is the number as the message printed it, e.g. "21.56 MiB".
	Printed string `json:"printed"`
	// Bytes is the printed size in bytes, for sizes.
	Bytes *Bytes `json:"bytes,omitempty"`
	// Value is the number, for counts that are not sizes (pids, tokens,
	// utilization, device index).
	Value *float64 `json:"value,omitempty"`
	// Rule says how Printed became Bytes.
	Rule string `json:"rule,omitempty"`
	// Phrase is the text of the message the number came from.
	Phrase string `json:"phrase"`
	// Start and End are byte offsets of Phrase in the input.
	Start int `json:"start"`
	End   int `json:"end"`
}

// Number is a named quantity used as evidence or derived from the message,
// with the formula that produced it.
type Number struct {
	Name string `json:"name"`
	// Bytes is the value in bytes (may be negative for derived gaps).
	Bytes int64 `json:"bytes"`
	// Formula states how the value was obtained, with its inputs.
	Formula string `json:"formula"`
}

// Cause names why an allocation failed.
type Cause string

// The causes Triage assigns. CauseLastStraw is kept for callers that name
// it, but the rules of docs/triage.md#causes file a tiny request on a card whose
// holders the message does not name under capacity (its why says "last
// straw", and its fixes are the last-straw ones).
const (
	CauseFragmentation Cause = "fragmentation"
	CauseCapacity      Cause = "capacity"
	CauseOtherProcess  Cause = "other-process"
	CauseNonPyTorch    Cause = "non-pytorch"
	CauseLastStraw     Cause = "last-straw"
	CauseCPURAM        Cause = "cpu-ram"
	CauseKVCacheBudget Cause = "kv-cache-budget"
	CauseBogusSize     Cause = "bogus-size"
	CauseAllowedLimit  Cause = "allowed-limit"
	CausePreallocation Cause = "preallocation"
	CauseUnknown       Cause = "unknown"
	// CauseLeak is memory that grows step after step because something
	// keeps every step's tensors alive (a retained graph or stored
	// outputs). A message alone cannot show it; snapshot analysis finds it
	// in the trace.
	CauseLeak Cause = "leak"
)
