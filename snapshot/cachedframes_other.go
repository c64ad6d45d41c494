//go:build !wasm

package snapshot

// cachedFrames is cachedFramesGo natively (in WebAssembly it is in
// assembly).
func cachedFrames(v *vm, dl []byte, q, ns, row int) (end int) {
	return cachedFramesGo(v, dl, q, ns, row)
}
