// ADDLAZY(decline) is addLazyNewGo's body in WebAssembly, for
// addlazy_wasm.s and lazyend_wasm.s: R0 t, R12 h, R13 at, R14 key. Where
// it declines it runs decline, having changed nothing; else it adds the
// stack and leaves its ID in R1. It uses R1 to R8: R1 t.count, R2 the
// address of h's slot in recent, R3 that slot, R4 the address of the
// fold's slot in folds, R5 its si1, R6 the value PUT appends, R7 and R8
// PUT's.

// PUT(col, store, shift) appends R6 to the column (column[T]: its pages,
// [][]T, are its only field) at t+col, whose last page has room (t.count
// < t.roomTo): store is the page's store of a value, shift log2 of a
// value's size. R7 is the last page's header (base, len, cap: 24 bytes),
// R8 the page's length.
#define PUT(col, store, shift) \
	Get R0; I32WrapI64; I64Load $(col); Get R0; I32WrapI64; I64Load $(col+8); I64Const $24; I64Mul; I64Add; I64Const $24; I64Sub; Set R7; \
	Get R7; I32WrapI64; I64Load $8; Set R8; \
	Get R7; I32WrapI64; I64Load $0; Get R8; I64Const $shift; I64Shl; I64Add; I32WrapI64; Get R6; store $0; \
	Get R7; I32WrapI64; Get R8; I64Const $1; I64Add; I64Store $8

#define ADDLAZY(decline) \
	/* No recent or folds yet (addLazy makes folds for a new lazy stack, \
	   which sets lazyFrom), no room below roomTo. */ \
	Get R0; I32WrapI64; I64Load $(Stacks_recent+8); I64Eqz; \
	Get R0; I32WrapI64; I64Load $(Stacks_folds+8); I64Eqz; I32Or; \
	Get R0; I32WrapI64; I64Load $Stacks_count; Tee R1; \
	Get R0; I32WrapI64; I64Load $Stacks_roomTo; I64GeS; I32Or; \
	If; decline; End; \
	/* r := &t.recent[h>>(64-t.recentBits)]; a stack of h's low 32 bits \
	   there (maybe this one). */ \
	Get R0; I32WrapI64; I64Load $Stacks_recent; \
	Get R12; I64Const $64; Get R0; I32WrapI64; I64Load $Stacks_recentBits; I64Sub; I64ShrU; \
	I64Const $3; I64Shl; I64Add; Tee R2; \
	I32WrapI64; I64Load $0; Tee R3; I64Eqz; I32Eqz; \
	Get R3; I64Const $32; I64ShrU; Get R12; I64Const $0xffffffff; I64And; I64Eq; I32And; \
	If; decline; End; \
	/* fc := &t.folds[(key*fibonacci)>>(64-foldSumBits)]; empty, or \
	   another fold's. */ \
	Get R0; I32WrapI64; I64Load $Stacks_folds; \
	Get R14; I64Const $-7046029254386353131; I64Mul; \
	I64Const $(64-const_foldSumBits); I64ShrU; I64Const $foldSum__size; I64Mul; I64Add; Tee R4; \
	I32WrapI64; I64Load32U $foldSum_si1; Tee R5; I64Eqz; \
	Get R4; I32WrapI64; I64Load $foldSum_key; Get R14; I64Ne; I32Or; \
	If; decline; End; \
	/* The stack's place, summary index and hash. */ \
	Get R13; Set R6; \
	PUT(Stacks_at, I64Store, 3); \
	Get R5; I64Const $1; I64Sub; Set R6; \
	Get R0; I32WrapI64; I64Load8U $(Stacks_sum+sumColumn_isWide); I64Eqz; \
	If; \
		PUT(Stacks_sum+sumColumn_narrow, I64Store16, 1); \
	Else; \
		PUT(Stacks_sum+sumColumn_wide, I64Store32, 2); \
	End; \
	Get R12; Set R6; \
	PUT(Stacks_hashes, I64Store, 3); \
	/* t.count++; *r = h<<32 | id+1. */ \
	Get R0; I32WrapI64; Get R1; I64Const $1; I64Add; I64Store $Stacks_count; \
	Get R2; I32WrapI64; Get R12; I64Const $32; I64Shl; Get R1; I64Const $1; I64Add; I64Or; I64Store $0
