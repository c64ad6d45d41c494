//go:build wasm

package snapshot

// ledHit is ledHitGo written in WebAssembly (ledhit_wasm.s), for the
// browser worker: on a file whose stacks repeat nearly every entry's
// frame list is found by it, and Go's code spent most of its time there
// comparing the key 8 bytes a round, each round a jump back through the
// function's dispatch loop with V8 moving its values around it.
//
//go:noescape
func ledHit(c *stackCache, rest []byte) (n int, id StackID)
