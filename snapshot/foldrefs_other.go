//go:build !wasm

package snapshot

// foldRefs is foldRefsGo natively (in WebAssembly it is in assembly).
func foldRefs(dl []byte, p int, fm []uint64, ids *[foldMax]FrameID, n int, a *foldAcc) (int, int, int) {
	return foldRefsGo(dl, p, fm, ids, n, a)
}
