package gen

import (
	"fmt"
	"io"
	"math/rand/v2"

	"oomscope/snapshot"
)

// Family names a benchmark file family: snapshots with the density of real
// ones (about 4-6 k trace entries per MB, frame dicts shared by memo as
// torch writes them) whose stacks either repeat or not. They are written
// as a stream, so a gigabyte file needs little memory. They are for speed
// and memory measurements only: their trace is not a consistent allocator
// history (allocations lie outside the segments).
type Family string

// The two families (the logic of ../shared/bench/gen_real.py and
// gen_shared.py, written again here).
const (
	// RealStacks repeats 300 stack shapes of 20-70 frames, as real training
	// loops do (real torch 2.6 files: 86-178 distinct stacks, 36-71 frames
	// per entry); every entry still gets its own list object.
	RealStacks Family = "real"
	// DistinctStacks gives nearly every entry its own stack of 8-30 frames:
	// the worst case for stack interning (diverse code paths, C++ stacks).
	DistinctStacks Family = "distinct"
)

// FamilyOptions describes one family file.
type FamilyOptions struct {
	// Family is RealStacks or DistinctStacks.
	Family Family
	// Iterations is the number of simulated steps (N of the Python
	// scripts); each writes an alloc or a free_requested/free_completed
	// pair. 0 means: enough for TargetBytes.
	Iterations int
	// TargetBytes, with Iterations 0, sizes the file to about this many
	// bytes (within a few per cent).
	TargetBytes int64
	// Seed makes the file reproducible (default 1).
	Seed uint64
}

// FamilyInfo says what a family file holds.
type FamilyInfo struct {
	// Bytes is the size of the pickle written.
	Bytes int64
	// Iterations is the number of simulated steps.
	Iterations int
	// Entries is the number of trace entries.
	Entries int
}

// Pools of the family files, as in the Python scripts.
var (
	familyFiles = []string{"/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", "/home/u/train.py",
		"/usr/lib/python3.11/site-packages/torch/_tensor.py", "/usr/lib/python3.11/site-packages/torch/optim/adamw.py",
		"/usr/lib/python3.11/site-packages/torch/autograd/graph.py"}
	familyNames = []string{"forward", "_call_impl", "backward", "step", "_init_group", "main", "<module>"}
	familySizes = []int64{512, 4096, 1 << 20, 3 << 21, 1 << 24}
)

const familyBase = 139800000000000

// WriteFamily writes a family file to w (pickle protocol 4, as
// pickle.dump writes it) and says what it holds.
func WriteFamily(w io.Writer, opt FamilyOptions) (FamilyInfo, error) {
	if opt.Family != RealStacks && opt.Family != DistinctStacks {
		return FamilyInfo{}, fmt.Errorf("gen: unknown family %q (want %q or %q)", opt.Family, RealStacks, DistinctStacks)
	}
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	n := opt.Iterations
	if n <= 0 {
		if opt.TargetBytes <= 0 {
			return FamilyInfo{}, fmt.Errorf("gen: a family file needs Iterations or TargetBytes")
		}
		// Measure a small file and scale: the size is linear in N.
		const probe = 20000
		var cw countWriter
		cw.w = io.Discard
		small := opt
		small.Iterations, small.TargetBytes = probe, 0
		info, err := WriteFamily(&cw, small)
		if err != nil {
			return FamilyInfo{}, err
		}
		n = max(1, int(float64(opt.TargetBytes)*probe/float64(info.Bytes)))
	}
	r := rand.New(rand.NewPCG(opt.Seed, uint64(len(opt.Family))))
	pick := func(k int) int { return r.IntN(k) }
	s := &snapshot.Snapshot{Protocol: 4, AllocatorSettings: &snapshot.AllocatorSettings{Raw: snapshot.Dict{}}}
	for range 600 {
		s.Frames = append(s.Frames, snapshot.Frame{Filename: familyFiles[pick(len(familyFiles))],
			Line: int64(1 + pick(900)), Name: familyNames[pick(len(familyNames))]})
	}
	var shapes []snapshot.Stack
	if opt.Family == RealStacks {
		for range 300 {
			st := make(snapshot.Stack, 20+pick(51))
			for i := range st {
				st[i] = snapshot.FrameID(pick(600))
			}
			shapes = append(shapes, st)
		}
	}
	buf := make(snapshot.Stack, 0, 70)
	frames := func() snapshot.Stack {
		if shapes != nil {
			return shapes[pick(len(shapes))]
		}
		buf = buf[:8+pick(23)]
		for i := range buf {
			buf[i] = snapshot.FrameID(pick(600))
		}
		return buf
	}
	// The segments come first in the file; their live blocks carry stacks.
	for k := range 200 {
		addr := uint64(familyBase + k<<26)
		id := s.Stacks.Add(frames())
		s.Segments = append(s.Segments, snapshot.Segment{Address: addr, TotalSize: 1 << 26, SegmentType: "large",
			AllocatedSize: 1 << 25, ActiveSize: 1 << 25, RequestedSize: 1 << 25, Frames: snapshot.NoStack,
			Blocks: []snapshot.Block{
				{Address: addr, Size: 1 << 25, RequestedSize: 1 << 25, State: snapshot.StateActiveAllocated, Frames: id},
				{Address: addr + 1<<25, Size: 1 << 25, State: snapshot.StateInactive, Frames: snapshot.NoStack},
			}})
	}
	entries := 0
	trace := func(_ int, emit func(*snapshot.TraceEntry, snapshot.Stack) error) error {
		type block struct {
			addr uint64
			size int64
		}
		var live []block
		var t int64
		for i := range n {
			t += int64(1 + pick(50))
			if len(live) > 0 && r.Float64() < 0.48 {
				k := pick(len(live))
				b := live[k]
				live[k] = live[len(live)-1]
				live = live[:len(live)-1]
				for _, a := range []snapshot.Action{snapshot.ActionFreeRequested, snapshot.ActionFreeCompleted} {
					e := snapshot.TraceEntry{Action: a, Addr: b.addr, Size: b.size, TimeUS: t}
					if err := emit(&e, frames()); err != nil {
						return err
					}
				}
				entries += 2
				continue
			}
			b := block{uint64(familyBase + int64(i)<<25), familySizes[pick(len(familySizes))]}
			live = append(live, b)
			e := snapshot.TraceEntry{Action: snapshot.ActionAlloc, Addr: b.addr, Size: b.size, TimeUS: t}
			if err := emit(&e, frames()); err != nil {
				return err
			}
			entries++
		}
		return nil
	}
	cw := &countWriter{w: w}
	err := snapshot.Encode(cw, s, snapshot.EncodeOptions{Protocol: 4, FreshStackLists: true, Traces: trace, TraceDevices: 1})
	return FamilyInfo{Bytes: cw.n, Iterations: n, Entries: entries}, err
}
