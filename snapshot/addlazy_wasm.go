//go:build wasm

package snapshot

// addLazyNew is addLazyNewGo written in WebAssembly (addlazy_wasm.s), for
// the browser worker: a plain sequence with three exits, where Go's code
// is a dispatch loop whose every taken jump (about eight a stack) makes
// V8 move the function's values through its stack frame.
//
//go:noescape
func addLazyNew(t *Stacks, h, at, key uint64) (id StackID, ok bool)
