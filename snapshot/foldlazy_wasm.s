#include "go_asm.h"
#include "textflag.h"
#include "stackend_wasm.h"
#include "addlazy_wasm.h"
#include "foldscan_wasm.h"

// DECLINE returns end 0 (lazyFrames goes on from foldScan's results),
// having changed nothing.
#define DECLINE \
	Get SP; I64Const $0; I64Store end+104(FP); \
	RET

// UNTRIED returns miss m (scanUntried or scanNoBuf), every other result
// 0, having done nothing.
#define UNTRIED(m) \
	Get SP; I64Const $0; I64Store p+56(FP); \
	Get SP; I64Const $0; I64Store n+64(FP); \
	Get SP; I64Const $0; I64Store fs_all+72(FP); \
	Get SP; I64Const $0; I64Store fs_site+80(FP); \
	Get SP; I64Const $0; I64Store fs_h+88(FP); \
	Get SP; I64Const $(m); I64Store miss+96(FP); \
	Get SP; I64Const $0; I64Store end+104(FP); \
	RET

// ENTRYREADY is entryLazyReady (R11 v; uses R1 to R3), then foldBuf and
// Stacks.count (scanNoBuf: lazyFrames is to try).
#define ENTRYREADY \
	/* (cacheOff || stackCache == nil), fold, no pipe, lazyOK, \
	   !memoRewritten, held >= lazyAfter. */ \
	Get R11; I32WrapI64; I64Load8U $vm_cacheOff; I64Eqz; \
	Get R11; I32WrapI64; I64Load $vm_stackCache; I64Eqz; I32Eqz; I32And; \
	Get R11; I32WrapI64; I64Load $vm_fold; I64Eqz; I32Or; \
	Get R11; I32WrapI64; I64Load $vm_pipe; I64Eqz; I32Eqz; I32Or; \
	Get R11; I32WrapI64; I64Load8U $vm_lazyOK; I64Eqz; I32Or; \
	Get R11; I32WrapI64; I64Load8U $vm_memoRewritten; I64Eqz; I32Eqz; I32Or; \
	Get R11; I32WrapI64; I64Load $vm_snap; I32WrapI64; I64Load $(Snapshot_Stacks+Stacks_heldFrames); \
	Get R11; I32WrapI64; I64Load $vm_lazyAfter; I64LtS; I32Or; \
	/* q+3 < len(dl); memo.len()&1023 != 0. */ \
	I64Load q+32(FP); I64Const $3; I64Add; I64Load dl_len+16(FP); I64GeS; I32Or; \
	Get R11; I32WrapI64; I64Load $(vm_memo+memoTable_n); I64Const $1023; I64And; I64Eqz; I32Or; \
	If; UNTRIED(-4); End; \
	/* dl[q:q+3] is EMPTY_LIST MEMOIZE MARK. */ \
	I64Load dl_base+8(FP); I64Load q+32(FP); I64Add; I32WrapI64; I64Load32U $0; I64Const $0xffffff; I64And; \
	I64Const $(const_opEmptyList | const_opMemoize<<8 | const_opMark<<16); I64Ne; \
	If; UNTRIED(-4); End; \
	/* li: the last free object, or len(objs) (none at MaxInt32 or at \
	   a block's start); below 1<<28. */ \
	Get R11; I32WrapI64; I64Load $(vm_freeObjs+8); Tee R1; I64Eqz; \
	If; \
		Get R11; I32WrapI64; I64Load $(vm_objs+8); Tee R2; I64Const $0x7fffffff; I64GeS; \
		Get R2; I64Const $1023; I64And; I64Eqz; I32Or; \
		If; UNTRIED(-4); End; \
	Else; \
		Get R11; I32WrapI64; I64Load $vm_freeObjs; Get R1; I64Const $1; I64Sub; I64Const $2; I64Shl; I64Add; I32WrapI64; I64Load32S $0; Set R2; \
	End; \
	Get R2; I64Const $(1<<28); I64GeU; \
	If; UNTRIED(-4); End; \
	/* foldBuf, a StackID that packs: else lazyFrames. */ \
	Get R11; I32WrapI64; I64Load $vm_foldBuf; I64Eqz; \
	Get R11; I32WrapI64; I64Load $vm_snap; I32WrapI64; I64Load $(Snapshot_Stacks+Stacks_count); I64Const $(1<<27); I64GeS; I32Or; \
	If; UNTRIED(-5); End

