// FOLDLOOP is foldScanGo's loop (foldRefsGo's, one reference a round) in
// WebAssembly, for foldscan_wasm.s and foldlazy_wasm.s. Locals: R1 the
// address of dl[len(dl)-5] (the last place a reference is read from), R2
// the address of dl[p], R3 fm's base, R4 len(fm)-1 (the mask), R5 buf,
// R6 n, R7 the OR of the fold words, R8 the least rank and the place of
// its first frame packed (rank<<32 | place), R9 the hash, R13 the stop
// (miss), all set before it; R10 the memo id, R11 its fm entry, R12 the
// opcode, then long, then the frame ID. It ends with R2 at the stop, R6
// to R9 and R13 the result.
#define FOLDLOOP \
	Block; \
	Loop; \
	/* p+5 > len(dl): stop (scanOther). */ \
	Get R2; \
	Get R1; \
	I64GtS; \
	BrIf $1; \
	/* c := dl[p]; not BINGET or LONG_BINGET: stop, scanEnd at APPENDS. */ \
	Get R2; \
	I32WrapI64; \
	I64Load8U $0; \
	Tee R12; \
	I64Const $2; \
	I64Or; \
	I64Const $0x6a /* opLongBinGet */; \
	I64Ne; \
	If; \
	I64Const $-1 /* scanEnd */; \
	I64Const $-3 /* scanOther */; \
	Get R12; \
	I64Const $0x65 /* opAppends */; \
	I64Eq; \
	Select; \
	Set R13; \
	Br $2; \
	End; \
	/* long := c>>1&1; id := the 4 bytes after c & (0xff | -long). */ \
	Get R2; \
	I32WrapI64; \
	I64Load32U $1; \
	I64Const $0; \
	Get R12; \
	I64Const $1; \
	I64ShrU; \
	I64Const $1; \
	I64And; \
	Tee R12; \
	I64Sub; \
	I64Const $0xff; \
	I64Or; \
	I64And; \
	Tee R10; \
	/* e := fm[id&mask]; no frame there or id > mask: stop at id. */ \
	Get R4; \
	I64And; \
	I64Const $3; \
	I64Shl; \
	Get R3; \
	I64Add; \
	I32WrapI64; \
	I64Load $0; \
	Tee R11; \
	I32WrapI64; \
	I32Eqz; \
	Get R10; \
	Get R4; \
	I64GtU; \
	I32Or; \
	If; \
	Get R10; \
	Set R13; \
	Br $2; \
	End; \
	/* n == foldMax: stop (scanFull). */ \
	Get R6; \
	I64Const $4096; \
	I64Eq; \
	If; \
	I64Const $-2 /* scanFull */; \
	Set R13; \
	Br $2; \
	End; \
	/* p += 2 + 3*long */ \
	Get R2; \
	I64Const $2; \
	I64Add; \
	Get R12; \
	I64Const $3; \
	I64Mul; \
	I64Add; \
	Set R2; \
	/* f := uint32(e) - 1; ids[n] = f */ \
	Get R11; \
	I64Const $1; \
	I64Sub; \
	I64Const $0xffffffff; \
	I64And; \
	Set R12; \
	Get R5; \
	Get R6; \
	I64Const $2; \
	I64Shl; \
	I64Add; \
	I32WrapI64; \
	Get R12; \
	I64Store32 $0; \
	/* w := e>>32; all |= w */ \
	Get R11; \
	I64Const $32; \
	I64ShrU; \
	Tee R11; \
	Get R7; \
	I64Or; \
	Set R7; \
	/* r := (w&^0xffff)<<32 | n; bp = min(bp, r) */ \
	Get R11; \
	I64Const $0xffff0000; \
	I64And; \
	I64Const $32; \
	I64Shl; \
	Get R6; \
	I64Or; \
	Tee R11; \
	Get R8; \
	Get R11; \
	Get R8; \
	I64LtU; \
	Select; \
	Set R8; \
	/* h = rotl(h + f*xxP2, 31) * xxP1 (xxStep) */ \
	Get R9; \
	Get R12; \
	I64Const $-4417276706812531889; \
	I64Mul; \
	I64Add; \
	I64Const $31; \
	I64Rotl; \
	I64Const $-7046029288634856825; \
	I64Mul; \
	Set R9; \
	/* n++ */ \
	Get R6; \
	I64Const $1; \
	I64Add; \
	Set R6; \
	Br $0; \
	End; \
	End
