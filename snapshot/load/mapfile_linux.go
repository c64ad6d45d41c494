//go:build linux

package load

import (
	"os"
	"syscall"
)

// mapFile maps the first size bytes of the open file f read-only, for the
// decoders to read in place (snapshot.Options.Data): no read system call
// copies the file into buffers, and no read-ahead goroutine hands them
// over. done lets go of the pages of a stretch the decoders moved past
// (snapshot.Options.DataDone): the file's pages stay in the page cache,
// but no longer count in the process's resident memory. unmap ends the
// mapping. data is nil where the file cannot be mapped (it is then read).
// A file cut short while mapped faults (SIGBUS) where its pages are gone:
// the decoders report that as snapshot.ErrTruncated.
func mapFile(f *os.File, size int64) (data []byte, done func(from, to int64), unmap func()) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, nil
	}
	// Read once, front to back (from two places at once when split).
	_ = syscall.Madvise(b, syscall.MADV_SEQUENTIAL)
	page := int64(os.Getpagesize())
	done = func(from, to int64) {
		from, to = doneRange(from, to, page)
		if from < to {
			_ = syscall.Madvise(b[from:to], syscall.MADV_DONTNEED)
		}
	}
	return b, done, func() { _ = syscall.Munmap(b) }
}

// folioMax is the biggest page-cache folio (a huge page, 2 MiB): a fault
// on a page of a large folio may map the whole folio.
const folioMax = 2 << 20

// doneRange is the stretch of the mapping that done lets go for the bytes
// [from, to) the decoder moved past: the whole pages up to to, from the
// start of the folioMax block that holds from on. The pages before from
// in that block were let go by the stretch before, but where the file's
// page cache is in large folios (a file read back after its pages were
// reclaimed, or written with large folios) the fault that started this
// stretch mapped its folio whole, those pages included: without them, a
// 1 GiB file of 2 MiB folios kept ~250 MB of it mapped (resident) by the
// end. Letting a page go that a decoder still reads costs a minor fault.
func doneRange(from, to, page int64) (int64, int64) {
	return from / folioMax * folioMax, to / page * page
}
