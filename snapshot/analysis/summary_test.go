package analysis

import (
	"math/rand/v2"
	"testing"

	"oomscope/snapshot"
)

// sequentialSummary is the summary rule as the frames come, written
// without Summarizer's per-frame words and ranks: the first user frame
// wins; before one, the best candidate so far (autograd node, then torch
// Python, then ATen op, then plain C++), the first of its kind.
func sequentialSummary(frames []snapshot.Frame, st snapshot.Stack) snapshot.StackSummary {
	var all frameFlags
	var site snapshot.FrameID
	kind := siteNone
	for _, fid := range st {
		if int(fid) < 0 || int(fid) >= len(frames) {
			continue
		}
		fl := flagsOf(&frames[fid])
		all |= fl
		switch {
		case kind == siteUser:
		case fl&fUser != 0:
			kind, site = siteUser, fid
		case fl&fNode != 0 && kind != siteAutograd:
			kind, site = siteAutograd, fid
		case fl&fTorchPy != 0 && (kind == siteNone || kind > siteTorch):
			kind, site = siteTorch, fid
		case fl&fOp != 0 && (kind == siteNone || kind > siteOp):
			kind, site = siteOp, fid
		case fl&fCPP != 0 && fl&fPython == 0 && kind == siteNone:
			kind, site = siteCPP, fid
		}
	}
	p := phaseUnknown
	switch {
	case all&fOptimizer != 0:
		p = phaseOptimizer
	case all&fBackward != 0:
		p = phaseBackward
	case all&fInit != 0:
		p = phaseInit
	case all&fForward != 0:
		p = phaseForward
	}
	sum := packSummary(kind, site, p)
	if all&fWorkspace != 0 {
		sum |= summaryWorkspaceBit
	}
	if all&fZeroGrad != 0 {
		sum |= summaryZeroGradBit
	}
	if all&fLoss != 0 {
		sum |= summaryLossBit
	}
	return sum
}

// TestSummarizerSequential compares Summarizer with the rule applied frame
// by frame, on random stacks over frames of every site kind and phase
// (several candidates of each kind, in every order, IDs outside the table
// among them) and on every stack of the real files.
func TestSummarizerSequential(t *testing.T) {
	frames := []snapshot.Frame{
		cpp("torch::unwind::unwind()"),
		cpp("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(...)"),
		cpp("my_ext::launch()"),
		cpp("other_ext::run()"),
		cpp("at::_ops::mul_Tensor::call(at::Tensor const&, at::Tensor const&)"),
		cpp("at::_ops::mm::call(at::Tensor const&, at::Tensor const&)"),
		cpp("torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&)"),
		cpp("torch::autograd::AccumulateGrad::apply(...)"),
		cpp("torch::autograd::Engine::thread_main(...)"),
		cpp("cublasLtMatmul"),
		cpp("at::cuda::getCurrentCUDABlasHandle()"),
		py(torchPkg+"/nn/functional.py", 2140, "cross_entropy"),
		py(torchPkg+"/optim/adamw.py", 145, "_init_group"),
		py(torchPkg+"/optim/optimizer.py", 900, "zero_grad"),
		py(torchPkg+"/_tensor.py", 600, "backward"),
		py(torchPkg+"/nn/modules/module.py", 1500, "_call_impl"),
		py(torchPkg+"/nn/init.py", 400, "kaiming_uniform_"),
		py("/venv/lib/python3.12/site-packages/einops/_backends.py", 288, "einsum"),
		py("/home/u/proj/model.py", 97, "forward"),
		py(userFile, 5, "main"),
		py("/home/u/proj/model.py", 120, "lm_head"),
	}
	sum := Summarizer()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		st := make(snapshot.Stack, 1+rng.IntN(12))
		for i := range st {
			st[i] = snapshot.FrameID(rng.IntN(len(frames)+1)) - snapshot.FrameID(rng.IntN(2)) // -1 and len(frames): outside
		}
		if got, want := sum(frames, st), sequentialSummary(frames, st); got != want {
			t.Fatalf("stack %v: summary %#x, want %#x", st, got, want)
		}
	}
	for _, name := range []string{"pt26_cs336_ctx128_fullstep.pickle", "pt20_flexgen_oom_snapshot.pickle"} {
		s := loadReal(t, name)
		sum := Summarizer()
		for id := range s.Stacks.Len() {
			st := s.Stacks.MustFrames(snapshot.StackID(id))
			if got, want := sum(s.Frames, st), sequentialSummary(s.Frames, st); got != want {
				t.Fatalf("%s stack %d: summary %#x, want %#x", name, id, got, want)
			}
		}
	}
}
