package triage

import (
	"strings"
	"testing"
)

func fixIDs(f Finding) []string {
	var ids []string
	for _, fx := range f.Fixes {
		ids = append(ids, fx.ID)
	}
	return ids
}

func TestExpandableSegmentsVariable(t *testing.T) {
	tail := " If reserved but unallocated memory is large try setting "
	tests := []struct {
		name, text string
		want       []string // lines the fix's code must contain
		absent     string
	}{
		{"2.2+ names PYTORCH_CUDA_ALLOC_CONF",
			"CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.63 GiB of which 1.00 GiB is free. Of the allocated memory 10.00 GiB is allocated by PyTorch, and 9.00 GiB is reserved by PyTorch but unallocated." + tail + "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
			[]string{"export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"}, "max_split_size_mb"},
		{"2.9 names PYTORCH_ALLOC_CONF, with the 2.9.1 CUDA fallback",
			"CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.63 GiB of which 1.00 GiB is free. Of the allocated memory 10.00 GiB is allocated by PyTorch, and 9.00 GiB is reserved by PyTorch but unallocated." + tail + "PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
			[]string{"export PYTORCH_ALLOC_CONF=expandable_segments:True", "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"}, ""},
		{"ROCm names PYTORCH_HIP_ALLOC_CONF",
			"HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.63 GiB of which 1.00 GiB is free. Of the allocated memory 10.00 GiB is allocated by PyTorch, and 9.00 GiB is reserved by PyTorch but unallocated." + tail + "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
			[]string{"export PYTORCH_HIP_ALLOC_CONF=expandable_segments:True"}, "PYTORCH_CUDA_ALLOC_CONF"},
		{"2.1 (capacty) has expandable segments already",
			"CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacty of 23.63 GiB of which 1.00 GiB is free. Of the allocated memory 10.00 GiB is allocated by PyTorch, and 9.00 GiB is reserved by PyTorch but unallocated." + tail + "max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF",
			[]string{"export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"}, ""},
		{"1.x predates expandable segments",
			"CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.63 GiB total capacity; 10.00 GiB already allocated; 1.00 GiB free; 19.00 GiB reserved in total by PyTorch)",
			[]string{"PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128"}, "expandable_segments:True"},
		{"ROCm 1.x predates them too",
			"HIP out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.63 GiB total capacity; 10.00 GiB already allocated; 1.00 GiB free; 19.00 GiB reserved in total by PyTorch)",
			[]string{"max_split_size_mb:128"}, "expandable_segments:True"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := one(t, tt.text)
			if f.Cause != CauseFragmentation || len(f.Fixes) == 0 || f.Fixes[0].ID != "expandable-segments" {
				t.Fatalf("cause %s, fixes %v; want fragmentation led by expandable-segments", f.Cause, fixIDs(*f))
			}
			code := f.Fixes[0].Code
			for _, w := range tt.want {
				if !strings.Contains(code, w) {
					t.Errorf("code %q lacks %q", code, w)
				}
			}
			if tt.absent != "" && strings.Contains(code, tt.absent) {
				t.Errorf("code %q contains %q", code, tt.absent)
			}
		})
	}
}

func TestWhenSteersFixes(t *testing.T) {
	capacityMsg := "CUDA out of memory. Tried to allocate 500.00 MiB (GPU 0; 15.78 GiB total capacity; 14.12 GiB already allocated; 318.75 MiB free; 14.41 GiB reserved in total by PyTorch)"
	fragMsg := "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.63 GiB of which 1.00 GiB is free. Of the allocated memory 10.00 GiB is allocated by PyTorch, and 9.00 GiB is reserved by PyTorch but unallocated."
	cpuMsg := "DefaultCPUAllocator: can't allocate memory: you tried to allocate 1073741824 bytes. Error code 12 (Cannot allocate memory)"
	tests := []struct {
		name   string
		text   string
		when   When
		prefix []string // the first fixes, in order
	}{
		{"capacity, unknown when", capacityMsg, WhenUnknown, []string{"micro-batch", "autocast", "checkpointing"}},
		{"capacity at load: fixed cost", capacityMsg, WhenLoad, []string{"shard", "lora-qlora", "optimizer-8bit", "micro-batch"}},
		{"capacity after steps: retained graph", capacityMsg, WhenAfterSteps, []string{"item-for-logging", "cap-seq-len", "micro-batch"}},
		{"capacity on long inputs: activations", capacityMsg, WhenLongInputs, []string{"checkpointing", "sdpa", "chunked-loss", "micro-batch"}},
		{"capacity in evaluation: autograd", capacityMsg, WhenEval, []string{"inference-mode", "micro-batch"}},
		{"fragmentation keeps expandable segments first", fragMsg, WhenEval, []string{"expandable-segments", "empty-cache", "inference-mode"}},
		{"host RAM ignores when", cpuMsg, WhenEval, []string{"host-memory", "move-to-gpu", "load-lazily"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Triage(tt.text, Options{When: tt.when})
			if len(res.Findings) != 1 {
				t.Fatalf("%d findings", len(res.Findings))
			}
			ids := fixIDs(res.Findings[0])
			if len(ids) < len(tt.prefix) || strings.Join(ids[:len(tt.prefix)], ",") != strings.Join(tt.prefix, ",") {
				t.Errorf("fixes %v, want them to start with %v", ids, tt.prefix)
			}
			seen := map[string]bool{}
			for _, fx := range res.Findings[0].Fixes {
				if seen[fx.ID] {
					t.Errorf("fix %s listed twice", fx.ID)
				}
				seen[fx.ID] = true
				if fx.Code == "" || fx.Title == "" || fx.Reason == "" {
					t.Errorf("fix %s lacks code, title or reason", fx.ID)
				}
			}
			if tt.when == WhenUnknown {
				for _, fx := range res.Findings[0].Fixes {
					if strings.HasPrefix(fx.Reason, "when:") {
						t.Errorf("fix %s steered by an unknown when", fx.ID)
					}
				}
			}
		})
	}
}

func TestParseWhen(t *testing.T) {
	for in, want := range map[string]When{"": WhenUnknown, "load": WhenLoad, "step0": WhenLoad, " Steps ": WhenAfterSteps, "long": WhenLongInputs, "evaluation": WhenEval} {
		if got, err := ParseWhen(in); err != nil || got != want {
			t.Errorf("ParseWhen(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseWhen("tuesday"); err == nil || !strings.Contains(err.Error(), "tuesday") {
		t.Errorf("ParseWhen(tuesday) err = %v", err)
	}
}
