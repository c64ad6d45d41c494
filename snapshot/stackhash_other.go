//go:build !wasm

package snapshot

// hash hashes a frame list for the stack table (see stackHashMaphash).
func (t *Stacks) hash(st Stack) uint64 { return stackHashMaphash(t.seed, st) }
