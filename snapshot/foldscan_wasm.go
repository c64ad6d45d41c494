//go:build wasm

package snapshot

// foldScan is foldScanGo written in WebAssembly (foldscan_wasm.s), for
// the browser worker: Go's WebAssembly code for a function is one loop
// whose every taken jump goes back through a dispatch on a block number,
// and V8 then keeps most of the loop's values in its stack frame, moving
// them in and out at every jump (about 130 x86 instructions a frame in
// foldRefsGo's loop). Here the loop is a plain WebAssembly loop over
// fourteen locals, most of which V8 keeps in registers (about 67), and
// the setup and end are in the same function (no Go call around the
// loop: about 190 instructions a list).
//
//go:noescape
func foldScan(dl []byte, p int, fm []uint64, buf *[foldMax]FrameID, seed uint64) (q, n int, fs folded, miss int)
