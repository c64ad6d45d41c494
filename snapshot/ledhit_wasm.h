// The stack cache's ledHit in WebAssembly, for ledhit_wasm.s and
// cachedframes_wasm.s: LEDFIND, its search (ledFindGo), and LEDNOTE, its
// note of the key found (stackCache.ledNote). Locals: R0 the stackCache,
// R1 the rest's bytes, R2 its length, set before LEDFIND; it leaves R3
// the key found (-1: none), R10 its length, R4 and R5 c.last, R6 the
// address of c.next's entry for them (where both are keys and c.next is
// made), for LEDNOTE; it uses R7 to R15 (R7 the predicted key, then the
// slotted one; R9 and R10 a key's bytes and length, KEYAT; R8 and R11 SAME's;
// R12 the rest's first word, R13 the slots' mask, R14 the slot, R15
// SAME's result).

// SAME(from) sets R15 to 1 where the R10 bytes (R10 >= 8) at R1 (the
// rest) and R9 (the key) are the same from byte from on, else to 0: 32
// bytes a round while 32 are left (R8 and R15 their places), then four
// words that cover the rest of them: the last 32 bytes, or, of fewer
// than 32, the first 16 (the first 8 of fewer than 16) and the last 16
// (SAMEWORD each). Uses R8 and R11.
#define SAME(from) \
	I64Const $(from); Set R11; \
	Block; \
	Block; \
	Loop; \
	Get R11; I64Const $32; I64Add; Get R10; I64GtS; BrIf $1; \
	Get R1; Get R11; I64Add; Set R8; Get R9; Get R11; I64Add; Set R15; \
	Get R8; I32WrapI64; I64Load $0; Get R15; I32WrapI64; I64Load $0; I64Xor; \
	Get R8; I32WrapI64; I64Load $8; Get R15; I32WrapI64; I64Load $8; I64Xor; I64Or; \
	Get R8; I32WrapI64; I64Load $16; Get R15; I32WrapI64; I64Load $16; I64Xor; I64Or; \
	Get R8; I32WrapI64; I64Load $24; Get R15; I32WrapI64; I64Load $24; I64Xor; I64Or; \
	I64Eqz; I32Eqz; If; I64Const $0; Set R15; Br $3; End; \
	Get R11; I64Const $32; I64Add; Set R11; \
	Br $0; \
	End; \
	End; \
	/* n-32 (0 below 32), n-24 (below 32: 8, or n-8 below 16), n-16 (0 below 16), n-8 */ \
	Get R10; I64Const $32; I64Sub; I64Const $0; Get R10; I64Const $32; I64GeS; Select; Set R11; \
	SAMEWORD; \
	Get R10; I64Const $24; I64Sub; I64Const $8; Get R10; I64Const $8; I64Sub; Get R10; I64Const $16; I64GeS; Select; Get R10; I64Const $32; I64GeS; Select; Set R11; \
	SAMEWORD; I64Or; \
	Get R10; I64Const $16; I64Sub; I64Const $0; Get R10; I64Const $16; I64GeS; Select; Set R11; \
	SAMEWORD; I64Or; \
	Get R10; I64Const $8; I64Sub; Set R11; \
	SAMEWORD; I64Or; \
	I64Eqz; I64ExtendI32U; Set R15; \
	End

// SAMEWORD pushes the XOR of the words at R11 in the rest (R1) and the key
// (R9).
#define SAMEWORD \
	Get R1; Get R11; I64Add; I32WrapI64; I64Load $0; Get R9; Get R11; I64Add; I32WrapI64; I64Load $0; I64Xor

// KEYAT(i) sets R9 to key i's bytes and R10 to its length.
#define KEYAT(i) \
	Get R0; I32WrapI64; I64Load $stackCache_keys; Get i; I64Const $4; I64Shl; I64Add; Tee R9; \
	I32WrapI64; I64Load $8; Set R10; \
	Get R9; I32WrapI64; I64Load $0; Set R9

// ENDSAT: the byte after key R10 is in the rest (R2 its length) and is an
// APPENDS (an i32 on the stack, 1 if so).
#define ENDSAT \
	Get R10; Get R2; I64LtS; \
	If $1; Get R1; Get R10; I64Add; I32WrapI64; I64Load8U $0; I64Const $const_opAppends; I64Eq; Else; I32Const $0; End

