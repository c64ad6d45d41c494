package app

// triageExample is a built-in sample message for the /triage example picker.
type triageExample struct {
	ID, Title, Text string
}

// triageExamples are sample messages, one per common situation, written in
// the exact wording of each PyTorch version and stack.
var triageExamples = []triageExample{
	{"frag", "PyTorch 2.x: fragmented cache", `Traceback (most recent call last):
  File "train.py", line 88, in <module>
    loss.backward()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. GPU 0 has a total capacity of 79.15 GiB of which 2.19 GiB is free. Including non-PyTorch memory, this process has 76.94 GiB memory in use. Of the allocated memory 66.02 GiB is allocated by PyTorch, and 10.21 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)`},
	{"other", "PyTorch 2.x: another process on the GPU", `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.25 GiB. GPU 0 has a total capacity of 23.68 GiB of which 402.31 MiB is free. Process 31337 has 9.80 GiB memory in use. Including non-PyTorch memory, this process has 13.46 GiB memory in use. Of the allocated memory 12.61 GiB is allocated by PyTorch, and 402.77 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)`},
	{"full", "PyTorch 1.x: the card is full", `RuntimeError: CUDA out of memory. Tried to allocate 500.00 MiB (GPU 0; 15.78 GiB total capacity; 14.12 GiB already allocated; 318.75 MiB free; 14.41 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF`},
	{"bogus", "A size bug, not a memory problem", `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 931.32 GiB. GPU 0 has a total capacity of 47.54 GiB of which 40.11 GiB is free. Including non-PyTorch memory, this process has 7.42 GiB memory in use. Of the allocated memory 6.80 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.`},
	{"mps", "Apple MPS", `RuntimeError: MPS backend out of memory (MPS allocated: 17.60 GB, other allocations: 420.31 MB, max allowed: 18.13 GB). Tried to allocate 256.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).`},
	{"vllm", "vLLM: KV cache too small", `ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (6.42 GiB). Based on the available memory, the estimated maximum model length is 52592. Try increasing ` + "`gpu_memory_utilization`" + ` or decreasing ` + "`max_model_len`" + ` when initializing the engine.`},
	{"cpu", "Host RAM (CPU allocator)", `RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 21474836480 bytes. Error code 12 (Cannot allocate memory)`},
}

func exampleByID(id string) (triageExample, bool) {
	for _, e := range triageExamples {
		if e.ID == id {
			return e, true
		}
	}
	return triageExample{}, false
}
