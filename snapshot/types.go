package snapshot

// Snapshot is one decoded torch.cuda.memory._snapshot() dictionary.
type Snapshot struct {
	// Protocol is the pickle protocol of the file (0-5); 0 when the file has
	// no PROTO opcode (protocol 0 or 1).
	Protocol int
	// Legacy is true when the top level was a bare list of segments
	// (snapshots from before torch 1.13/2.0 had no trace); Segments then holds
	// that list and DeviceTraces is empty.
	Legacy bool
	// Segments is the `segments` list: one entry per contiguous cudaMalloc'd
	// or mapped range, across all devices (filter by Segment.Device), sorted by
	// address within a device. Present in every version.
	Segments []Segment
	// DeviceTraces is `device_traces` (torch 2.0+), indexed by device ordinal:
	// each device's trace entries in chronological order, oldest first. When
	// the ring buffer (max_entries) wrapped, the oldest events are missing.
	DeviceTraces []Trace
	// AllocatorSettings is `allocator_settings` (torch ~2.3+); nil if absent.
	AllocatorSettings *AllocatorSettings
	// ExternalAnnotations is `external_annotations` (torch ~2.5+):
	// record_function START/END markers with timestamps.
	ExternalAnnotations []Annotation
	// HostSegments and HostTraces are `host_segments`/`host_traces` (2026
	// nightlies, pinned host memory, only with record_pinned_host_memory).
	HostSegments []Segment
	// HostTraces is `host_traces`, shaped like DeviceTraces.
	HostTraces []Trace
	// Frames is the frame table: every distinct frame once. FrameID indexes it.
	Frames []Frame
	// Stacks is the stack table: every distinct frame list once, innermost
	// frame first as in the file. StackID indexes it; EmptyStack is the
	// empty list.
	Stacks Stacks
	// Extra holds top-level keys this package does not know, decoded
	// generically, in file order.
	Extra Dict

	// split is the input bytes of the part the decoder took (SplitBytes).
	split int64
}

// SplitBytes returns the number of input bytes a second decoder decoded
// (the part Decode took, through Options.Split or on its own; see
// DecodePart): 0 when one decoder decoded the whole file, also when a part
// was offered and refused or when the decoder took one and then decoded
// the file again alone.
func (s *Snapshot) SplitBytes() int64 { return s.split }

// FrameID indexes Snapshot.Frames.
type FrameID int32

// StackID indexes Snapshot.Stacks. NoStack means the `frames` key was absent.
type StackID int32

const (
	// NoStack marks a missing `frames` key: torch 2.0 files, trace entries
	// recorded with context=None/"state", blocks with legacy `history`.
	NoStack StackID = -1
	// EmptyStack is the ID of the empty frame list (`frames: []`): the key was
	// present but nothing was recorded.
	EmptyStack StackID = 0
)

// Stack is one frame list, innermost (most recent call) first. The first
// frames of C++ stacks are the unwinder itself; docs/snapshot.md#stacks-shown
// lists the frames viewers hide.
type Stack []FrameID

// Frame is one stack frame dict {'name', 'filename', 'line'}. C++ frames that
// could not be symbolized have Filename "??" and Line 0.
type Frame struct {
	// Name is the function name (Python function or demangled C++ symbol).
	Name string
	// Filename is the source file ("??" for unsymbolized C++ frames).
	Filename string
	// Line is the 1-based line number (0 when unknown).
	Line int64
	// FXNodeOp, FXNodeName, FXNodeTarget and FXOriginalTrace are set on frames
	// from FX-generated code when the snapshot was taken with
	// augment_with_fx_traces=True (2025/26); "" otherwise.
	FXNodeOp string
	// FXNodeName is the `fx_node_name` key; see FXNodeOp.
	FXNodeName string
	// FXNodeTarget is the `fx_node_target` key; see FXNodeOp.
	FXNodeTarget string
	// FXOriginalTrace is the `fx_original_trace` key; see FXNodeOp.
	FXOriginalTrace string
}

// Frame returns the frame with the given ID.
func (s *Snapshot) Frame(id FrameID) Frame { return s.Frames[id] }

// Stack returns the frame list with the given ID; nil for NoStack or an ID
// outside the table. A lazy stack (see Stacks) is read again from the
// decoder's Source, which can fail.
func (s *Snapshot) Stack(id StackID) (Stack, error) { return s.Stacks.Frames(id) }

