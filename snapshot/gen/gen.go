// Package gen writes realistic synthetic CUDA memory snapshots together with
// the truth an analysis must find in them.
//
// A snapshot is produced by simulating PyTorch's caching allocator (512-byte
// rounding, 2 MiB small-pool segments, 20 MiB large buffers, best-fit block
// reuse, splitting and merging, expandable segments that map and unmap
// 2 MiB pages, release of cached segments before an OOM) under a
// transformer training loop: parameters, then per step zero_grad (frees
// gradients), forward (activations kept for backward, temporaries freed at
// once), loss, backward in the autograd thread (gradients via
// AccumulateGrad, temporaries, activations freed layer by layer) and an
// AdamW step (optimizer state created on the first step, temporaries).
// Every allocation carries a stack that follows the rules of
// docs/snapshot.md#phases-from-stacks (module.py forward frames, torch/optim frames, autograd engine
// C++ frames), and its category is known.
//
// Usage:
//
//	var buf bytes.Buffer
//	truth, err := gen.Generate(&buf, gen.Scenario("ring_wrap"))
//	s, err := snapshot.DecodeBytes(buf.Bytes())
//	// compare the analysis of s with truth.Devices[0]
package gen

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"

	"oomscope/snapshot"
)

// Options describes the program and recording to simulate. The zero value
// is a small 2-step training run, recorded in full, pickled with protocol 4.
type Options struct {
	// Seed makes the run reproducible (timing jitter, side-stream choices).
	Seed uint64
	// Protocol is the pickle protocol 1-5; 0 means 4 (Python 3.8-3.13).
	Protocol int
	// Format selects the torch version's keys (snapshot.Format26 default).
	Format snapshot.Format
	// Layers is the number of transformer blocks (default 4).
	Layers int
	// Hidden is the model width (default 256); parameters are fp32.
	Hidden int
	// Tokens is batch*sequence length per step (default 2048).
	Tokens int
	// Steps is the number of training steps (default 2).
	Steps int
	// Devices is the number of devices that run the loop (default 1); device
	// d gets its own allocator, trace and segments.
	Devices int
	// TwoStreams adds a side stream that prefetches each step's input batch
	// and frees it with a delayed free_completed (record_stream).
	TwoStreams bool
	// Expandable uses expandable segments for the large pool: segment_map /
	// segment_unmap instead of segment_alloc / segment_free, and
	// allocator_settings.expandable_segments = True.
	Expandable bool
	// OOM caps the device so that the last step's forward runs out of
	// memory: the trace ends with cached segments released and an oom
	// entry, and the snapshot shows the state at that moment.
	OOM bool
	// PrivatePool allocates layer 0's forward activations from a private
	// memory pool (segment_pool_id (1, 0)), as a CUDA-graph-captured
	// region does; everything else uses the default pool (0, 0).
	PrivatePool bool
	// PreTraceParams creates the parameters before recording starts: no
	// trace entries, blocks with empty frames (ghost allocations).
	PreTraceParams bool
	// MaxEntries is the ring-buffer size (max_entries): only the newest
	// MaxEntries trace entries per device are kept. 0 keeps all.
	MaxEntries int
	// TargetBytes, when > 0, replaces Steps by however many steps make the
	// pickle about this large (within a few per cent).
	TargetBytes int64
	// SharedStackLists writes each distinct frame list once and refers to it
	// by memo (smaller files); by default every entry gets its own list
	// object, as torch writes most of them.
	SharedStackLists bool
	// Loop varies the training loop (accumulation, evaluation, leaks,
	// stacks recorded); see Loop.
	Loop Loop
	// CardBytes, with OOM, is the device's capacity: the last step fails
	// against the whole card, so the oom entry's device_free plus the
	// reserved memory add up to it. 0 caps the device at the peak reserved
	// before the last step (as if others held the rest of the card).
	CardBytes int64
}

// Category names used in Truth, as the analysis buckets them.
const (
	Parameter      = "parameter"
	Gradient       = "gradient"
	OptimizerState = "optimizer_state"
	Activation     = "activation"
	Temporary      = "temporary"
	Other          = "other"
)

// Truth is what the generated snapshot contains, computed by the simulator
// independently of any decoder.
type Truth struct {
	// Devices holds one entry per simulated device, by ordinal.
	Devices []DeviceTruth
	// Bytes is the size of the pickle written.
	Bytes int64
	// Steps is the number of training steps simulated.
	Steps int
}

