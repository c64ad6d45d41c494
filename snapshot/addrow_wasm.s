#include "go_asm.h"
#include "funcdata.h"
#include "textflag.h"

// LAST(col, size) pushes the address of the last page of the column at
// e+col (R0 is e; its pages, a slice of size-byte pages, are its first
// field).
#define LAST(col, size) \
	Get R0; I32WrapI64; I64Load $(col); \
	Get R0; I32WrapI64; I64Load $(col+8); I64Const $1; I64Sub; I64Const $(size); I64Mul; I64Add

// APPEND(hdr, store, shift) appends R15 to the slice whose header is at
// hdr, which has room: store is the store of a value, shift log2 of a
// value's size. R14 is the slice's length.
#define APPEND(hdr, store, shift) \
	Get hdr; I32WrapI64; I64Load $8; Set R14; \
	Get hdr; I32WrapI64; I64Load $0; Get R14; I64Const $(shift); I64Shl; I64Add; I32WrapI64; Get R15; store $0; \
	Get hdr; I32WrapI64; Get R14; I64Const $1; I64Add; I64Store $8

// OFF sets R13 to R14 (a value) less the page's base and R12 to the
// page's shift (as narrowPage.narrow takes it), R10 the page.
#define OFF \
	Get R14; Get R10; I32WrapI64; I64Load $const_narrowPageBase; I64Sub; Set R13; \
	Get R10; I32WrapI64; I64Load $const_narrowPageShift; I64Const $63; I64And; Set R12

// FITS pushes whether R13 (a value less the page's base) shifted right by
// R12 (the page's shift), R11, is a narrow value of the page other than 0:
// no bit shifted out, R11 in [1, 2^32) (narrowPage.encode's test of a
// value other than 0, for any shift).
#define FITS \
	Get R11; Get R12; I64Shl; Get R13; I64Eq; \
	Get R11; I64Const $1; I64Sub; I64Const $0xffffffff; I64LtU; \
	I32And

// COL(col, v, hdr, len) writes the row's value v (an arg) of the narrow
// column at e+col at its place in the last page (past the page's length:
// not yet the page's), as addRowGo would put it: narrow in a narrow page
// (0 as 0), whole in a wide one (setting narrowPage.early as set does in
// the page's first narrowEarly rows), or branches out of the block it is
// in (to addRowGo: a value that widens the page, or a page's shift over
// 32, which no kind has). hdr is set to the address of the page's slice
// header that is to grow, len to its length. Uses R10 (the page), R11 to
// R14 (R14 the value).
//
// In a narrow page the value's narrow value is v - base rotated right by
// the shift: a bit shifted out comes back at bit 32 or above (a shift of
// 32 or less), so the rotated value is a narrow value other than 0 if it
// is in [1, 2^32), one test.
#define COL(col, v, hdr, len) \
	LAST(col, const_narrowPageSize); Set R10; \
	I64Load v; Set R14; \
	Get R10; I32WrapI64; I64Load $(const_narrowPageW+16); I64Eqz; \
	If; \
		OFF; \
		Get R12; I64Const $32; I64GtU; BrIf $1; \
		Get R13; Get R12; I64Rotr; Tee R11; \
		I64Const $1; I64Sub; I64Const $0xffffffff; I64GeU; \
		If; \
			Get R14; I64Eqz; I32Eqz; BrIf $2; \
			I64Const $0; Set R11; \
		End; \
		Get R10; I64Const $const_narrowPageD; I64Add; Set hdr; \
		Get hdr; I32WrapI64; I64Load $8; Set len; \
		Get hdr; I32WrapI64; I64Load $0; Get len; I64Const $2; I64Shl; I64Add; I32WrapI64; Get R11; I64Store32 $0; \
	Else; \
		Get R10; I64Const $const_narrowPageW; I64Add; Set hdr; \
		Get hdr; I32WrapI64; I64Load $8; Set len; \
		Get hdr; I32WrapI64; I64Load $0; Get len; I64Const $3; I64Shl; I64Add; I32WrapI64; Get R14; I64Store $0; \
		Get len; I64Const $const_narrowEarly; I64LtS; \
		If; \
			Get R10; I32WrapI64; I64Load8U $const_narrowPageEarly; I64Eqz; \
			If; \
				OFF; \
				Get R13; Get R12; I64ShrU; Set R11; \
				Get R10; I32WrapI64; \
				Get R14; I64Eqz; FITS; I32Or; I32Eqz; I64ExtendI32U; \
				I64Store8 $const_narrowPageEarly; \
			End; \
		End; \
	End