// Segment is one entry of `segments`: a contiguous reserved range.
type Segment struct {
	// Device is the CUDA device ordinal (`device`).
	Device int
	// Address is the base virtual address (`address`), always present.
	Address uint64
	// TotalSize is `total_size`: reserved bytes, the sum of the blocks' Size.
	TotalSize int64
	// AllocatedSize is `allocated_size`: the sum of Size of active_allocated
	// blocks.
	AllocatedSize int64
	// ActiveSize is `active_size`: the sum of Size of active blocks
	// (allocated or pending free).
	ActiveSize int64
	// RequestedSize is `requested_size` (torch 2.0+): the sum of
	// RequestedSize of active blocks.
	RequestedSize int64
	// Stream is the cudaStream_t pointer value (`stream`); 0 is the legacy
	// default stream.
	Stream uint64
	// SegmentType is `segment_type`: "small" (small pool, blocks <= 1 MiB,
	// 2 MiB segments) or "large".
	SegmentType string
	// PoolID is `segment_pool_id` (torch ~2.1+): the owning memory pool,
	// (0,0) for the default pool. HasPoolID tells whether the key was present.
	PoolID PoolID
	// HasPoolID is true when `segment_pool_id` was present.
	HasPoolID bool
	// IsExpandable is `is_expandable` (torch ~2.1+): the segment is one mapped
	// run of an expandable segment (expandable_segments:True).
	IsExpandable bool
	// Frames is the stack when the segment was cudaMalloc'd (`frames`,
	// torch 2.1+); NoStack if the key was absent.
	Frames StackID
	// Blocks are the blocks in address order; they tile the segment.
	Blocks []Block
	// Extra holds keys this package does not know, in file order.
	Extra Dict
}

// PoolID is a memory pool id, a 2-tuple. (0,0) is the default pool; anything
// else is a private pool (CUDA graphs, MemPool).
type PoolID [2]int64

// BlockState is a block's `state`.
type BlockState string

// Block states written by torch. (The memory.py docstring's
// "active_awaiting_free" never occurs.)
const (
	// StateActiveAllocated is a live tensor/storage.
	StateActiveAllocated BlockState = "active_allocated"
	// StateActivePendingFree is freed by the user but still in use on another
	// stream (record_stream), waiting on CUDA events.
	StateActivePendingFree BlockState = "active_pending_free"
	// StateInactive is free, cached memory.
	StateInactive BlockState = "inactive"
)

// Block is one entry of a segment's `blocks`.
type Block struct {
	// Address is the block start (`address`, torch 2.1+). In torch 2.0 files
	// the key is absent and the decoder computes it as the segment address
	// plus the sizes of the preceding blocks; AddressComputed is then true.
	Address uint64
	// AddressComputed is true when Address was computed, not read.
	AddressComputed bool
	// Size is `size`: bytes reserved for the block after rounding.
	Size int64
	// RequestedSize is `requested_size`: bytes the caller asked for. Stale on
	// inactive blocks (value from the block's last use).
	RequestedSize int64
	// State is `state`.
	State BlockState
	// Frames is the allocation stack (`frames`, torch 2.1+; empty when not
	// recorded); NoStack if the key was absent (torch 2.0, see History).
	Frames StackID
	// History is the torch 2.0 (and late-2022) `history` list; nil otherwise.
	History []HistoryEntry
	// Extra holds keys this package does not know, in file order.
	Extra Dict
}

// AllocStack returns the block's allocation stack: Frames, or for torch 2.0
// blocks without `frames` the frames of the first History entry (what
// MemoryViz shows); NoStack if neither exists.
func (b *Block) AllocStack() StackID {
	if b.Frames != NoStack {
		return b.Frames
	}
	if len(b.History) > 0 {
		return b.History[0].Frames
	}
	return NoStack
}

// HistoryEntry is one entry of a torch 2.0 block's `history` list.
type HistoryEntry struct {
	// Addr is `addr`.
	Addr uint64
	// RealSize is `real_size`: the requested bytes.
	RealSize int64
	// Frames is `frames` (Python frames); NoStack if absent.
	Frames StackID
	// CPPFrames is `cpp_frames`: C++ frames as one pre-formatted string (late
	// 2022 builds); "" when absent.
	CPPFrames string
}

// Action is a trace entry's `action`. Unknown actions are kept verbatim.
type Action string

// Actions written by torch (docs/snapshot.md#trace-entries-and-actions).
const (
	// ActionAlloc: a block was handed to the caller; Size is the requested size.
	ActionAlloc Action = "alloc"
	// ActionFreeRequested: the caller freed the block.
	ActionFreeRequested Action = "free_requested"
	// ActionFreeCompleted: the block really went back to the free pool.
	ActionFreeCompleted Action = "free_completed"
	// ActionSegmentAlloc: cudaMalloc of a new segment; Size is segment bytes.
	ActionSegmentAlloc Action = "segment_alloc"
	// ActionSegmentFree: cudaFree of a whole segment.
	ActionSegmentFree Action = "segment_free"
	// ActionSegmentMap: expandable segments mapped pages at Addr.
	ActionSegmentMap Action = "segment_map"
	// ActionSegmentUnmap: expandable segments unmapped pages at Addr.
	ActionSegmentUnmap Action = "segment_unmap"
	// ActionSnapshot: _snapshot() was called; Size is total active bytes.
	ActionSnapshot Action = "snapshot"
	// ActionOOM: the allocator raised OutOfMemoryError; Size is the requested
	// bytes and DeviceFree the free bytes cudaMemGetInfo reported.
	ActionOOM Action = "oom"
	// ActionUserDefined: record_function markers in mid-2024 nightlies.
	ActionUserDefined Action = "user_defined"
	// ActionAnnotate: 2026 _annotate_memory on a live allocation.
	ActionAnnotate Action = "annotate"
)