// DeviceTruth is the truth for one device. "Live" means from alloc to
// free_completed (a pending free is live); allocated bytes are requested
// bytes, not rounded block sizes. Everything refers to the trace as kept in
// the file (after the ring buffer dropped old entries); the state at its
// start includes allocations made earlier (before recording or dropped from
// the ring), which an analysis can rebuild from unmatched frees and
// active blocks.
type DeviceTruth struct {
	// Device is the ordinal.
	Device int
	// Entries is len(device_traces[Device]).
	Entries int
	// Actions counts entries per action.
	Actions map[snapshot.Action]int
	// DroppedEntries is how many older entries the ring buffer dropped.
	DroppedEntries int
	// InitialAllocated is the live requested bytes before the first kept
	// entry.
	InitialAllocated int64
	// PeakAllocated is the maximum of live requested bytes.
	PeakAllocated int64
	// PeakIndex is the index of the entry after which PeakAllocated is first
	// reached; -1 if the state before the first entry is the peak.
	PeakIndex int
	// PeakTimeUS is that entry's time_us (0 for PeakIndex -1).
	PeakTimeUS int64
	// CategoriesAtPeak splits PeakAllocated by category (keys: Parameter,
	// Gradient, ...; every key present).
	CategoriesAtPeak map[string]int64
	// InitialReserved is the reserved bytes before the first kept entry.
	InitialReserved int64
	// PeakReserved is the maximum of reserved bytes (segments plus mapped
	// expandable pages).
	PeakReserved int64
	// FinalAllocated is the sum of requested_size of active_allocated blocks
	// in segments; FinalAllocatedSize the sum of their size.
	FinalAllocated int64
	// FinalAllocatedSize is the sum of size of active_allocated blocks.
	FinalAllocatedSize int64
	// FinalLive is the live requested bytes at the end (FinalAllocated plus
	// pending frees).
	FinalLive int64
	// FinalReserved is the sum of total_size over the device's segments.
	FinalReserved int64
	// OOMs lists the oom entries.
	OOMs []OOMTruth
	// Steps are the training iterations in the kept trace, oldest first.
	Steps []StepTruth
	// PeakStep indexes Steps and PeakPhase names the phase ("other",
	// "forward", "backward", "optimizer") of the entry at PeakIndex; -1 and
	// "other" when the peak is before the first kept entry or outside a
	// step.
	PeakStep  int
	PeakPhase string
	// Leak is what a leaking loop keeps per step; nil without Loop.Leak.
	Leak *LeakTruth
}

// OOMTruth describes one oom entry.
type OOMTruth struct {
	// Index is the entry's index in the trace.
	Index int
	// Requested is the entry's size: the bytes asked for.
	Requested int64
	// DeviceFree is the entry's device_free.
	DeviceFree int64
	// Allocated and Reserved are the live requested and reserved bytes at
	// that moment.
	Allocated int64
	// Reserved is the reserved bytes at the oom.
	Reserved int64
}

// Generate simulates opt, writes the pickled snapshot to w and returns its
// truth.
func Generate(w io.Writer, opt Options) (Truth, error) {
	s, truth, err := Snapshot(opt)
	if err != nil {
		return Truth{}, err
	}
	cw := &countWriter{w: w}
	err = snapshot.Encode(cw, s, snapshot.EncodeOptions{
		Protocol: opt.protocol(), Format: opt.Format, FreshStackLists: !opt.SharedStackLists,
	})
	truth.Bytes = cw.n
	return truth, err
}

// Bytes is Generate into memory.
func Bytes(opt Options) ([]byte, Truth, error) {
	var buf bytes.Buffer
	t, err := Generate(&buf, opt)
	return buf.Bytes(), t, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (o Options) protocol() int {
	if o.Protocol == 0 {
		return 4
	}
	return o.Protocol
}

func (o Options) withDefaults() (Options, error) {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&o.Layers, 4)
	def(&o.Hidden, 256)
	def(&o.Tokens, 2048)
	def(&o.Steps, 2)
	def(&o.Devices, 1)
	switch {
	case o.Protocol < 0 || o.Protocol > 5:
		return o, fmt.Errorf("gen: protocol %d: want 1..5 (0 = 4)", o.Protocol)
	case o.Layers < 1 || o.Hidden < 8 || o.Tokens < 1 || o.Steps < 1 || o.Devices < 1 || o.Devices > 16:
		return o, fmt.Errorf("gen: layers/hidden/tokens/steps/devices out of range: %d/%d/%d/%d/%d",
			o.Layers, o.Hidden, o.Tokens, o.Steps, o.Devices)
	case o.MaxEntries < 0:
		return o, fmt.Errorf("gen: negative MaxEntries")
	}
	return o, nil
}

// Snapshot simulates opt and returns the typed snapshot and its truth
// (Truth.Bytes is 0: nothing was pickled).
func Snapshot(opt Options) (*snapshot.Snapshot, Truth, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, Truth{}, err
	}
	if opt.TargetBytes > 0 {
		steps, err := stepsFor(opt)
		if err != nil {
			return nil, Truth{}, err
		}
		opt.Steps = steps
	}
	st := newStacks(opt.Layers)
	caps := make([]int64, opt.Devices)
	for d := range caps {
		caps[d] = 1 << 50
	}
	oomStep := -1
	if opt.OOM {
		// The last step runs 4x the tokens. A first run without a cap finds
		// the peak reserved before it; capping the device there makes the
		// last step fail.
		oomStep = opt.Steps - 1
		for d, r := range simulate(opt, caps, oomStep, st) {
			caps[d] = r.oomCap
			if opt.CardBytes > 0 {
				caps[d] = opt.CardBytes
			}
		}
	}
	s, truth := assemble(opt, simulate(opt, caps, oomStep, st), st)
	return s, truth, nil
}

