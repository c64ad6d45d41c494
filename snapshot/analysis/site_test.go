package analysis

import (
	"slices"
	"testing"

	"oomscope/snapshot"
)

func TestSiteRules(t *testing.T) {
	noise := cpp("torch::unwind::unwind()")
	tests := []struct {
		name   string
		frames []snapshot.Frame
		label  string
		kind   SiteKind
	}{
		{"user frame under torch", []snapshot.Frame{noise, py(torchPkg+"/nn/functional.py", 2140, "softmax"),
			py("/home/u/proj/model.py", 97, "attention"), py(userFile, 5, "main")}, "proj/model.py:97 attention", SiteUser},
		{"thin wrappers skipped", []snapshot.Frame{py("/venv/lib/python3.12/site-packages/einops/_backends.py", 288, "einsum"),
			py("/usr/lib/python3.12/contextlib.py", 81, "inner"), py(userFile, 9, "step")}, "proj/train.py:9 step", SiteUser},
		{"third-party libraries count as user code", []snapshot.Frame{py("/venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py", 300, "forward")},
			"llama/modeling_llama.py:300 forward", SiteUser},
		{"backward node", []snapshot.Frame{noise, cpp("torch::autograd::generated::details::mm_mat1_backward(...)"),
			cpp("torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&)"), cpp("torch::autograd::Engine::thread_main(...)")},
			"backward MmBackward0", SiteAutograd},
		{"accumulate grad", []snapshot.Frame{cpp("torch::autograd::AccumulateGrad::apply(...)")}, "backward AccumulateGrad", SiteAutograd},
		{"torch python only", []snapshot.Frame{py(torchPkg+"/optim/adamw.py", 145, "_init_group")}, "optim/adamw.py:145 _init_group", SiteTorch},
		{"aten op", []snapshot.Frame{noise, cpp("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(...)"),
			cpp("at::_ops::mul_Tensor::call(at::Tensor const&, at::Tensor const&)")}, "aten::mul_Tensor", SiteOp},
		{"plain C++", []snapshot.Frame{noise, cpp("my_ext::launch()")}, "my_ext::launch()", SiteCPP},
		{"empty", nil, "(no stack recorded)", SiteNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			id := b.stack(tt.frames...)
			got := siteOfSummary(b.s.Frames, Summarizer()(b.s.Frames, b.s.Stacks.MustFrames(id)))
			if got.Label != tt.label || got.Kind != tt.kind {
				t.Errorf("site = %q (%s), want %q (%s)", got.Label, got.Kind, tt.label, tt.kind)
			}
		})
	}
}

func TestDisplayStack(t *testing.T) {
	b := newBuilder()
	id := b.stack(
		cpp("torch::unwind::unwind()"),
		cpp("torch::CapturedTraceback::gather(bool, bool, bool)"),
		snapshot.Frame{Name: "at::wrapper_CUDA_mm(...)", Filename: "RegisterCUDA.cpp"}, // kept: the noise filter wants "/Register"
		cpp("_PyEval_EvalFrameDefault"),
		py("/home/u/proj/model.py", 62, "forward"),
		py("/home/u/proj/model.py", 62, "forward"),
		py("/home/u/proj/model.py", 62, "forward"),
		cpp("__libc_start_main"),
	)
	got := DisplayStack(b.s, id)
	want := []string{"at::wrapper_CUDA_mm(...) (RegisterCUDA.cpp)", "/home/u/proj/model.py:62 forward", "<repeats 2 times>"}
	if !slices.Equal(got, want) {
		t.Errorf("DisplayStack = %q, want %q", got, want)
	}
	if DisplayStack(b.s, snapshot.NoStack) != nil || DisplayStack(b.s, snapshot.EmptyStack) != nil {
		t.Error("missing or empty stacks should display as nil")
	}
}
