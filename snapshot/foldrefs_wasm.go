//go:build wasm

package snapshot

// foldRefs is foldRefsGo written in WebAssembly (foldrefs_wasm.s), for
// the browser worker: Go's WebAssembly code for a function is one loop
// whose every taken jump goes back through a dispatch on a block number,
// and V8 then keeps most of the loop's values in its stack frame, moving
// them in and out at every jump (about 130 x86 instructions a frame in
// foldRefsGo's loop). Here the loop is a plain WebAssembly loop over
// fourteen locals, most of which V8 keeps in registers (about 67).
//
//go:noescape
func foldRefs(dl []byte, p int, fm []uint64, ids *[foldMax]FrameID, n int, a *foldAcc) (q, m, miss int)
