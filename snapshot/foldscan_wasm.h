// FOLDLOOP is foldScanGo's loop (foldRefsGo's) in WebAssembly, two
// references a round (FOLDREF twice: one stack guard, one jump back and
// V8's moves of the loop's values for two), for foldscan_wasm.s and
// foldlazy_wasm.s. Locals: R1 the address of dl[len(dl)-5] (the last place
// a reference is read from), R2 the address of dl[p], R3 fm's base, R4
// len(fm)-1 (the mask), R5 buf, R6 n, R7 the OR of the fm entries (of the
// fold words in its top 32 bits: the end shifts it down), R8 the least rank
// and the place of its first frame packed (rank<<48 | place), R9 the hash,
// R13 the stop (miss), all set before it; R10 the memo id, R11 its fm
// entry, R12 the opcode, then long, then the frame ID. It ends with R2 at
// the stop, R6 to R9 and R13 the result.
#define FOLDLOOP \
	Block; \
	Loop; \
	FOLDREF; \
	FOLDREF; \
	Br $0; \
	End; \
	End

// FOLDREF reads one reference of the list, as a round of foldRefsGo: its
// steps, with each stop a Br $2 out of FOLDLOOP's loop:
//   p+5 > len(dl): stop (scanOther).
//   c := dl[p]; not BINGET or LONG_BINGET: stop, scanEnd at APPENDS.
//   long := c>>1&1; id := the 4 bytes after c & (0xff | -long).
//   e := fm[id&mask]; no frame there or id > mask: stop at id.
//   n == foldMax: stop (scanFull).
//   p += 2 + 3*long
//   f := uint32(e) - 1; ids[n] = f
//   all |= e (whole: the end takes its top 32 bits)
//   r := (e's top 16 bits)<<48 | n; bp = min(bp, r)
//   h = rotl(h + f*xxP2, 31) * xxP1 (xxStep)
//   n++
#define FOLDREF \
	Get R2; Get R1; I64GtS; BrIf $1; \
	Get R2; I32WrapI64; I64Load8U $0; Tee R12; I64Const $2; I64Or; I64Const $0x6a; I64Ne; If; I64Const $-1; I64Const $-3; Get R12; I64Const $0x65; I64Eq; Select; Set R13; Br $2; End; \
	Get R2; I32WrapI64; I64Load32U $1; I64Const $0; Get R12; I64Const $1; I64ShrU; I64Const $1; I64And; Tee R12; I64Sub; I64Const $0xff; I64Or; I64And; Tee R10; \
	Get R4; I64And; I64Const $3; I64Shl; Get R3; I64Add; I32WrapI64; I64Load $0; Tee R11; I32WrapI64; I32Eqz; If; Get R10; Set R13; Br $2; End; Get R10; Get R4; I64GtU; If; Get R10; Set R13; Br $2; End; \
	Get R6; I64Const $4096; I64Eq; If; I64Const $-2; Set R13; Br $2; End; \
	Get R2; I64Const $2; I64Add; Get R12; I64Const $3; I64Mul; I64Add; Set R2; \
	Get R11; I64Const $1; I64Sub; I64Const $0xffffffff; I64And; Set R12; Get R5; Get R6; I64Const $2; I64Shl; I64Add; I32WrapI64; Get R12; I64Store32 $0; \
	Get R11; Get R7; I64Or; Set R7; \
	Get R11; I64Const $-281474976710656; I64And; Get R6; I64Or; Tee R11; Get R8; Get R11; Get R8; I64LtU; Select; Set R8; \
	Get R9; Get R12; I64Const $-4417276706812531889; I64Mul; I64Add; I64Const $31; I64Rotl; I64Const $-7046029288634856825; I64Mul; Set R9; \
	Get R6; I64Const $1; I64Add; Set R6

// FOLDRESULT turns FOLDLOOP's R7 and R8 into foldScan's folded fields, in
// locals for the caller to store: R7 all (the fold words' OR), R10 best
// (the least rank <<16; 0xffff0000 where no frame had a rank) and R11 site
// (the ID of the first frame of that rank; 0 where none had one).
#define FOLDRESULT \
	Get R7; \
	I64Const $32; \
	I64ShrU; \
	Set R7; \
	Get R8; \
	I64Const $32; \
	I64ShrU; \
	Tee R10; \
	I64Const $0xffff0000; \
	I64LtU; \
	If; \
	Get R5; \
	Get R8; \
	I64Const $4095 /* foldMax-1 */; \
	I64And; \
	I64Const $2; \
	I64Shl; \
	I64Add; \
	I32WrapI64; \
	I64Load32U $0; \
	Set R11; \
	Else; \
	I64Const $0xffff0000; \
	Set R10; \
	I64Const $0; \
	Set R11; \
	End
