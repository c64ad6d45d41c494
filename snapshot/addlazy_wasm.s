#include "go_asm.h"
#include "textflag.h"
#include "addlazy_wasm.h"

// NOTHERE returns false (addLazy is to do it), having changed nothing.
#define NOTHERE \
	Get SP; I64Const $0; I64Store32 id+32(FP); \
	Get SP; I64Const $0; I64Store8 ok+36(FP); \
	RET

// func addLazyNew(t *Stacks, h, at, key uint64) (id StackID, ok bool)
//
// addLazyNewGo in WebAssembly: Go's code for it is a dispatch loop that
// V8 runs with its values in memory, about eight taken jumps a stack.
// The body is ADDLAZY (addlazy_wasm.h), which lazyEnd shares.
TEXT ·addLazyNew(SB), NOSPLIT, $0-37
	I64Load t+0(FP)
	Set R0
	I64Load h+8(FP)
	Set R12
	I64Load at+16(FP)
	Set R13
	I64Load key+24(FP)
	Set R14

	ADDLAZY(NOTHERE)

	Get SP
	Get R1
	I64Store32 id+32(FP)
	Get SP
	I64Const $1
	I64Store8 ok+36(FP)
	RET
