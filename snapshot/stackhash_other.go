//go:build !wasm

package snapshot

// hash hashes a frame list for the stack table (see stackHashMaphash).
func (t *Stacks) hash(st Stack) uint64 { return stackHashMaphash(t.seed, st) }

// foldedHash: the decoder hashes a frame list as it reads it (frameItemsFolded)
// with this platform's stack hash.
const foldedHash = false
