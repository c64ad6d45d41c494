//go:build linux

package load

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"oomscope/snapshot/gen"
)

// TestDoneRange: the stretch done lets go starts at the folioMax block that
// holds from (a multiple of folioMax, at most from, less than folioMax
// before it) and ends at the last whole page before to.
func TestDoneRange(t *testing.T) {
	const page = 4096
	for _, c := range [][2]int64{{0, 0}, {0, 4095}, {0, 4096}, {1, 5000}, {4096, 8192}, {folioMax - 1, folioMax + 3},
		{folioMax, 3 * folioMax}, {folioMax + 4096, 5 << 20}, {7<<20 + 12345, 11<<20 + 1}, {1 << 30, 1<<30 + 4<<20 + 77}} {
		from, to := doneRange(c[0], c[1], page)
		if from%folioMax != 0 || from > c[0] || c[0]-from >= folioMax {
			t.Errorf("doneRange(%d, %d) starts at %d: want the folioMax block of %d", c[0], c[1], from, c[0])
		}
		if to%page != 0 || to > c[1] || c[1]-to >= page {
			t.Errorf("doneRange(%d, %d) ends at %d: want the last whole page before %d", c[0], c[1], to, c[1])
		}
	}
}

// TestMapFileDoneLargeFolios: a snapshot (distinct stacks, split decode)
// whose page cache is in large folios (dropped, then read back: read-ahead
// makes large folios where the file system has them) is loaded from its
// mapping, mapFile's done letting go of what the decoders moved past. At
// the end little of the file stays mapped (resident): at most 1 MiB of
// the 64 MiB. Where done letting go of only the whole pages it is given
// leaves less than that mapped anyway (small folios), it skips.
func TestMapFileDoneLargeFolios(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: gen.DistinctStacks, TargetBytes: 64 << 20}); err != nil {
		t.Fatal(err)
	}
	size := int64(buf.Len())
	path := filepath.Join(t.TempDir(), "distinct.pickle")
	fh := writeOpen(t, path, buf.Bytes())
	page := int64(os.Getpagesize())
	// readBack drops the file's pages and reads them back (read-ahead).
	readBack := func() {
		if err := fh.Sync(); err != nil {
			t.Fatal(err)
		}
		const dontNeed = 4
		if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, fh.Fd(), 0, 0, dontNeed, 0, 0); e != 0 {
			t.Skip("fadvise:", e)
		}
		b := make([]byte, 128<<10)
		for off := int64(0); off < size; off += int64(len(b)) {
			if _, err := fh.ReadAt(b, off); err != nil && off+int64(len(b)) <= size {
				t.Fatal(err)
			}
		}
	}
	// load loads the file from the mapping b with done and returns the
	// mapping's Rss (bytes) after the load.
	load := func(b []byte, done func(from, to int64)) int64 {
		if _, err := Load(Input{Name: path, R: bytes.NewReader(buf.Bytes()), Size: size, Source: fh, Data: b, DataDone: done}, Options{}); err != nil {
			t.Fatal(err)
		}
		return mappedRss(t, b)
	}
	const bound = 1 << 20
	readBack()
	plain, err := syscall.Mmap(int(fh.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	_ = syscall.Madvise(plain, syscall.MADV_SEQUENTIAL) // as mapFile
	plainRss := load(plain, func(from, to int64) {
		from, to = (from+page-1)/page*page, to/page*page
		if from < to {
			_ = syscall.Madvise(plain[from:to], syscall.MADV_DONTNEED)
		}
	})
	syscall.Munmap(plain)
	if plainRss <= bound {
		t.Skipf("letting go of the given pages only leaves %d bytes mapped: no large folios here", plainRss)
	}
	readBack()
	b, done, unmap := mapFile(fh, size)
	if b == nil {
		t.Fatal("not mapped")
	}
	defer unmap()
	if got := load(b, done); got > bound {
		t.Fatalf("%d bytes stay mapped after the load (%d letting go of the given pages only), want at most %d", got, plainRss, bound)
	} else {
		t.Logf("mapped after the load: %d bytes (%d letting go of the given pages only)", got, plainRss)
	}
}

// mappedRss returns the Rss of the mapping that starts at b[0], from
// /proc/self/smaps.
func mappedRss(t *testing.T, b []byte) int64 {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&b[0])))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if fs := strings.Fields(l); len(fs) > 0 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			in = strings.HasPrefix(l, start)
			continue
		}
		if in && strings.HasPrefix(l, "Rss:") {
			kb, err := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("the mapping is not in /proc/self/smaps")
	return 0
}