// func addRowAsm(e *entryStore, action uint8, addr uint64, size, time int64, stream uint16) int
//
// addRowGo, its common case as one plain sequence: below roomTo (every
// column's last page has room), with addr, size and time each going to
// its column's page without widening it, and stream 0 or a page of the
// stream column that is not the shared page of zeros, it puts the row;
// for any other row it calls addRowGo, having changed nothing that is
// read (values past a page's length; narrowPage.early as addRowGo sets
// it). The frame is addRowGo's arguments and result. Locals: R0 e, R1
// e.n, R2 R3 R4 the addresses of the slice headers of addr, size and time
// that grow, R5 R6 R7 their lengths, R8 the address of the stream
// column's last page (its slice header), R9 stream; R10 to R15 COL's,
// then APPEND's.
TEXT ·addRowAsm(SB), NOSPLIT, $56-56
	NO_LOCAL_POINTERS
	Block
		I64Load e+0(FP)
		Set R0
		Get R0
		I32WrapI64
		I64Load $entryStore_n
		Tee R1
		Get R0
		I32WrapI64
		I64Load $entryStore_roomTo
		I64GeS
		BrIf $0

		// A stream other than 0 on the shared page of zeros
		// (streamColumn.shared: a page with room has memory).
		LAST(entryStore_stream, 24)
		Set R8
		I64Load16U stream+40(FP)
		Tee R9
		I64Eqz
		I32Eqz
		If
			Get R8
			I32WrapI64
			I64Load $0
			Get R0
			I32WrapI64
			I64Load $(entryStore_stream+streamColumn_zero)
			I64Eq
			BrIf $1
		End

		COL(entryStore_addr, addr+16(FP), R2, R5)
		COL(entryStore_size, size+24(FP), R3, R6)
		COL(entryStore_time, time+32(FP), R4, R7)

		// The row is the pages': their lengths grow.
		Get R2
		I32WrapI64
		Get R5
		I64Const $1
		I64Add
		I64Store $8
		Get R3
		I32WrapI64
		Get R6
		I64Const $1
		I64Add
		I64Store $8
		Get R4
		I32WrapI64
		Get R7
		I64Const $1
		I64Add
		I64Store $8
		I64Load8U action+8(FP)
		Set R15
		LAST(entryStore_action, 24)
		Set R13
		APPEND(R13, I64Store8, 0)
		Get R9
		Set R15
		APPEND(R8, I64Store16, 1)
		I64Const $const_NoStack
		Set R15
		LAST(entryStore_stack, 24)
		Set R13
		APPEND(R13, I64Store32, 2)

		// e.n++, and the row.
		Get R0
		I32WrapI64
		Get R1
		I64Const $1
		I64Add
		I64Store $entryStore_n
		Get SP
		Get R1
		I64Store ret+48(FP)
		RET
	End

	MOVD e+0(FP), 0(SP)
	MOVB action+8(FP), 8(SP)
	MOVD addr+16(FP), 16(SP)
	MOVD size+24(FP), 24(SP)
	MOVD time+32(FP), 32(SP)
	MOVH stream+40(FP), 40(SP)
	CALL ·addRowGo(SB)
	MOVD 48(SP), ret+48(FP)
	RET
