package gen

import (
	"oomscope/snapshot"
)

// Paths used in generated Python frames.
const (
	torchDir   = "/opt/conda/lib/python3.11/site-packages/torch"
	moduleFile = torchDir + "/nn/modules/module.py"
	userDir    = "/home/user/project"
	modelFile  = userDir + "/model.py"
	trainFile  = userDir + "/train.py"
)

// stackTable builds Snapshot.Frames and Snapshot.Stacks, interning by value.
type stackTable struct {
	frames  []snapshot.Frame
	stacks  snapshot.Stacks
	frameID map[snapshot.Frame]snapshot.FrameID
}

func newStackTable() *stackTable {
	return &stackTable{frameID: map[snapshot.Frame]snapshot.FrameID{}}
}

// f is shorthand for a frame literal.
func f(name, file string, line int64) snapshot.Frame {
	return snapshot.Frame{Name: name, Filename: file, Line: line}
}

// cpp is an unsymbolized-file C++ frame as torch records it.
func cpp(name, file string) snapshot.Frame { return snapshot.Frame{Name: name, Filename: file} }

// stack interns a frame list given innermost first.
func (t *stackTable) stack(frames ...snapshot.Frame) snapshot.StackID {
	ids := make(snapshot.Stack, len(frames))
	for i, fr := range frames {
		id, ok := t.frameID[fr]
		if !ok {
			id = snapshot.FrameID(len(t.frames))
			t.frames = append(t.frames, fr)
			t.frameID[fr] = id
		}
		ids[i] = id
	}
	return t.stacks.Add(ids)
}

// allocPrefix are the innermost frames of every CUDA allocation recorded
// with stacks="all": the unwinder and the caching allocator (noise frames
// that viewers hide), then the ATen kernel wrapper of op.
func allocPrefix(op string) []snapshot.Frame {
	return []snapshot.Frame{
		cpp("torch::unwind::unwind()", "??"),
		cpp("torch::CapturedTraceback::gather(bool, bool, bool)", "??"),
		cpp("torch::cuda::(anonymous namespace)::gather_with_cpp()", "memory_snapshot.cpp"),
		cpp("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)", "CUDACachingAllocator.cpp"),
		cpp("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, signed char, unsigned long, CUstream_st*)", ""),
		cpp("at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, c10::ScalarType, std::optional<c10::MemoryFormat>)", ""),
		cpp("at::(anonymous namespace)::wrapper_CUDA_"+op+"(at::Tensor const&, at::Tensor const&)", "RegisterCUDA.cpp"),
		cpp("torch::autograd::VariableType::(anonymous namespace)::"+op+"(c10::DispatchKeySet, at::Tensor const&, at::Tensor const&)", "VariableType_0.cpp"),
	}
}

// callModule returns the two frames of nn.Module.__call__.
func callModule() []snapshot.Frame {
	return []snapshot.Frame{f("_call_impl", moduleFile, 1750), f("_wrapped_call_impl", moduleFile, 1739)}
}

// trainFrames are the outermost user frames: train_step called from main.
func trainFrames(line int64) []snapshot.Frame {
	return []snapshot.Frame{f("train_step", trainFile, line), f("main", trainFile, 88), f("<module>", trainFile, 120)}
}

