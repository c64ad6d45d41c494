package snapshot

import (
	"fmt"
	"math"
)

// The memory budget. Every decode path (bytes, file, gzip, stdin, browser)
// charges what it builds against one limit: containers and memo slots while
// decoding, strings, trace entries (with what the analysis will take for
// them), blocks and segments every time a list of them is used (a list
// referenced many times through the memo is analysed that many times),
// stacks and generic values. A file that would need more is refused with
// ErrTooLarge instead of exhausting the machine.
const (
	// entryCost is what one trace entry costs: its columns plus a share of
	// the analysis (about one allocation record per two entries).
	entryCost = entryBytes + 32
	// DefaultBaseMemory and DefaultMemoryPerByte make the default limit:
	// DefaultBaseMemory + DefaultMemoryPerByte × input bytes (the
	// compressed bytes for gzip input).
	DefaultBaseMemory    = 100 << 20
	DefaultMemoryPerByte = 3
	// genItemBytes is what an item of a generic list or dict costs (a
	// 16-byte value, and the growth of its slice); valueBytes what one
	// generic Value costs once converted.
	genItemBytes = 24
	valueBytes   = 64
)

// budget is what is spent of the memory limit. A zero limit means the
// default, which grows with the input read so far when its size is
// unknown.
type budget struct {
	spent int64
	limit int64 // 0: the default
	// raw reports the input bytes read so far and the total (-1 unknown).
	raw func() (done, total int64)
	// floor is a limit charge found: the limit never falls (the input
	// read only grows), so spending up to it needs no new look.
	floor int64
}

// DefaultMemoryLimit is the default budget for an input of size bytes
// (-1: unknown; the limit then follows the bytes read).
func DefaultMemoryLimit(size int64) int64 {
	if size < 0 || size > (math.MaxInt64-DefaultBaseMemory)/DefaultMemoryPerByte {
		return math.MaxInt64
	}
	return DefaultBaseMemory + DefaultMemoryPerByte*size
}

// charge spends n bytes, or fails with ErrTooLarge past the limit. Below
// the limit found last it is a comparison (and inlined).
func (b *budget) charge(n int64, v *vm) error {
	b.spent += n
	if b.spent <= b.floor {
		return nil
	}
	return b.check(v)
}

// check is charge past floor: the limit now, and an error past it.
func (b *budget) check(v *vm) error {
	limit := b.limit
	if limit == 0 {
		done, total := int64(-1), int64(-1)
		if b.raw != nil {
			done, total = b.raw()
		}
		if total < 0 {
			total = done
		}
		limit = DefaultMemoryLimit(total)
	}
	b.floor = limit
	if b.spent <= limit {
		return nil
	}
	off := int64(-1)
	if v != nil {
		off = v.opOff
	}
	why := fmt.Sprintf("the limit is %s", mib(limit))
	if b.limit == 0 {
		why += fmt.Sprintf(": %d MiB plus %d× the file's size; shared references or a compressed file can make a small file "+
			"expand that much", DefaultBaseMemory>>20, DefaultMemoryPerByte)
	}
	return &DecodeError{Offset: off, Kind: ErrTooLarge, Msg: fmt.Sprintf("analysing it would take more than %s of memory (%s)",
		mib(b.spent), why)}
}

func mib(n int64) string { return fmt.Sprintf("%d MiB", (n+1<<20-1)>>20) }
