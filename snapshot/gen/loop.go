package gen

import "oomscope/snapshot"

// Loop varies the training loop into the shapes a diagnosis must tell
// apart: gradient accumulation, evaluation passes, varying sequence lengths,
// leaks, and stacks recorded with fewer frames. The zero value is the plain
// loop.
type Loop struct {
	// Accum is the number of micro-batches (forward and backward) per
	// optimizer step (0 or 1: one).
	Accum int
	// VarySeq draws each micro-batch's tokens between half and 1.5 × Tokens
	// and keeps the input batch alive until the next one replaces it, so
	// step-end memory goes up and down without a leak.
	VarySeq bool
	// EvalEvery runs an evaluation pass under torch.no_grad() at the start
	// of every EvalEvery-th step after the first (0: never).
	EvalEvery int
	// Leak makes memory grow step after step (LeakHistory, LeakLossGraph;
	// "" none).
	Leak string
	// Stacks is what the recording keeps of each stack: StacksAll (the
	// default), StacksPython or StacksNone.
	Stacks string
	// Workspace makes the first matmul of the first step allocate a cuBLAS
	// workspace (8 MiB, kept by the handle for good): category other.
	Workspace bool
	// KeepPending leaves the last step's side-stream prefetch (TwoStreams)
	// freed but never completed: the snapshot shows it active_pending_free.
	KeepPending bool
	// Cache makes step 1 put a 16 MiB tensor in a cache that keeps it for
	// the rest of the run: a long-lived allocation no step explains.
	Cache bool
	// Vocab, when > 0, adds a Vocab × Hidden token embedding to the
	// parameters (trained like the others), so that the model state can
	// match a catalog model: 12 layers of width 768 with Vocab 50257 is
	// GPT-2's 124M.
	Vocab int
}

// Leaks and stack recordings of a Loop.
const (
	// LeakHistory keeps every step's logits in a list
	// (history.append(logits)): one block per step, never freed.
	LeakHistory = "history"
	// LeakLossGraph runs a logging pass outside torch.no_grad() at the
	// start of every step and accumulates its loss (total_loss += loss):
	// backward never runs on that graph, so it keeps the pass's saved
	// activations alive, every step.
	LeakLossGraph = "loss_graph"

	// StacksAll records Python and C++ frames (stacks="all").
	StacksAll = ""
	// StacksPython records Python frames only (stacks="python"): C++ frames
	// are gone and the autograd thread, which has no Python frames, records
	// empty stacks.
	StacksPython = "python"
	// StacksNone records no stacks (context=None): trace entries have no
	// frames key and blocks empty lists.
	StacksNone = "none"
)

// phase is the part of a step an event belongs to; it starts at the
// phase's first allocation and lasts until the next phase starts, the way
// an analysis sees it.
type phase uint8

const (
	phaseOther phase = iota
	phaseForward
	phaseBackward
	phaseOptimizer
)

// Phase names as the analysis reports them.
var phaseNames = [...]string{"other", "forward", "backward", "optimizer"}

// Frames of the loop variations.
const (
	dataFile = userDir + "/data.py"
	// LeakHistorySite and LeakLossGraphSite are the allocation sites (first
	// user frame, as "dir/file.py:line function") of the blocks each leak
	// keeps.
	LeakHistorySite   = "project/model.py:231 forward"
	LeakLossGraphSite = "project/model.py:62 forward"
)

