//go:build wasm

package snapshot

import "unsafe"

// addRow appends a row of these values (no stack) and returns its index:
// addRowAsm, which this call inlines to (the decoder's entryRun calls it
// directly).
func (e *entryStore) addRow(action uint8, addr uint64, size, time int64, stream uint16) int {
	return addRowAsm(e, action, addr, size, time, stream)
}

// addRowAsm is addRowGo with its common case written in WebAssembly
// (addrow_wasm.s): a row below roomTo whose addr, size and time each go
// to their column's last page as putWide or narrow's fit would put them
// and whose stream is 0 or goes to a page of its own, put in one plain
// sequence; any other row it passes to addRowGo, a call at the end of the
// function. Go's code for the common case took several jumps back
// through its function's dispatch and kept its values in memory.
//
//go:noescape
func addRowAsm(e *entryStore, action uint8, addr uint64, size, time int64, stream uint16) int

// The layout of a narrow page, for addrow_wasm.s (go_asm.h has no
// offsets of a generic type's fields): the same for both columns' types.
const (
	narrowPageSize  = unsafe.Sizeof(narrowPage[uint64]{})
	narrowPageBase  = unsafe.Offsetof(narrowPage[uint64]{}.base)
	narrowPageShift = unsafe.Offsetof(narrowPage[uint64]{}.shift)
	narrowPageD     = unsafe.Offsetof(narrowPage[uint64]{}.d)
	narrowPageW     = unsafe.Offsetof(narrowPage[uint64]{}.w)
	narrowPageEarly = unsafe.Offsetof(narrowPage[uint64]{}.early)
)

// Compile-time checks that narrowPage[int64] is laid out the same.
var (
	_ [narrowPageSize - unsafe.Sizeof(narrowPage[int64]{})]struct{}
	_ [unsafe.Sizeof(narrowPage[int64]{}) - narrowPageSize]struct{}
	_ [narrowPageW - unsafe.Offsetof(narrowPage[int64]{}.w)]struct{}
	_ [unsafe.Offsetof(narrowPage[int64]{}.w) - narrowPageW]struct{}
)
