package analysis

import (
	"strconv"
	"strings"

	"oomscope/snapshot"
)

// Noise frames hidden from displayed stacks: the same lists as MemoryViz
// (docs/snapshot.md#stacks-shown), matched as substrings of the function name or the file name.
var (
	noiseNames = []string{"unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp", "_start",
		"__libc_start_main", "PyEval_", "PyObject_", "PyFunction_"}
	noiseFiles = []string{"core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c",
		"Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c", "cpython/abstract.h"}
)

// Frames that carry no information for a reader, hidden on top of the
// MemoryViz list: the caching allocator, dispatcher plumbing and the
// CPython interpreter's C frames.
var (
	plumbingPrefixes = []string{"c10::cuda::CUDACachingAllocator::", "c10::impl::", "at::detail::",
		"at::TensorBase at::detail::", "torch::unwind::", "c10::Dispatcher::"}
	plumbingContains  = []string{"::redispatch(", "wrap_kernel_functor", "boxed_kernel"}
	interpreterPrefix = []string{"_Py", "Py", "py", "cfunction_", "method_vectorcall", "slot_tp_", "slot_nb_",
		"vectorcall", "run_eval_code_obj", "run_mod", "__libc_", "_PyObject", "object_vacall", "call_function"}
)

// isPlumbing reports whether f is an allocator, dispatcher or CPython
// interpreter frame.
func isPlumbing(f *snapshot.Frame) bool {
	if isPython(f) {
		return false
	}
	for _, p := range plumbingPrefixes {
		if strings.HasPrefix(f.Name, p) {
			return true
		}
	}
	for _, c := range plumbingContains {
		if strings.Contains(f.Name, c) {
			return true
		}
	}
	if f.Filename == "??" || f.Filename == "" {
		for _, p := range interpreterPrefix {
			if strings.HasPrefix(f.Name, p) {
				return true
			}
		}
	}
	return false
}

// Library paths whose Python frames are not "user" frames when looking for
// an allocation site: torch itself and thin wrappers that only forward to it.
var libraryDirs = []string{"/torch/", "/functorch/", "/triton/", "/einops/", "/opt_einsum/"}

// isNoise reports whether f is an unwinder/interpreter frame viewers hide.
func isNoise(f *snapshot.Frame) bool {
	for _, n := range noiseNames {
		if strings.Contains(f.Name, n) {
			return true
		}
	}
	for _, n := range noiseFiles {
		if strings.Contains(f.Filename, n) {
			return true
		}
	}
	return false
}

// isPython reports whether f is a Python frame (as opposed to a C++ one).
func isPython(f *snapshot.Frame) bool {
	fn := f.Filename
	return strings.HasSuffix(fn, ".py") || (strings.HasPrefix(fn, "<") && fn != "<unknown>")
}

// isLibrary reports whether the Python frame f belongs to torch, a thin
// wrapper around it, or the Python standard library.
func isLibrary(f *snapshot.Frame) bool {
	fn := f.Filename
	if strings.HasPrefix(fn, "<frozen") || strings.HasPrefix(fn, "torch/") {
		return true
	}
	for _, d := range libraryDirs {
		if strings.Contains(fn, d) {
			return true
		}
	}
	if i := strings.Index(fn, "/lib/python"); i >= 0 {
		rest := fn[i:]
		return !strings.Contains(rest, "site-packages") && !strings.Contains(rest, "dist-packages")
	}
	return false
}

// isTorchPython reports whether f is a Python frame inside torch.
func isTorchPython(f *snapshot.Frame) bool {
	return isPython(f) && (strings.Contains(f.Filename, "/torch/") || strings.HasPrefix(f.Filename, "torch/"))
}

// shortFile keeps the last two path elements of a file name.
func shortFile(fn string) string {
	fn = strings.ReplaceAll(fn, "\\", "/")
	i := strings.LastIndexByte(fn, '/')
	if i <= 0 {
		return fn
	}
	j := strings.LastIndexByte(fn[:i], '/')
	return fn[j+1:]
}

// FormatFrame renders a frame for display: "file.py:123 name" for Python,
// the bare symbol for unsymbolized C++ ("??"), "symbol (file.cpp)" otherwise.
func FormatFrame(f *snapshot.Frame) string {
	switch {
	case isPython(f):
		return f.Filename + ":" + strconv.FormatInt(f.Line, 10) + " " + f.Name
	case f.Filename == "??" || f.Filename == "":
		return shortSymbol(f.Name)
	case f.Line > 0:
		return shortSymbol(f.Name) + " (" + f.Filename + ":" + strconv.FormatInt(f.Line, 10) + ")"
	}
	return shortSymbol(f.Name) + " (" + f.Filename + ")"
}

// shortSymbol drops the parameter list of a long C++ symbol.
func shortSymbol(s string) string {
	if len(s) <= 100 {
		return s
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '(' && i > 0 && !strings.HasPrefix(s[i:], "(anonymous namespace)") {
			return s[:i] + "(…)"
		}
	}
	return s[:100] + "…"
}

// maxStackLines caps a displayed stack.
const maxStackLines = 80

// DisplayStack renders a stack for display, innermost frame first: noise
// frames (docs/snapshot.md#stacks-shown) and allocator, dispatcher and interpreter plumbing
// removed, long C++ parameter lists cut, runs of identical lines collapsed to
// "<repeats N times>", at most 80 lines. An empty or missing stack yields
// nil; see NoStackExplanation.
func DisplayStack(s *snapshot.Snapshot, id snapshot.StackID) []string {
	st, err := s.Stacks.Frames(id)
	if err != nil {
		return []string{"(the stack could not be read again: " + err.Error() + ")"}
	}
	var out []string
	last, reps := "", 0
	flush := func() {
		if reps > 0 {
			out = append(out, "<repeats "+strconv.Itoa(reps)+" times>")
			reps = 0
		}
	}
	for _, fid := range st {
		if int(fid) < 0 || int(fid) >= len(s.Frames) {
			continue
		}
		f := &s.Frames[fid]
		if isNoise(f) || isPlumbing(f) {
			continue
		}
		line := FormatFrame(f)
		if line == last {
			reps++
			continue
		}
		flush()
		if len(out) >= maxStackLines {
			out = append(out, "…")
			return out
		}
		out = append(out, line)
		last = line
	}
	flush()
	return out
}

// NoStackExplanation says why an allocation can have no stack (MemoryViz's
// five reasons, docs/snapshot.md#stacks-shown).
const NoStackExplanation = "No stack was recorded. Either it was allocated before _record_memory_history() started, " +
	"the context/stacks settings excluded it, it was allocated in backward without C++ stacks (stacks=\"all\"), " +
	"it was rebuilt from the segment snapshot, or its entry was evicted from the ring buffer (max_entries)."

// phase is the program phase a stack points to.
type phase uint8

const (
	phaseUnknown phase = iota
	phaseInit
	phaseForward
	phaseBackward
	phaseOptimizer
)

// String names the phase.
func (p phase) String() string {
	return [...]string{"unknown", "init", "forward", "backward", "optimizer"}[p]
}

// Module-construction function names in torch/nn that allocate parameters.
var initNames = map[string]bool{"__init__": true, "reset_parameters": true, "_apply": true, "to": true,
	"cuda": true, "load_state_dict": true, "_load_from_state_dict": true, "to_empty": true, "half": true,
	"bfloat16": true, "float": true, "type": true, "register_parameter": true, "_init_weights": true}
