//go:build !wasm

package snapshot

// addLazyNew is addLazyNewGo natively (in WebAssembly it is in assembly).
func addLazyNew(t *Stacks, h, at, key uint64) (StackID, bool) {
	return t.addLazyNewGo(h, at, key)
}
