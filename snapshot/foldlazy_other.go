//go:build !wasm

package snapshot

// foldLazy is foldLazyGo natively (in WebAssembly it is in assembly).
func foldLazy(v *vm, dl []byte, q, row int, entry bool) (p, n int, fs folded, miss, end int) {
	return foldLazyGo(v, dl, q, row, entry)
}
