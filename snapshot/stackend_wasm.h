// The end of a frame list that becomes the row's stack at once, as
// cachedFrames (cachedframes_wasm.s) and foldLazy (foldlazy_wasm.s) both
// run it: the list's memo slot holds the stack, the MARK is popped and the
// dict's SETITEMS is run. In each, R11 is the vm.

// MEMOSTACK(id) puts id<<4 | kStackRef in the memo's last page, whose
// slice header R15 holds (memo.c.put), and counts it (memo.n++).
#define MEMOSTACK(id) \
	Get R15; I32WrapI64; I64Load $0; Get R15; I32WrapI64; I64Load $8; I64Const $2; I64Shl; I64Add; I32WrapI64; \
	Get id; I64Const $4; I64Shl; I64Const $const_kStackRef; I64Or; I64Store32 $0; \
	Get R15; I32WrapI64; Get R15; I32WrapI64; I64Load $8; I64Const $1; I64Add; I64Store $8; \
	Get R11; I32WrapI64; Get R11; I32WrapI64; I64Load $(vm_memo+memoTable_n); I64Const $1; I64Add; I64Store $(vm_memo+memoTable_n)

// POPMARK pops the MARK: v.marks shortened by one.
#define POPMARK \
	Get R11; I32WrapI64; Get R11; I32WrapI64; I64Load $(vm_marks+8); I64Const $1; I64Sub; I64Store $(vm_marks+8)

// SETITEMSRUN records the SETITEMS after the APPENDS at R9 as run:
// v.op = SETITEMS, v.opOff = v.in.base+R9+1, v.in.pos = R9+2.
#define SETITEMSRUN \
	Get R11; I32WrapI64; I64Const $const_opSetItems; I64Store8 $vm_op; \
	Get R11; I32WrapI64; Get R11; I32WrapI64; I64Load $(vm_in+input_base); Get R9; I64Add; I64Const $1; I64Add; I64Store $vm_opOff; \
	Get R11; I32WrapI64; Get R9; I64Const $2; I64Add; I64Store $(vm_in+input_pos)
