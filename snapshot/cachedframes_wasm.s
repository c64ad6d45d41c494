#include "go_asm.h"
#include "textflag.h"
#include "stackend_wasm.h"
#include "ledhit_wasm.h"

// DECLINE returns end 0 (entryFrames goes on as before), having changed
// nothing.
#define DECLINE \
	Get SP; I64Const $0; I64Store end+56(FP); \
	RET

// ROWAT sets R10 to the address of the row's slot in rows.stack, or
// declines where the row is past its pages. Uses R4 to R6; R11 is v.
#define ROWAT \
	Get R11; I32WrapI64; I64Load $vm_rows; Set R4; \
	I64Load row+48(FP); I64Const $const_pageBits; I64ShrU; Tee R5; \
	Get R4; I32WrapI64; I64Load $(entryStore_stack+8); I64GeU; \
	If; DECLINE; End; \
	Get R4; I32WrapI64; I64Load $entryStore_stack; Get R5; I64Const $24; I64Mul; I64Add; Tee R5; \
	I32WrapI64; I64Load $8; I64Load row+48(FP); I64Const $const_pageMask; I64And; Tee R6; I64LeU; \
	If; DECLINE; End; \
	Get R5; I32WrapI64; I64Load $0; Get R6; I64Const $2; I64Shl; I64Add; Set R10

// MEMOPAGE sets R15 to the memo's last page header (its slice), or
// declines where there is none or it is full (memo.c.room). R11 is v.
#define MEMOPAGE \
	Get R11; I32WrapI64; I64Load $(vm_memo+memoTable_c+8); Tee R15; I64Eqz; \
	If; DECLINE; End; \
	Get R11; I32WrapI64; I64Load $(vm_memo+memoTable_c); Get R15; I64Const $24; I64Mul; I64Add; I64Const $24; I64Sub; Tee R15; \
	I32WrapI64; I64Load $8; Get R15; I32WrapI64; I64Load $16; I64GeS; \
	If; DECLINE; End

