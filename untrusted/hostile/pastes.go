package hostile

import (
	"math/rand/v2"
	"strings"
)

// Paste is one class of adversarial paste for OOM triage.
type Paste struct {
	// Class names what the paste attacks.
	Class string
	// Text is the paste, about the size asked for.
	Text string
}

// A real message of each main format, to repeat, cut and bury.
const (
	msg2x = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 3.00 MiB is free. " +
		"Process 1234 has 1.00 GiB memory in use. Including non-PyTorch memory, this process has 78.14 GiB memory in use. " +
		"Of the allocated memory 77.00 GiB is allocated by PyTorch, and 500.00 MiB is reserved by PyTorch but unallocated. " +
		"If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  " +
		"See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n"
	msg1x = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity; 3.40 GiB already allocated; 4.00 MiB free; 3.45 GiB reserved in total by PyTorch)\n"
)

// Pastes returns the adversarial paste classes, each about n bytes long
// (n ≥ 4096), generated from a fixed seed: random bytes; random OOM words;
// one message repeated past the findings cap; message heads with no body;
// a head followed by a flood of process sentences; numbers with a
// megabyte of digits; one endless line; a message with a colour code
// between every character; every space a no-break space and every line
// wrapped at 20 columns behind a prefix; NUL bytes and invalid UTF-8;
// unclosed parentheses and brackets that keep a wrapped 1.x message or a
// TensorFlow shape open; a real message at the very end of a log of
// lookalike lines; every format's keyword with near-miss heads; and vLLM
// errors in a log that states every vLLM setting on every line.
func Pastes(n int) []Paste {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(unit string) string { return repeatTo(unit, n) }
	var out []Paste
	add := func(class, text string) { out = append(out, Paste{class, text}) }

	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	add("random bytes", string(b))

	words := []string{"CUDA", "out", "of", "memory", "Tried", "to", "allocate", "1.00", "GiB", "GPU", "0", "(", ";", "free",
		"reserved", "cached)", "Process", "has", "NCCL", "WARN", "MPS", "backend", "\n", "> ", "[rank1]: ", "OOM", "when",
		"allocating", "shape[", "]", "HIP", "XPU", "total", "capacity", "of which", "is free.", "this process", "allowed;"}
	var w strings.Builder
	for w.Len() < n {
		w.WriteString(words[r.IntN(len(words))])
		w.WriteByte(' ')
	}
	add("random OOM words", w.String()[:n])

	add("one message repeated", fill(msg2x))
	add("heads without bodies", fill("CUDA out of memory. Tried to allocate "))
	add("head then a flood of processes", msg2x[:strings.Index(msg2x, "Including")]+fill("Process 1234 has 1.00 GiB memory in use. "))
	add("megabyte numbers", "CUDA out of memory. Tried to allocate "+repeatTo("9", n/2)+" GiB (GPU 0; "+repeatTo("1", n/2)+".5 GiB total capacity)")
	add("one endless line", strings.ReplaceAll(fill(msg1x), "\n", " "))

	var c strings.Builder
	for c.Len() < n {
		for _, ch := range msg2x {
			c.WriteString("\x1b[3")
			c.WriteByte(byte('0' + r.IntN(8)))
			c.WriteByte('m')
			c.WriteRune(ch)
		}
	}
	add("colour code between every character", c.String())

	var wr strings.Builder
	for wr.Len() < n {
		m := strings.ReplaceAll(msg2x, " ", "\u00a0")
		for len(m) > 0 {
			k := min(20, len(m))
			wr.WriteString("[rank3]:\u00a0\u00a0" + m[:k] + "\n")
			m = m[k:]
		}
	}
	add("no-break spaces, wrapped at 20 columns behind a prefix", wr.String())

	add("NUL bytes and invalid UTF-8", fill("CUDA\x00out of memory.\xff\xfe Tried to allocate 2\x00.00 MiB (GPU \xc0\x80; "))
	add("unclosed parenthesis and bracket", "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; "+repeatTo("4.00 GiB total capacity; ", n/2)+
		"OOM when allocating tensor with shape["+repeatTo("1,", n/2)+" and type float")
	add("lookalike log, real message last", fill("step 12 | CUDA memory 12.3 GiB allocated | out of memory? no | Tried 3 times\n")+msg1x)
	add("every keyword, near misses", fill(nearMisses))
	add("vLLM settings on every line, an error every 50", fill(strings.Repeat(vllmSettings, 50)+
		"ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n"))
	return out
}

// nearMisses holds a keyword of every triage format and heads that fail
// only at their last word, so that every format's search runs over all of
// a paste made of it. Triage's tests check that it names every keyword.
const nearMisses = "CUDA out of memoryX. HIP error: out of memor. MLU out of memory_ Current platform can not allocate memory block " +
	"cuda runtime error (2): out of memor THCudaCheck FAIL file=x line=1 error=2: out of memor " +
	"Tried to allocate 1.00 GiBs 1.00 GiB total capacity: 2 GB already allocated: 3 MiB current active: 4 B allowed: x allowed; in total by cached) " +
	"Allocation on device would exceed allowed memoir MPS backend out of memor invalid buffer size DefaultCPUAllocator: " +
	"posix_memalign(x) == 0. you tried to allocate CUBLAS_STATUS_X CUDNN_STATUS_X cuDNN error: CUDNN_STATUS_ " +
	"Unable to find a valid cuDNN algorithm no valid convolution algorithms available in cuDNN NCCL error " +
	"RESOURCE_EXHAUSTED: Out of memory while trying to allocate x bytes Out of memory allocating 1 GB Ran out of memory in memory space . " +
	"Failed to allocate request for 1x OOM when allocating tensor with shape[1 failed to allocate memory Allocator (x) ran out of memory " +
	"CUDA_ERROR_OUT_OF_MEMORY No available memory for a cache blocks The model's max seq len (1) is larger than the maximum number of tokens that can be stored in KV cache (x " +
	"To serve at least one request with the model's max seq len (x) Free memory on device (1/2 GiB) on startup is less NCCL WARN\n"

// vllmSettings states every vLLM setting triage reads from a log, in each
// form (argument dict, key=value, flag, table row, KV cache lines).
const vllmSettings = "non-default args: {'model': 'Qwen2-7B-Instruct', 'max_model_len': 16384} --max-model-len 4096 --model x " +
	"gpu_memory_utilization=0.9 tensor_parallel_size 2 quantization=fp8 kv_cache_dtype=fp8 max_num_seqs=8 max_num_batched_tokens=8 " +
	"block_size 16 total_gpu_memory (79.2GiB) max_seq_len=1 vllm serve m kv_cache_size=1.0GiB # GPU blocks: 1 " +
	"Available KV cache memory: 1 GiB GPU KV cache size: 1,000 tokens\n"

// repeatTo repeats unit to about n bytes.
func repeatTo(unit string, n int) string {
	return strings.Repeat(unit, max(1, n/len(unit)))
}
