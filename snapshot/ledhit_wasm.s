#include "go_asm.h"
#include "textflag.h"
#include "ledhit_wasm.h"

// MISS returns -1, NoStack, having changed nothing.
#define MISS \
	Get SP; I64Const $-1; I64Store n+32(FP); \
	Get SP; I64Const $-1; I64Store32 id+40(FP); \
	RET

// func ledHit(c *stackCache, rest []byte) (n int, id StackID)
//
// ledHitGo in WebAssembly: LEDFIND, then LEDNOTE (ledhit_wasm.h, which
// has the locals).
TEXT ·ledHit(SB), NOSPLIT, $0-44
	I64Load c+0(FP)
	Set R0
	I64Load rest_base+8(FP)
	Set R1
	I64Load rest_len+16(FP)
	Set R2

	LEDFIND

	// None, or the note would make c.next (find makes it).
	Get R3
	I64Const $0
	I64LtS
	NONEXT
	I32Or
	If
		MISS
	End

	LEDNOTE
	Get SP
	Get R10
	I64Store n+32(FP)
	Get SP
	Get R0
	I32WrapI64
	I64Load $stackCache_ids
	Get R3
	I64Const $2
	I64Shl
	I64Add
	I32WrapI64
	I64Load32S $0
	I64Store32 id+40(FP)
	RET
