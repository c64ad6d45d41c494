package analysis

// faultIn writes the zero value into one element of s per 4 KiB: a
// freshly made slice too big for the heap's free spans is memory the
// system has not handed over yet, and a loop that reads an element
// before writing it (a table probed before it is filled, a weight added
// to) makes the kernel map the shared zero page at the read, then copy
// it at the write and flush the other cores' TLBs (do_wp_page: 12 µs a
// page on the 2-core machine, 0.14 s for the 1 GiB distinct-stacks
// file's stack weights). A write first takes one cheap fault instead.
// Call it on a slice just made, before reading it.
func faultIn[T any](s []T, size int) {
	var zero T
	for i := 0; i < len(s); i += max(1, 4096/size) {
		s[i] = zero
	}
}