// TraceEntry is one entry of device_traces[d] (or host_traces[d]), whole;
// a Trace stores its entries by column and assembles one with Entry.
type TraceEntry struct {
	// Action is `action`.
	Action Action
	// Addr is `addr`: block address (alloc/free), segment or range address
	// (segment_*), 0 for snapshot; absent (0) for oom.
	Addr uint64
	// Size is `size`: requested bytes for alloc/free_*, segment or range
	// bytes for segment_*, total active bytes for snapshot.
	Size int64
	// Stream is the `stream` pointer value; 0 is the default stream.
	Stream uint64
	// TimeUS is `time_us` (torch ~2.2+): Unix-epoch microseconds; 0 if absent.
	TimeUS int64
	// DeviceFree is `device_free` (oom entries only): free device bytes.
	DeviceFree int64
	// Frames is `frames`; NoStack when the key is absent (no context
	// recorded: torch 2.0, context=None/"state").
	Frames StackID
	// CompileContext is `compile_context` (torch ~2.8+): "" unless
	// compile_context=True was recorded.
	CompileContext string
	// UserMetadata is `user_metadata` (torch ~2.10+), set via
	// torch.cuda.memory._set_memory_metadata; "" otherwise.
	UserMetadata string
	// Extra holds the rare and future keys; nil for nearly every entry.
	Extra *EntryExtra
}

// EntryExtra holds trace-entry keys that are rare or newer than torch 2.11.
type EntryExtra struct {
	// ForwardFrames is `forward_frames` (2025/26 main): the forward-pass
	// traceback of the autograd node, for allocations made in backward.
	ForwardFrames []string
	// PoolID is `pool_id` (2026): the entry's mempool; HasPoolID says whether
	// it was present.
	PoolID PoolID
	// HasPoolID is true when `pool_id` was present.
	HasPoolID bool
	// InternalMetadata is `internal_metadata` (2026).
	InternalMetadata string
	// Category is `category`, only in snapshots synthesized by
	// torch.cuda._memory_viz.profile_plot from profiler data.
	Category string
	// Other holds keys this package does not know, in file order.
	Other Dict
}

// AllocatorSettings is `allocator_settings` (torch ~2.3+): the caching
// allocator configuration. Known keys are typed; Raw keeps every key.
type AllocatorSettings struct {
	// PyTorchCUDAAllocConf is the PYTORCH_CUDA_ALLOC_CONF string.
	PyTorchCUDAAllocConf string
	// MaxSplitSize is `max_split_size` in bytes; -1 means unlimited.
	MaxSplitSize int64
	// GarbageCollectionThreshold is `garbage_collection_threshold`.
	GarbageCollectionThreshold float64
	// ExpandableSegments is `expandable_segments`.
	ExpandableSegments bool
	// PinnedNumRegisterThreads is `pinned_num_register_threads`.
	PinnedNumRegisterThreads int64
	// ReleaseLockOnCUDAMalloc is `release_lock_on_cudamalloc`.
	ReleaseLockOnCUDAMalloc bool
	// PinnedUseCUDAHostRegister is `pinned_use_cuda_host_register`.
	PinnedUseCUDAHostRegister bool
	// GraphCaptureRecordStreamReuse is `graph_capture_record_stream_reuse`
	// (2025/26).
	GraphCaptureRecordStreamReuse bool
	// RoundupPower2Divisions is `roundup_power2_divisions`: size bucket
	// ("1", "2", ... "32768") to number of divisions, in file order.
	RoundupPower2Divisions Dict
	// Raw is the whole dict as decoded, in file order.
	Raw Dict
}

// Annotation is one `external_annotations` entry (torch ~2.5+): a
// record_function START or END marker.
type Annotation struct {
	// Stage is `stage`: "START" or "END".
	Stage string
	// Name is the record_function name, e.g. "Optimizer.step#AdamW.step".
	Name string
	// Device is `device`.
	Device int
	// TimeUS is `time_us`, comparable with TraceEntry.TimeUS.
	TimeUS int64
	// Extra holds other keys, in file order.
	Extra Dict
}

// Value is a pickle value decoded generically, for parts of a snapshot with
// no fixed schema. Its dynamic type is one of: nil (None), bool, int64,
// *big.Int (integers outside int64), float64, string, []byte, List, Tuple,
// Dict.
type Value = any

// List is a decoded Python list.
type List []Value

// Tuple is a decoded Python tuple.
type Tuple []Value

// Dict is a decoded Python dict, in insertion order. Setting an existing key
// replaces its value in place, as in Python.
type Dict []DictItem

// DictItem is one key/value pair of a Dict.
type DictItem struct {
	// Key is the dict key (usually a string).
	Key Value
	// Value is the value stored under Key.
	Value Value
}

// Get returns the value stored under the string key k.
func (d Dict) Get(k string) (Value, bool) {
	for _, it := range d {
		if s, ok := it.Key.(string); ok && s == k {
			return it.Value, true
		}
	}
	return nil, false
}
