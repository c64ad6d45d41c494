//go:build !unix

package load

import "os"

// mapFile maps nothing where there is no mmap (a browser, Windows): the
// file is read.
func mapFile(f *os.File, size int64) (data []byte, done func(from, to int64), unmap func()) {
	return nil, nil, nil
}