// loopStacks interns the stacks of the loop variations.
func (s *stacks) loopStacks(layers int) {
	t := s.t
	s.input = t.stack(cat(allocPrefix("_to_copy"),
		[]snapshot.Frame{f("to", dataFile, 51), f("train_step", trainFile, 35), f("main", trainFile, 88), f("<module>", trainFile, 120)})...)
	s.lmHead = t.stack(cat(allocPrefix("mm"),
		[]snapshot.Frame{f("forward", modelFile, 231)}, callModule(), trainFrames(41))...)
	pass := func(fn string, line int64) []snapshot.StackID {
		var out []snapshot.StackID
		for l := range layers {
			block := []snapshot.Frame{f("forward", modelFile, int64(140+l%3))}
			outer := cat(callModule(), []snapshot.Frame{f("forward", modelFile, 210)}, callModule(),
				[]snapshot.Frame{f(fn, trainFile, line), f("main", trainFile, 88), f("<module>", trainFile, 120)})
			out = append(out, t.stack(cat(allocPrefix("mm"), []snapshot.Frame{f("forward", modelFile, 62)}, callModule(), block, outer)...))
		}
		return out
	}
	s.evalAct = pass("evaluate", 60)
	s.logAct = pass("log_loss", 70)
	s.cache = t.stack(cat(allocPrefix("clone"), []snapshot.Frame{f("train_step", trainFile, 55), f("main", trainFile, 88), f("<module>", trainFile, 120)})...)
	s.workspace = t.stack(cat(allocPrefix("mm")[:6],
		[]snapshot.Frame{
			cpp("at::cuda::getNewWorkspace()", "CublasHandlePool.cpp"),
			cpp("at::cuda::getCurrentCUDABlasHandle()", "CublasHandlePool.cpp"),
			cpp("void at::cuda::blas::gemm<float>(char, char, long, long, long, float, float const*, long, float const*, long, float, float*, long)", "CUDABlas.cpp"),
			cpp("at::native::(anonymous namespace)::addmm_out_cuda_impl(at::Tensor&, at::Tensor const&, at::Tensor const&, at::Tensor const&, c10::Scalar const&, c10::Scalar const&, at::native::(anonymous namespace)::Activation)", "Blas.cpp"),
			f("forward", modelFile, 62),
		}, callModule(), trainFrames(41))...)
}

// Sizes of the simulated workspace and cached tensor, and the sites of the
// cached tensor and of the prefetch a pending free keeps.
const (
	workspaceBytes = 8 << 20
	cacheBytes     = 16 << 20
	// CacheSite and PrefetchSite are the allocation sites of Loop.Cache's
	// tensor and of the prefetched batches (TwoStreams).
	CacheSite    = "project/train.py:55 train_step"
	PrefetchSite = "project/data.py:33 prefetch"
)

// isPythonFile reports whether a frame's file is Python source.
func isPythonFile(fn string) bool { return len(fn) > 3 && fn[len(fn)-3:] == ".py" }

// recordStacks rewrites the stacks of s as a recording with Loop.Stacks
// keeps them.
func recordStacks(s *snapshot.Snapshot, mode string) {
	var remap func(snapshot.StackID) snapshot.StackID
	switch mode {
	case StacksPython:
		t := newStackTable()
		ids := make([]snapshot.StackID, s.Stacks.Len())
		for id := range ids {
			var fr []snapshot.Frame
			for _, fid := range s.Stacks.MustFrames(snapshot.StackID(id)) {
				if f := s.Frames[fid]; isPythonFile(f.Filename) {
					fr = append(fr, f)
				}
			}
			ids[id] = t.stack(fr...)
		}
		s.Frames, s.Stacks = t.frames, t.stacks
		remap = func(id snapshot.StackID) snapshot.StackID {
			if id < 0 {
				return id
			}
			return ids[id]
		}
	case StacksNone:
		var none snapshot.Stacks
		none.Add(snapshot.Stack{}) // just the empty stack
		s.Frames, s.Stacks = []snapshot.Frame{}, none
		remap = func(id snapshot.StackID) snapshot.StackID {
			if id < 0 {
				return id
			}
			return snapshot.EmptyStack
		}
	default:
		return
	}
	for d, tr := range s.DeviceTraces {
		var out snapshot.Trace
		for _, e := range tr.Entries() {
			e.Frames = remap(e.Frames)
			if mode == StacksNone {
				e.Frames = snapshot.NoStack
			}
			out.Append(e)
		}
		s.DeviceTraces[d] = out
	}
	s.MapSegmentStacks(remap)
}
