#include "go_asm.h"
#include "textflag.h"

// func leadPairs(v *vm, d []byte, p, limit, i int, l *entryLead) (q, j int, frames bool)
//
// leadPairsGo, as a plain WebAssembly loop. Locals: R0 d's base, R1 the
// address of d[p], R2 that of d[min(limit, len(d))-16] (the last place a
// pair is read from), R3 i, R4 v, R5 l, R7 intForms, R8 v plus the pair's
// key's place times entryKey__size (the key's fields are at vm_ekeys, the
// action's at vm_eacts, past it), R9 the key's code, R10 the int's
// opcode's address (r), R11 its form, R12 long, R13 its width, R14 the
// int, R15 the shift, then k.stream. Few values live in the loop
// (v.lastStream is read where it is used) and each stop is a branch of
// its own (V8 makes a value of a condition that is or-ed with another):
// V8 keeps most of them in registers.
TEXT ·leadPairs(SB), NOSPLIT, $0-81
	I64Load v+0(FP)
	Set R4
	I64Load d_base+8(FP)
	Set R0
	I64Load limit+40(FP)
	Tee R9
	I64Load d_len+16(FP)
	Tee R10
	Get R9
	Get R10
	I64LtS
	Select
	Get R0
	I64Add
	I64Const $16
	I64Sub
	Set R2
	Get R0
	I64Load p+32(FP)
	I64Add
	Set R1
	I64Load i+48(FP)
	Set R3
	I64Load l+56(FP)
	Set R5
	MOVD $·intForms(SB), R7

	// Pair 0: ekeys[0] (the action key), then the action noted in the
	// slot of its memo id's low bits.
	Get R3
	I64Eqz
	Get R1
	Get R2
	I64LeS
	I32And
	If
		Get R1
		I32WrapI64
		I64Load $0
		Get R4
		I32WrapI64
		I64Load $(vm_ekeys+entryKey_mask)
		I64And
		I64Const $-0x8000000000000000 // entryNoted
		I64Or
		Get R4
		I32WrapI64
		I64Load $(vm_ekeys+entryKey_enc)
		I64Eq
		If
			// r := p + ekeys[0].n; a := &eacts[d[r+1]&15]
			Get R1
			Get R4
			I32WrapI64
			I64Load8U $(vm_ekeys+entryKey_n)
			I64Add
			Tee R10
			I32WrapI64
			I64Load8U $1
			I64Const $15
			I64And
			I64Const $entryKey__size
			I64Mul
			Get R4
			I64Add
			Set R8
			Get R10
			I32WrapI64
			I64Load $0
			Get R8
			I32WrapI64
			I64Load $(vm_eacts+entryKey_mask)
			I64And
			I64Const $-0x8000000000000000 // entryNoted
			I64Or
			Get R8
			I32WrapI64
			I64Load $(vm_eacts+entryKey_enc)
			I64Eq
			If
				// l[keyAction] = a.code; p = r + a.n; i = 1
				Get R5
				I32WrapI64
				Get R8
				I32WrapI64
				I64Load8U $(vm_eacts+entryKey_code)
				I64Store $(const_keyAction*8)
				Get R10
				Get R8
				I32WrapI64
				I64Load8U $(vm_eacts+entryKey_n)
				I64Add
				Set R1
				I64Const $1
				Set R3
			End
		End
	End

	// The ints (none when pair 0 was not read).
	Block
	Get R3
	I64Eqz
	BrIf $0
	Loop
		// p+16 > limit: stop.
		Get R1
		Get R2
		I64GtS
		BrIf $1

		// k := &ekeys[i&7]; !k.matches(d, p) or k.code not an int's
		// (keyAddr to keyTimeUS): stop.
		Get R3
		I64Const $7
		I64And
		I64Const $entryKey__size
		I64Mul
		Get R4
		I64Add
		Tee R8
		I32WrapI64
		I64Load $(vm_ekeys+entryKey_mask)
		Get R1
		I32WrapI64
		I64Load $0
		I64And
		I64Const $-0x8000000000000000 // entryNoted
		I64Or
		Get R8
		I32WrapI64
		I64Load $(vm_ekeys+entryKey_enc)
		I64Ne
		BrIf $1
		Get R8
		I32WrapI64
		I64Load8U $(vm_ekeys+entryKey_code)
		Tee R9
		I64Const $const_keyAddr
		I64Sub
		I64Const $(const_keyTimeUS-const_keyAddr)
		I64GtU
		BrIf $1

		// r := p + k.n; f := intForms[d[r]]; long := f>>5&1
		Get R1
		Get R8
		I32WrapI64
		I64Load8U $(vm_ekeys+entryKey_n)
		I64Add
		Tee R10
		I32WrapI64
		I64Load8U $0
		Get R7
		I64Add
		I32WrapI64
		I64Load8U $0
		Tee R11
		I64Const $const_intLong1Bit
		I64ShrU
		I64Const $1
		I64And
		Set R12

		// w := f&intWidth + long*d[r+1]
		Get R11
		I64Const $const_intWidth
		I64And
		Get R12
		Get R10
		I32WrapI64
		I64Load8U $1
		I64Mul
		I64Add
		Set R13

		// sh := -8w (WebAssembly shifts by the count mod 64: (64-8w)&63);
		// u := the 8 bytes at r+1+long << sh; n := u>>sh, signed or not.
		Get R10
		Get R12
		I64Add
		I32WrapI64
		I64Load $1
		I64Const $0
		Get R13
		I64Const $3
		I64Shl
		I64Sub
		Tee R15
		I64Shl
		Tee R14
		Get R15
		I64ShrS
		Get R14
		Get R15
		I64ShrU
		Get R11
		I64Const $const_intSigned
		I64And
		I32WrapI64
		Select
		Tee R14

		// w-1 >= 8 (also: not an int) or (n^lastStream)&k.stream != 0: stop.
		Get R4
		I32WrapI64
		I64Load $vm_lastStream
		I64Xor
		Get R8
		I32WrapI64
		I64Load $(vm_ekeys+entryKey_stream)
		Tee R15
		I64And
		I64Const $0
		I64Ne
		BrIf $1
		Get R13
		I64Const $1
		I64Sub
		I64Const $8
		I64GeU
		BrIf $1

		// l[k.code] = n | k.stream
		Get R9
		I64Const $3
		I64Shl
		Get R5
		I64Add
		I32WrapI64
		Get R14
		Get R15
		I64Or
		I64Store $0

		// p = r + 1 + long + w; i++
		Get R10
		Get R12
		I64Add
		Get R13
		I64Add
		I64Const $1
		I64Add
		Set R1
		Get R3
		I64Const $1
		I64Add
		Set R3
		Br $0
	End
	End

	// frames: 0 < i < 8, p+16 <= limit, ekeys[i] the frames key and
	// matching.
	I64Const $0
	Set R9
	Get R3
	I64Const $1
	I64Sub
	I64Const $7
	I64LtU
	Get R1
	Get R2
	I64LeS
	I32And
	If
		Get R3
		I64Const $entryKey__size
		I64Mul
		Get R4
		I64Add
		Tee R8
		I32WrapI64
		I64Load8U $(vm_ekeys+entryKey_code)
		I64Const $const_keyFrames
		I64Eq
		Get R1
		I64Const $8
		I64Sub
		I32WrapI64
		I64Load $8
		Get R8
		I32WrapI64
		I64Load $(vm_ekeys+entryKey_mask)
		I64And
		I64Const $-0x8000000000000000 // entryNoted
		I64Or
		Get R8
		I32WrapI64
		I64Load $(vm_ekeys+entryKey_enc)
		I64Eq
		I32And
		I64ExtendI32U
		Set R9
	End

	Get SP
	Get R1
	Get R0
	I64Sub
	I64Store q+64(FP)
	Get SP
	Get R3
	I64Store j+72(FP)
	Get SP
	Get R9
	I64Store8 frames+80(FP)
	RET