// func foldLazy(v *vm, dl []byte, q, row int, entry bool) (p, n int, fs folded, miss, end int)
//
// foldLazyGo in WebAssembly: foldScan (its setup from v, FOLDLOOP,
// foldscan_wasm.h, and its end, as in foldscan_wasm.s), then, where it
// read the list to its APPENDS, lazyEndGo: every check first, then
// ADDLAZY (the body of addLazyNew, addlazy_wasm.h, whose own checks come
// before its writes), then the writes. One call where lazyFrames made
// two, and no Go code between them. Locals in foldScan's part as in
// foldscan_wasm.s; then R9 p, R10 n then the address of the row's stack,
// R11 v, R2 the stack's byte offset and R3 its size (until ADDLAZY), R15
// the memo's last page header, R0 and R12 to R14 ADDLAZY's t, h, at and
// key; ADDLAZY uses R1 to R8 and leaves the ID in R1.
TEXT ·foldLazy(SB), NOSPLIT, $0-112
	I64Load v+0(FP)
	Set R11

	// entry: entryLazyReady first, then foldBuf and the stack count.
	I64Load8U entry+48(FP)
	I64Eqz
	I32Eqz
	If
		ENTRYREADY
	End

	// foldScan(dl, q+3, v.frameMemo, v.foldBuf, v.snap.Stacks.seed64).
	I64Load dl_base+8(FP)
	I64Load dl_len+16(FP)
	I64Add
	I64Const $5
	I64Sub
	Set R1
	I64Load dl_base+8(FP)
	I64Load q+32(FP)
	I64Add
	I64Const $3
	I64Add
	Set R2
	Get R11
	I32WrapI64
	I64Load $vm_frameMemo
	Set R3
	Get R11
	I32WrapI64
	I64Load $(vm_frameMemo+8)
	Tee R4
	I64Const $1
	I64Sub
	Set R4
	// No table: noFrames (one entry, no frame). A table not a power of
	// two long: a trap (foldScanGo panics).
	Get R11
	I32WrapI64
	I64Load $(vm_frameMemo+8)
	I64Eqz
	If
		MOVD $·noFrames(SB), R3
		I64Const $0
		Set R4
	Else
		Get R11
		I32WrapI64
		I64Load $(vm_frameMemo+8)
		Get R4
		I64And
		I64Eqz
		I32Eqz
		If
			Unreachable
		End
	End
	Get R11
	I32WrapI64
	I64Load $vm_foldBuf
	Set R5
	I64Const $0
	Set R6
	I64Const $0
	Set R7
	I64Const $-281474976710656 // 0xffff<<48: rank 0xffff, place 0
	Set R8
	Get R11
	I32WrapI64
	I64Load $vm_snap
	I32WrapI64
	I64Load $(Snapshot_Stacks+Stacks_seed64)
	I64Const $2870177450012600261 // xxP5 (xxStart)
	I64Add
	Set R9
	I64Const $-3 // scanOther
	Set R13

	FOLDLOOP

	// foldScan's results (FOLDRESULT: the least rank and its first frame).
	FOLDRESULT
	Get SP
	Get R7
	I64Store32 fs_all+72(FP)
	Get SP
	Get R10
	I64Store32 fs_best+76(FP)
	Get SP
	Get R11
	I64Store32 fs_site+80(FP)
	Get SP
	Get R9
	I64Store fs_h+88(FP)
	Get SP
	Get R2
	I64Load dl_base+8(FP)
	I64Sub
	I64Store p+56(FP)
	Get SP
	Get R6
	I64Store n+64(FP)
	Get SP
	Get R13
	I64Store miss+96(FP)

	// Not read to the APPENDS: lazyFrames goes on.
	Get R13
	I64Const $-1 // scanEnd
	I64Ne
	If
		DECLINE
	End

	// lazyEndGo (FOLDLOOP used R11).
	I64Load v+0(FP)
	Set R11
	I64Load p+56(FP)
	Set R9
	I64Load n+64(FP)
	Set R10

	// No byte after the APPENDS, or no SETITEMS there.
	Get R9
	I64Const $1
	I64Add
	I64Load dl_len+16(FP)
	I64GeS
	If
		DECLINE
	End
	I64Load dl_base+8(FP)
	Get R9
	I64Add
	I32WrapI64
	I64Load8U $1
	I64Const $const_opSetItems
	I64Ne
	If
		DECLINE
	End

	// start := v.in.base+q, size := p+1-q; lazyFits (by unsigned
	// compares: start in [0, 2^36), size in [1, 2^15), n in [1, 2^12)),
	// a MARK to pop, the charge below the budget's floor.
	Get R11
	I32WrapI64
	I64Load $(vm_in+input_base)
	I64Load q+32(FP)
	I64Add
	Tee R2
	I64Const $(1<<const_lazyOffBits)
	I64GeU
	Get R9
	I64Const $1
	I64Add
	I64Load q+32(FP)
	I64Sub
	Tee R3
	I64Const $1
	I64Sub
	I64Const $((1<<const_lazySizeBits)-1)
	I64GeU
	I32Or
	Get R10
	I64Const $1
	I64Sub
	I64Const $((1<<const_lazyNBits)-1)
	I64GeU
	I32Or
	Get R11
	I32WrapI64
	I64Load $(vm_marks+8)
	I64Eqz
	I32Or
	Get R11
	I32WrapI64
	I64Load $(vm_budget+budget_spent)
	I64Const $const_stackRecBytes
	I64Add
	Get R11
	I32WrapI64
	I64Load $(vm_budget+budget_floor)
	I64GtS
	I32Or
	If
		DECLINE
	End

	// The memo's last page, with room (memo.c.room).
	Get R11
	I32WrapI64
	I64Load $(vm_memo+memoTable_c+8)
	Tee R15
	I64Eqz
	If
		DECLINE
	End
	Get R11
	I32WrapI64
	I64Load $(vm_memo+memoTable_c)
	Get R15
	I64Const $24
	I64Mul
	I64Add
	I64Const $24
	I64Sub
	Tee R15
	I32WrapI64
	I64Load $8
	Get R15
	I32WrapI64
	I64Load $16
	I64GeS
	If
		DECLINE
	End

	// h := xxEnd(fs.h, n).
	I64Load fs_h+88(FP)
	Get R10
	I64Const $2
	I64Shl
	I64Add
	Set R12
	Get R12
	Get R12
	I64Const $33
	I64ShrU
	I64Xor
	I64Const $-4417276706812531889 // xxP2
	I64Mul
	Set R12
	Get R12
	Get R12
	I64Const $29
	I64ShrU
	I64Xor
	I64Const $1609587929392839161 // xxP3
	I64Mul
	Set R12
	Get R12
	Get R12
	I64Const $32
	I64ShrU
	I64Xor
	Set R12

	// at := lazyAt(start, size, n); key := foldKey(flags, rank, site).
	Get R2
	I64Const $(const_lazyNBits+const_lazySizeBits)
	I64Shl
	Get R3
	I64Const $const_lazyNBits
	I64Shl
	I64Or
	Get R10
	I64Or
	I64Const $-9223372036854775808 // lazyFlag
	I64Or
	Set R13
	I64Load32U fs_all+72(FP)
	I64Const $0xffff
	I64And
	I64Const $48
	I64Shl
	I64Load32U fs_best+76(FP)
	I64Const $16
	I64ShrU
	I64Const $32
	I64Shl
	I64Or
	I64Load32U fs_site+80(FP)
	I64Or
	Set R14

	// The row's place in rows.stack: R10 (a row not there declines).
	Get R11
	I32WrapI64
	I64Load $vm_rows
	Set R4
	I64Load row+40(FP)
	I64Const $const_pageBits
	I64ShrU
	Tee R5
	Get R4
	I32WrapI64
	I64Load $(entryStore_stack+8)
	I64GeU
	If
		DECLINE
	End
	Get R4
	I32WrapI64
	I64Load $entryStore_stack
	Get R5
	I64Const $24
	I64Mul
	I64Add
	Tee R5
	I32WrapI64
	I64Load $8
	I64Load row+40(FP)
	I64Const $const_pageMask
	I64And
	Tee R6
	I64LeU
	If
		DECLINE
	End
	Get R5
	I32WrapI64
	I64Load $0
	Get R6
	I64Const $2
	I64Shl
	I64Add
	Set R10

	// The stack, or decline (nothing changed yet).
	Get R11
	I32WrapI64
	I64Load $vm_snap
	I64Const $Snapshot_Stacks
	I64Add
	Set R0
	ADDLAZY(DECLINE)

	// Charged; its memo slot pushed (id<<4 | kStackRef, memo.c.put,
	// memo.n++); the row's stack; the MARK popped; SETITEMS run.
	Get R11
	I32WrapI64
	Get R11
	I32WrapI64
	I64Load $(vm_budget+budget_spent)
	I64Const $const_stackRecBytes
	I64Add
	I64Store $(vm_budget+budget_spent)

	MEMOSTACK(R1)

	Get R10
	I32WrapI64
	Get R1
	I64Store32 $0

	POPMARK

	SETITEMSRUN

	Get SP
	Get R9
	I64Const $2
	I64Add
	I64Store end+104(FP)
	RET
