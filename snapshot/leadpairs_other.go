//go:build !wasm

package snapshot

// leadPairs is leadPairsGo natively (in WebAssembly it is in assembly).
func leadPairs(v *vm, d []byte, p, limit, i int, l *entryLead) (int, int, bool) {
	return leadPairsGo(v, d, p, limit, i, l)
}
