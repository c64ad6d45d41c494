#include "go_asm.h"
#include "textflag.h"

// func releaseEntries(items []val, objs []obj, pages [][]uint32, memoLen int, free []int32, end int32) int
//
// releaseEntriesGo as one WebAssembly loop, each stop a branch of its own.
// Locals: R0 the item's address, R1 the end of items, R2 objs' base, R3
// objs' length, R4 pages' base, R5 pages' length, R6 memoLen, R7 the
// address of free's next place, R8 the end of free's room, R9 end (the
// row), R10 the item's object index, R11 the object's address, R12 its
// memo slot (then the slot in its page), R13 the page's index (then its
// header, then the slot's address).
TEXT ·releaseEntries(SB), NOSPLIT, $0-120
	I64Load items_base+0(FP)
	Tee R0
	I64Load items_len+8(FP)
	I64Const $val__size
	I64Mul
	I64Add
	Set R1
	I64Load objs_base+24(FP)
	Set R2
	I64Load objs_len+32(FP)
	Set R3
	I64Load pages_base+48(FP)
	Set R4
	I64Load pages_len+56(FP)
	Set R5
	I64Load memoLen+72(FP)
	Set R6
	I64Load free_base+80(FP)
	Tee R8
	I64Load free_len+88(FP)
	I64Const $2
	I64Shl
	I64Add
	Set R7
	Get R8
	I64Load free_cap+96(FP)
	I64Const $2
	I64Shl
	I64Add
	Set R8
	I64Load32S end+104(FP)
	Set R9

	Block
	Loop
		// No item or no room left, or a row of 2^28: stop.
		Get R0
		Get R1
		I64GeU
		BrIf $1
		Get R7
		Get R8
		I64GeU
		BrIf $1
		Get R9
		I64Const $0x10000000
		I64GeS
		BrIf $1

		// The item an object of objs (R10 its index).
		Get R0
		I32WrapI64
		I64Load8U $val_k
		I64Const $const_kObj
		I64Ne
		BrIf $1
		Get R0
		I32WrapI64
		I64Load $val_n
		Tee R10
		Get R3
		I64GeU
		BrIf $1

		// o := &objs[n]: an entry dict of row end.
		Get R2
		Get R10
		I64Const $obj__size
		I64Mul
		I64Add
		Tee R11
		I32WrapI64
		I64Load8U $obj_kind
		I64Const $const_oEntry
		I64Ne
		BrIf $1
		Get R11
		I32WrapI64
		I64Load32S $obj_idx
		Get R9
		I64Ne
		BrIf $1

		// m := o.memo in [0, memoLen) (unsigned: -1 and shared lie
		// above), its page in pages, its slot in the page.
		Get R11
		I32WrapI64
		I64Load32S $obj_memo
		Tee R12
		Get R6
		I64GeU
		BrIf $1
		Get R12
		I64Const $const_pageBits
		I64ShrU
		Tee R13
		Get R5
		I64GeU
		BrIf $1
		Get R4
		Get R13
		I64Const $24 // a slice header
		I64Mul
		I64Add
		Set R13
		Get R12
		I64Const $const_pageMask
		I64And
		Tee R12
		Get R13
		I32WrapI64
		I64Load $8 // the page's length
		I64GeU
		BrIf $1

		// The slot (R13 its address): a packed page's is memoPacked.
		Get R13
		I32WrapI64
		I64Load $0
		Get R12
		I64Const $2
		I64Shl
		I64Add
		Tee R13
		I32WrapI64
		I64Load32U $0
		I64Const $const_memoPacked
		I64Eq
		BrIf $1

		// The slot holds the row, the dict is shared, its index freed.
		Get R13
		I32WrapI64
		Get R9
		I64Const $4
		I64Shl
		I64Const $const_kRow
		I64Or
		I64Store32 $0
		Get R11
		I32WrapI64
		I64Const $const_shared
		I64Store32 $obj_memo
		Get R7
		I32WrapI64
		Get R10
		I64Store32 $0
		Get R7
		I64Const $4
		I64Add
		Set R7
		Get R9
		I64Const $1
		I64Add
		Set R9
		Get R0
		I64Const $val__size
		I64Add
		Set R0
		Br $0
	End
	End

	// The items released: (R0 - items' base) / val__size.
	Get SP
	Get R0
	I64Load items_base+0(FP)
	I64Sub
	I64Const $val__size
	I64DivU
	I64Store ret+112(FP)
	RET