// func cachedFrames(v *vm, dl []byte, q, ns, row int) (end int)
//
// cachedFramesGo in WebAssembly: every check of the vm first (the row's
// place, the memo's last page and the object slot kept in argument slots
// meanwhile); then LEDFIND (ledhit_wasm.h, its locals:
// R0 the stackCache, R1 and R2 the rest after the MARK), the checks of
// the key found, and only then the stores: LEDNOTE, the counts, the
// object, the memo slot, the MARK popped, SETITEMS run, the row's stack.
// R11 is v outside LEDFIND.
TEXT ·cachedFrames(SB), NOSPLIT, $0-64
	I64Load v+0(FP)
	Set R11

	// The cache consulted (cacheLook), and not about to be turned off.
	Get R11
	I32WrapI64
	I64Load $vm_stackCache
	Tee R0
	I64Eqz
	Get R11
	I32WrapI64
	I64Load8U $vm_cacheOff
	I32WrapI64
	I32Or
	Get R11
	I32WrapI64
	I64Load8U $vm_memoRewritten
	I32WrapI64
	I32Or
	Get R11
	I32WrapI64
	I64Load $vm_cacheLooks
	Tee R1
	I64Const $const_stackCacheMax
	I64GtS
	Get R11
	I32WrapI64
	I64Load $vm_cacheHits
	Get R1
	I64Const $2 // stackCacheMiss is 4
	I64ShrS
	I64LtS
	I32And
	I32Or
	If
		DECLINE
	End

	// q+3 < len(dl), dl[q:q+3] is EMPTY_LIST MEMOIZE MARK.
	I64Load q+32(FP)
	I64Const $3
	I64Add
	I64Load dl_len+16(FP)
	I64GeS
	If
		DECLINE
	End
	I64Load dl_base+8(FP)
	I64Load q+32(FP)
	I64Add
	I32WrapI64
	I64Load32U $0
	I64Const $0xffffff
	I64And
	I64Const $(const_opEmptyList | const_opMemoize<<8 | const_opMark<<16)
	I64Ne
	If
		DECLINE
	End

	// memo.len()&1023 != 0, its last page with room; the entry's MARK on
	// top, at ns; the row in the rows' pages.
	Get R11
	I32WrapI64
	I64Load $(vm_memo+memoTable_n)
	I64Const $1023
	I64And
	I64Eqz
	If
		DECLINE
	End
	MEMOPAGE
	Get R11
	I32WrapI64
	I64Load $(vm_marks+8)
	Tee R1
	I64Eqz
	If
		DECLINE
	End
	Get R11
	I32WrapI64
	I64Load $vm_marks
	Get R1
	I64Const $3
	I64Shl
	I64Add
	I64Const $8
	I64Sub
	I32WrapI64
	I64Load $0
	I64Load ns+40(FP)
	I64Ne
	If
		DECLINE
	End
	ROWAT
	// The memo's last page and the row's place, kept in ns's and dl's cap
	// slots (neither read again) for the stores.
	Get SP
	Get R15
	I64Store ns+40(FP)
	Get SP
	Get R10
	I64Store dl_cap+24(FP)

	// The object slot oi (kept in end): the last free one, else
	// len(objs) (none at MaxInt32 or at a block's start); appended to
	// objs (and freeObjs) only with room in both; below 1<<28.
	Get R11
	I32WrapI64
	I64Load $(vm_freeObjs+8)
	Tee R1
	I64Eqz
	If
		Get R11
		I32WrapI64
		I64Load $(vm_objs+8)
		Tee R2
		I64Const $0x7fffffff
		I64GeS
		Get R2
		I64Const $1023
		I64And
		I64Eqz
		I32Or
		If
			DECLINE
		End
	Else
		Get R11
		I32WrapI64
		I64Load $vm_freeObjs
		Get R1
		I64Const $1
		I64Sub
		I64Const $2
		I64Shl
		I64Add
		I32WrapI64
		I64Load32S $0
		Set R2
	End
	Get R2
	Get R11
	I32WrapI64
	I64Load $(vm_objs+8)
	I64GeS
	If
		Get R11
		I32WrapI64
		I64Load $(vm_objs+8)
		Get R11
		I32WrapI64
		I64Load $(vm_objs+16)
		I64Eq
		Get R1
		Get R11
		I32WrapI64
		I64Load $(vm_freeObjs+16)
		I64Eq
		I32Or
		If
			DECLINE
		End
	End
	Get R2
	I64Const $(1<<28)
	I64GeU
	If
		DECLINE
	End
	Get SP
	Get R2
	I64Store end+56(FP)

	// The key: LEDFIND over dl[q+3:].
	I64Load dl_base+8(FP)
	I64Load q+32(FP)
	I64Add
	I64Const $3
	I64Add
	Set R1
	I64Load dl_len+16(FP)
	I64Load q+32(FP)
	I64Sub
	I64Const $3
	I64Sub
	Set R2
	LEDFIND

	// None found: end -1 (ledHit would find none either).
	Get R3
	I64Const $0
	I64LtS
	If
		Get SP
		I64Const $-1
		I64Store end+56(FP)
		RET
	End

	// SETITEMS after its APPENDS, a stack ID that packs, a note that does
	// not make c.next; R7 the stack.
	Get R10
	I64Const $1
	I64Add
	Get R2
	I64GeS
	If
		DECLINE
	End
	Get R1
	Get R10
	I64Add
	I32WrapI64
	I64Load8U $1
	I64Const $const_opSetItems
	I64Ne
	If
		DECLINE
	End
	Get R0
	I32WrapI64
	I64Load $stackCache_ids
	Get R3
	I64Const $2
	I64Shl
	I64Add
	I32WrapI64
	I64Load32U $0
	Tee R7
	I64Const $(1<<28)
	I64GeU
	NONEXT
	I32Or
	If
		DECLINE
	End

	// The stores: the note, the counts.
	LEDNOTE
	I64Load v+0(FP)
	Set R11
	Get R11
	I32WrapI64
	Get R11
	I32WrapI64
	I64Load $vm_cacheLooks
	I64Const $1
	I64Add
	I64Store $vm_cacheLooks
	Get R11
	I32WrapI64
	Get R11
	I32WrapI64
	I64Load $vm_cacheHits
	I64Const $1
	I64Add
	I64Store $vm_cacheHits

	// The object: objs[oi] (it stays free), or appended to objs and its
	// index to freeObjs; R8 its address.
	I64Load end+56(FP)
	Tee R2
	Get R11
	I32WrapI64
	I64Load $(vm_objs+8)
	Tee R1
	I64LtS
	If
		Get R11
		I32WrapI64
		I64Load $vm_objs
		Get R2
		I64Const $obj__size
		I64Mul
		I64Add
		Set R8
	Else
		Get R11
		I32WrapI64
		I64Load $vm_objs
		Get R1
		I64Const $obj__size
		I64Mul
		I64Add
		Set R8
		Get R11
		I32WrapI64
		Get R1
		I64Const $1
		I64Add
		I64Store $(vm_objs+8)
		Get R11
		I32WrapI64
		I64Load $vm_freeObjs
		Get R11
		I32WrapI64
		I64Load $(vm_freeObjs+8)
		Tee R1
		I64Const $2
		I64Shl
		I64Add
		I32WrapI64
		Get R2
		I64Store32 $0
		Get R11
		I32WrapI64
		Get R1
		I64Const $1
		I64Add
		I64Store $(vm_freeObjs+8)
	End
	Get R8
	I32WrapI64
	Get R7
	I64Store32 $obj_idx
	Get R8
	I32WrapI64
	I64Const $const_oStack
	I64Store8 $obj_kind
	Get R8
	I32WrapI64
	I64Const $const_shared
	I64Store32 $obj_memo

	// Its memo slot: id<<4 | kStackRef on the last page (memo.c.put),
	// memo.n++.
	I64Load ns+40(FP)
	Set R15
	MEMOSTACK(R7)

	// The MARK popped; SETITEMS run (R9: the APPENDS, q+3+n).
	POPMARK
	I64Load q+32(FP)
	I64Const $3
	I64Add
	Get R10
	I64Add
	Set R9
	SETITEMSRUN

	// The row's stack.
	I64Load dl_cap+24(FP)
	Set R10
	Get R10
	I32WrapI64
	Get R7
	I64Store32 $0

	Get SP
	Get R9
	I64Const $2
	I64Add
	I64Store end+56(FP)
	RET