// LEDFIND is ledFindGo: the key that followed c.last (predicted), whole,
// else the keys in slots whose first word is the rest's (lead), whole
// from byte 8 on; each one ended by an APPENDS in the rest (ENDSAT).
#define LEDFIND \
	I64Const $-1; \
	Set R3; \
	Block; \
	/* Too short: none. */ \
	Get R2; \
	I64Const $8; \
	I64LeS; \
	BrIf $0; \
	Get R0; \
	I32WrapI64; \
	I64Load32S $stackCache_last; \
	Set R4; \
	Get R0; \
	I32WrapI64; \
	I64Load32S $(stackCache_last+4); \
	Set R5; \
	/* predicted: c.next made and both keys of c.last (their OR is not negative). */ \
	Get R4; \
	Get R5; \
	I64Or; \
	I64Const $0; \
	I64GeS; \
	Get R0; \
	I32WrapI64; \
	I64Load $stackCache_next; \
	I64Eqz; \
	I32Eqz; \
	I32And; \
	If; \
		/* &c.next[nextSlot(c.last)] */ \
		Get R4; \
		I32WrapI64; \
		I32Const $-1640531535 /* 0x9E3779B1 */; \
		I32Mul; \
		Get R5; \
		I32WrapI64; \
		I32Const $-2048144777 /* 0x85EBCA77 */; \
		I32Mul; \
		I32Xor; \
		I32Const $20; \
		I32ShrU; \
		I64ExtendI32U; \
		I64Const $nextKey__size; \
		I64Mul; \
		Get R0; \
		I32WrapI64; \
		I64Load $stackCache_next; \
		I64Add; \
		Set R6; \
		/* e.after == c.last */ \
		Get R6; \
		I32WrapI64; \
		I64Load $nextKey_after; \
		Get R0; \
		I32WrapI64; \
		I64Load $stackCache_last; \
		I64Eq; \
		If; \
			Get R6; \
			I32WrapI64; \
			I64Load32S $nextKey_key; \
			Set R7; \
			KEYAT(R7); \
			Get R10; \
			I64Const $8; \
			I64GeS; \
			If; \
				ENDSAT; \
				If; \
					SAME(0); \
					Get R15; \
					I64Eqz; \
					I32Eqz; \
					If; \
						Get R7; \
						Set R3; \
					End; \
				End; \
			End; \
		End; \
	End; \
	/* lead: the keys in slots whose first word is the rest's. */ \
	Get R3; \
	I64Const $0; \
	I64LtS; \
	Get R0; \
	I32WrapI64; \
	I64Load $stackCache_led; \
	I64Const $0; \
	I64GtS; \
	I32And; \
	If; \
		Get R1; \
		I32WrapI64; \
		I64Load $0; \
		Set R12; \
		Get R0; \
		I32WrapI64; \
		I64Load $(stackCache_slots+8); \
		I64Const $1; \
		I64Sub; \
		Set R13; \
		/* slotOf(w) & mask */ \
		Get R12; \
		I64Const $-7046029254386353131 /* 0x9E3779B97F4A7C15 */; \
		I64Mul; \
		I64Const $32; \
		I64ShrU; \
		Get R13; \
		I64And; \
		Set R14; \
		Block; \
		Loop; \
			/* j := c.slots[s]-1 (R7); none: a miss. */ \
			Get R0; \
			I32WrapI64; \
			I64Load $stackCache_slots; \
			Get R14; \
			I64Const $2; \
			I64Shl; \
			I64Add; \
			I32WrapI64; \
			I64Load32S $0; \
			I64Const $1; \
			I64Sub; \
			Tee R7; \
			I64Const $0; \
			I64LtS; \
			BrIf $1; \
			/* c.words[j] == w, then the key whole from byte 8 on. */ \
			Get R0; \
			I32WrapI64; \
			I64Load $stackCache_words; \
			Get R7; \
			I64Const $3; \
			I64Shl; \
			I64Add; \
			I32WrapI64; \
			I64Load $0; \
			Get R12; \
			I64Eq; \
			If; \
				KEYAT(R7); \
				ENDSAT; \
				If; \
					SAME(8); \
					Get R15; \
					I64Eqz; \
					I32Eqz; \
					If; \
						Get R7; \
						Set R3; \
						Br $4 /* out of the Block */; \
					End; \
				End; \
			End; \
			Get R14; \
			I64Const $1; \
			I64Add; \
			Get R13; \
			I64And; \
			Set R14; \
			Br $0; \
		End; \
		End; \
	End; \
	End

// NONEXT pushes whether the note of a key found would make c.next (an
// i32): then ledHit declines, for find to make it.
#define NONEXT \
	Get R4; Get R5; I64Or; I64Const $0; I64GeS; \
	Get R0; I32WrapI64; I64Load $stackCache_next; I64Eqz; \
	I32And

// LEDNOTE is stackCache.ledNote for key R3 (NONEXT false): c.next's
// entry for c.last (where both are keys), then c.last.
#define LEDNOTE \
	Get R4; Get R5; I64Or; I64Const $0; I64GeS; \
	If; \
		Get R6; I32WrapI64; Get R0; I32WrapI64; I64Load $stackCache_last; I64Store $nextKey_after; \
		Get R6; I32WrapI64; Get R3; I64Store32 $nextKey_key; \
	End; \
	Get R0; I32WrapI64; Get R5; I64Store32 $stackCache_last; \
	Get R0; I32WrapI64; Get R3; I64Store32 $(stackCache_last+4)
