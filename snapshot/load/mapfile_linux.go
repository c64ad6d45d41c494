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
		from = (from + page - 1) / page * page // whole pages within
		to = to / page * page
		if from < to {
			_ = syscall.Madvise(b[from:to], syscall.MADV_DONTNEED)
		}
	}
	return b, done, func() { _ = syscall.Munmap(b) }
}
