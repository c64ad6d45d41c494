//go:build wasm

package snapshot

// leadPairs is leadPairsGo written in WebAssembly (leadpairs_wasm.s), for
// the browser worker: in Go's WebAssembly code of entryRun the loop of
// ints cost about 200 x86 instructions an int, most of them V8 moving
// the function's values in and out of its stack frame at the dispatch
// every taken jump goes back through (see foldScan). Here it is a plain
// WebAssembly loop over a few locals.
//
//go:noescape
func leadPairs(v *vm, d []byte, p, limit, i int, l *entryLead) (q, j int, frames bool)
