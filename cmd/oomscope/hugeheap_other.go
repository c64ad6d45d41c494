//go:build !linux

package main

// hugeHeap does nothing where there is no madvise MADV_HUGEPAGE.
func hugeHeap(int64) {}
