//go:build !wasm

package snapshot

// foldScan is foldScanGo natively (in WebAssembly it is in assembly).
func foldScan(dl []byte, p int, fm []uint64, buf *[foldMax]FrameID, seed uint64) (int, int, folded, int) {
	return foldScanGo(dl, p, fm, buf, seed)
}
