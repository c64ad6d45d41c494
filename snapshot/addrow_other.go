//go:build !wasm

package snapshot

// addRow appends a row of these values (no stack) and returns its index:
// addRowGo natively (in WebAssembly its common case is in assembly).
func (e *entryStore) addRow(action uint8, addr uint64, size, time int64, stream uint16) int {
	return addRowGo(e, action, addr, size, time, stream)
}
