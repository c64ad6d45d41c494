//go:build wasm

package snapshot

// cachedFrames is cachedFramesGo written in WebAssembly
// (cachedframes_wasm.s), for the browser worker: entryFrames' common case
// on a file whose stacks repeat as one straight sequence, where Go's code
// made two calls (cacheLook, ledHit) around its checks and stores.
//
//go:noescape
func cachedFrames(v *vm, dl []byte, q, ns, row int) (end int)
