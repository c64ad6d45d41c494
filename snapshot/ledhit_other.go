//go:build !wasm

package snapshot

// ledHit is ledHitGo natively (in WebAssembly it is in assembly).
func ledHit(c *stackCache, rest []byte) (int, StackID) {
	return ledHitGo(c, rest)
}
