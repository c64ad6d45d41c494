package analysis

import (
	"reflect"
	"testing"

	"oomscope/snapshot"
)

func TestStackGroups(t *testing.T) {
	frames := []snapshot.Frame{
		{Filename: "??", Name: "c10::cuda::CUDACachingAllocator::malloc(void**, int, unsigned long, CUstream_st*)"},
		{Filename: "/usr/lib/python3.12/site-packages/torch/nn/modules/linear.py", Line: 125, Name: "forward"},
		{Filename: "/home/me/train.py", Line: 88, Name: "train_step"},
		{Filename: "aten/src/ATen/native/cuda/Blas.cpp", Line: 300, Name: "at::native::addmm_out_cuda_impl"},
		{Filename: "/usr/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py", Line: 400, Name: "forward"},
		{Filename: "/usr/lib/python3.12/runpy.py", Line: 198, Name: "_run_module_as_main"},
		{Filename: "/home/me/train.py", Line: 120, Name: "<module>"},
		{Filename: "/home/My Projects/a b.py", Line: 7, Name: "step"},
		{Filename: "<frozen runpy>", Line: 88, Name: "_run_code"},
	}
	var lines []string
	for i := range frames {
		lines = append(lines, FormatFrame(&frames[i]))
	}
	user, lib, native := StackGroups(lines)
	if want := []string{lines[2], lines[4], lines[6], lines[7]}; !reflect.DeepEqual(user, want) {
		t.Errorf("user = %q, want %q", user, want)
	}
	if want := []string{lines[1], lines[5], lines[8]}; !reflect.DeepEqual(lib, want) {
		t.Errorf("library = %q, want %q", lib, want)
	}
	if want := []string{lines[0], lines[3]}; !reflect.DeepEqual(native, want) {
		t.Errorf("native = %q, want %q", native, want)
	}
}