// stepsFor measures one and two steps and extrapolates to TargetBytes.
func stepsFor(opt Options) (int, error) {
	size := func(steps int) (int64, error) {
		o := opt
		o.TargetBytes, o.Steps = 0, steps
		var cw countWriter
		cw.w = io.Discard
		_, err := Generate(&cw, o)
		return cw.n, err
	}
	one, err := size(1)
	if err != nil {
		return 0, err
	}
	three, err := size(3)
	if err != nil {
		return 0, err
	}
	per := max((three-one)/2, 1)
	steps := 1 + int((opt.TargetBytes-one+per/2)/per)
	return max(steps, 1), nil
}

// Scenarios lists the named option sets the tests use.
func Scenarios() []string {
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Scenario returns the options of a named scenario (see Scenarios); it
// panics on an unknown name, as scenarios are fixed test inputs.
func Scenario(name string) Options {
	o, ok := scenarios[name]
	if !ok {
		panic("gen: unknown scenario " + name)
	}
	return o
}

var scenarios = map[string]Options{
	// training: full recording of 3 steps, torch 2.6 keys.
	"training": {Seed: 1, Steps: 3},
	// ring_wrap: max_entries cuts the first step and a half away.
	"ring_wrap": {Seed: 2, Steps: 3, MaxEntries: 400},
	// expandable: expandable segments with map/unmap.
	"expandable": {Seed: 3, Steps: 3, Expandable: true},
	// two_streams: a side stream and record_stream delayed frees.
	"two_streams": {Seed: 4, Steps: 2, TwoStreams: true},
	// oom: the last step's forward fails.
	"oom": {Seed: 5, Steps: 3, OOM: true},
	// protocol5: Python 3.14's default protocol, with FRAME opcodes.
	"protocol5": {Seed: 6, Steps: 2, Protocol: 5},
	// pretrace_params: parameters allocated before recording started.
	"pretrace_params": {Seed: 7, Steps: 2, PreTraceParams: true},
	// legacy20: torch 2.0 shape (no block addresses, no time_us).
	"legacy20": {Seed: 8, Steps: 1, Format: snapshot.Format20},
	// post210: torch 2.10 keys (compile_context, user_metadata), 2 devices.
	"post210": {Seed: 9, Steps: 2, Format: snapshot.Format210, Devices: 2},
	// private_pool: part of the forward in a private (CUDA graph) pool.
	"private_pool": {Seed: 11, Steps: 2, PrivatePool: true},
	// everything: all features at once, protocol 2 (no FRAME, BINPUT memo).
	"everything": {Seed: 10, Steps: 3, Protocol: 2, TwoStreams: true, Expandable: true,
		PreTraceParams: true, MaxEntries: 300, OOM: true, Devices: 2},
	// The loop shapes a diagnosis must tell apart (loop.go).
	"leak_history":    {Seed: 12, Steps: 5, Loop: Loop{Leak: LeakHistory}},
	"leak_loss_graph": {Seed: 13, Steps: 5, Loop: Loop{Leak: LeakLossGraph}},
	"vary_seq":        {Seed: 14, Steps: 6, Loop: Loop{VarySeq: true}},
	"grad_accum":      {Seed: 15, Steps: 3, Loop: Loop{Accum: 3}},
	"eval_between":    {Seed: 16, Steps: 5, Loop: Loop{EvalEvery: 2}},
	"python_stacks":   {Seed: 17, Steps: 3, Loop: Loop{Stacks: StacksPython}},
	"no_stacks":       {Seed: 18, Steps: 3, Loop: Loop{Stacks: StacksNone}},
	// pending_cache: the last prefetch's free never completes, and step 1
	// caches a tensor for good.
	"pending_cache": {Seed: 21, Steps: 4, TwoStreams: true, Loop: Loop{KeepPending: true, Cache: true}},
	// gpt2: GPT-2's parameter shapes (12 × 768, vocab 50257) in fp32 with
	// AdamW, a model of the estimator's catalog.
	"gpt2": {Seed: 22, Steps: 2, Layers: 12, Hidden: 768, Tokens: 512, Loop: Loop{Vocab: 50257}},
	// oom_card: a model that fills a whole 12 GB card (GeForce RTX 3060,
	// 12,627,203,850 B as PyTorch reports it) until the last step's longer
	// batch runs out of memory.
	"oom_card": {Seed: 20, Steps: 3, OOM: true, Tokens: 2048 * 48, CardBytes: 12627203850},
	// mid_step: the ring buffer keeps the newest entries, from the middle
	// of a forward pass.
	"mid_step": {Seed: 19, Steps: 4, MaxEntries: 520},
}

// newRand returns the simulator's random source for a device.
func newRand(seed uint64, device int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(device)+1))
}