func cat(parts ...[]snapshot.Frame) []snapshot.Frame {
	var out []snapshot.Frame
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// stacks holds the interned stacks the training loop uses.
type stacks struct {
	t *stackTable
	// param is a parameter's stack: model.to("cuda") in main.
	param snapshot.StackID
	// forwardAct and forwardTmp are per layer and op: an activation saved
	// for backward, and a temporary freed inside forward.
	forwardAct []snapshot.StackID
	forwardTmp []snapshot.StackID
	loss       snapshot.StackID
	// grad is AccumulateGrad in the autograd engine thread (C++ only, as in
	// real backward allocations).
	grad         snapshot.StackID
	backwardTmp  snapshot.StackID
	backwardFree snapshot.StackID
	optState     snapshot.StackID
	optTmp       snapshot.StackID
	zeroGrad     snapshot.StackID
	sideStream   snapshot.StackID
	// input is the batch moved to the GPU (Loop.VarySeq), lmHead the
	// model's logits kept by history.append (Loop.Leak), evalAct and
	// logAct per layer the activations of an evaluation pass and of a
	// logging pass (see loopStacks).
	input   snapshot.StackID
	lmHead  snapshot.StackID
	evalAct []snapshot.StackID
	logAct  []snapshot.StackID
	// workspace is a cuBLAS workspace allocated by the first matmul;
	// cache the tensor Loop.Cache keeps.
	workspace snapshot.StackID
	cache     snapshot.StackID
}

func newStacks(layers int) *stacks {
	t := newStackTable()
	s := &stacks{t: t}
	s.param = t.stack(cat(allocPrefix("_to_copy"),
		[]snapshot.Frame{
			f("convert", moduleFile, 1341), f("_apply", moduleFile, 942), f("_apply", moduleFile, 915),
			f("to", moduleFile, 1355), f("main", trainFile, 71), f("<module>", trainFile, 120),
		})...)
	for l := range layers {
		block := []snapshot.Frame{f("forward", modelFile, int64(140+l%3))}
		outer := cat(callModule(), []snapshot.Frame{f("forward", modelFile, 210)}, callModule(), trainFrames(41))
		s.forwardAct = append(s.forwardAct, t.stack(cat(allocPrefix("mm"),
			[]snapshot.Frame{f("forward", modelFile, 62)}, callModule(), block, outer)...))
		s.forwardTmp = append(s.forwardTmp, t.stack(cat(allocPrefix("softmax"),
			[]snapshot.Frame{f("softmax", torchDir+"/nn/functional.py", 2140), f("attention", modelFile, 97)}, block, outer)...))
	}
	s.loss = t.stack(cat(allocPrefix("log_softmax"),
		[]snapshot.Frame{f("cross_entropy", torchDir+"/nn/functional.py", 3494)}, trainFrames(43))...)
	engine := []snapshot.Frame{
		cpp("torch::autograd::Node::operator()(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)", ""),
		cpp("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> const&)", ""),
		cpp("torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)", ""),
		cpp("execute_native_thread_routine", "thread48.o"),
	}
	s.grad = t.stack(cat(allocPrefix("clone"),
		[]snapshot.Frame{
			cpp("torch::autograd::AccumulateGrad::accumulateGrad(at::Tensor const&, at::Tensor&, at::Tensor const&, unsigned long, std::function<void (at::Tensor&&)> const&)", "accumulate_grad.h"),
			cpp("torch::autograd::AccumulateGrad::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)", "accumulate_grad.cpp"),
		}, engine)...)
	s.backwardTmp = t.stack(cat(allocPrefix("mm"),
		[]snapshot.Frame{cpp("torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)", "Functions.cpp")}, engine)...)
	s.backwardFree = t.stack(engine...)
	opt := []snapshot.Frame{
		f("step", torchDir+"/optim/adamw.py", 209), f("_use_grad", torchDir+"/optim/optimizer.py", 79),
		f("wrapper", torchDir+"/optim/optimizer.py", 485), f("train_step", trainFile, 46),
		f("main", trainFile, 88), f("<module>", trainFile, 120),
	}
	s.optState = t.stack(cat(allocPrefix("zeros_like"),
		[]snapshot.Frame{f("_init_group", torchDir+"/optim/adamw.py", 145)}, opt)...)
	s.optTmp = t.stack(cat(allocPrefix("_foreach_sqrt"),
		[]snapshot.Frame{f("_multi_tensor_adamw", torchDir+"/optim/adamw.py", 601), f("adamw", torchDir+"/optim/adamw.py", 767)}, opt)...)
	s.zeroGrad = t.stack(f("zero_grad", torchDir+"/optim/optimizer.py", 978), f("train_step", trainFile, 38),
		f("main", trainFile, 88), f("<module>", trainFile, 120))
	s.sideStream = t.stack(cat(allocPrefix("copy_"),
		[]snapshot.Frame{f("prefetch", userDir+"/data.py", 33)}, trainFrames(36))...)
	s.loopStacks(layers)
	return s
}
