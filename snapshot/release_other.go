//go:build !wasm

package snapshot

// releaseEntries is releaseEntriesGo natively (in WebAssembly it is in
// assembly).
func releaseEntries(items []val, objs []obj, pages [][]uint32, memoLen int, free []int32, end int32) int {
	return releaseEntriesGo(items, objs, pages, memoLen, free, end)
}
