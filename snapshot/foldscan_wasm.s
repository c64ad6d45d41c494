#include "textflag.h"
#include "foldscan_wasm.h"

// func foldScan(dl []byte, p int, fm []uint64, buf *[foldMax]FrameID, seed uint64) (q, n int, fs folded, miss int)
//
// foldScanGo in WebAssembly, whole: its setup, foldRefsGo's loop
// (FOLDLOOP, two references a round) and its end, with no Go call between
// them. Locals as FOLDLOOP says (foldscan_wasm.h); few, so that V8 keeps
// the loop's in registers.
TEXT ·foldScan(SB), NOSPLIT, $0-120
	I64Load dl_base+0(FP)
	I64Load dl_len+8(FP)
	I64Add
	I64Const $5
	I64Sub
	Set R1
	I64Load dl_base+0(FP)
	I64Load p+24(FP)
	I64Add
	Set R2
	I64Load fm_base+32(FP)
	Set R3
	I64Load fm_len+40(FP)
	I64Const $1
	I64Sub
	Set R4
	// No table: noFrames (one entry, no frame). A table not a power of
	// two long: a trap (foldScanGo panics).
	I64Load fm_len+40(FP)
	I64Eqz
	If
		MOVD $·noFrames(SB), R3
		I64Const $0
		Set R4
	Else
		I64Load fm_len+40(FP)
		Get R4
		I64And
		I64Eqz
		I32Eqz
		If
			Unreachable
		End
	End
	I64Load buf+56(FP)
	Set R5
	I64Const $0
	Set R6
	I64Const $0
	Set R7
	I64Const $-281474976710656 // 0xffff<<48: rank 0xffff, place 0
	Set R8
	I64Load seed+64(FP)
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
	I64Store32 fs_all+88(FP)
	Get SP
	Get R10
	I64Store32 fs_best+92(FP)
	Get SP
	Get R11
	I64Store32 fs_site+96(FP)
	Get SP
	Get R9
	I64Store fs_h+104(FP)
	Get SP
	Get R2
	I64Load dl_base+0(FP)
	I64Sub
	I64Store q+72(FP)
	Get SP
	Get R6
	I64Store n+80(FP)
	Get SP
	Get R13
	I64Store miss+112(FP)
	RET
