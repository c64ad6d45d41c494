package main

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"syscall"
)

// hugeHeap has the runtime map n bytes of heap at once and asks Linux to
// back them with transparent huge pages (madvise MADV_HUGEPAGE: the
// runtime does not ask for its heap, and most systems grant huge pages
// only where asked). The decoder's columns then fault in 2 MiB at a time
// instead of 4 KiB, which on a virtual machine costs ~10-20 µs a fault.
// The bytes are garbage at once; the runtime reuses their addresses, whose
// mapping keeps the advice. Nothing is touched here. The caller maps
// twice the soft memory limit: the heap's addresses spread beyond what is
// live at once, and those mapped later get 4 KiB pages.
//
// It does nothing where mapping more than is used could fail or is not
// wanted: strict overcommit (vm.overcommit_memory 2), GODEBUG disablethp,
// more than half the machine's memory.
func hugeHeap(n int64) {
	if strings.Contains(os.Getenv("GODEBUG"), "disablethp=1") {
		return
	}
	if b, err := os.ReadFile("/proc/sys/vm/overcommit_memory"); err != nil || string(bytes.TrimSpace(b)) == "2" {
		return
	}
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil || n > int64(si.Totalram)*int64(si.Unit)/2 {
		return
	}
	b := make([]byte, n)
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE) // best effort: 4 KiB pages otherwise
	runtime.KeepAlive(b)
}
