//go:build wasm

package snapshot

// foldLazy is foldLazyGo written in WebAssembly (foldlazy_wasm.s), for
// the browser worker: foldScan and, after it, lazyEndGo as one straight
// sequence (with addLazyNew's body in it), where Go's code made two calls
// around its own checks, reloaded the vm's fields at every step and took
// a jump through its dispatch loop at every branch.
//
//go:noescape
func foldLazy(v *vm, dl []byte, q, row int, entry bool) (p, n int, fs folded, miss, end int)
