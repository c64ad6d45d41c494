//go:build wasm

package snapshot

// releaseEntries is releaseEntriesGo written in WebAssembly
// (release_wasm.s), for the browser worker: one plain loop over a few
// locals where Go's code goes back through its dispatch at every taken
// jump, with V8 moving its values through memory there.
//
//go:noescape
func releaseEntries(items []val, objs []obj, pages [][]uint32, memoLen int, free []int32, end int32) int
