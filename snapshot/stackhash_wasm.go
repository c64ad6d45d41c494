//go:build wasm

package snapshot

// hash hashes a frame list for the stack table (see stackHashXX).
func (t *Stacks) hash(st Stack) uint64 { return stackHashXX(t.seed64, st) }

// foldedHash: the decoder hashes a frame list as it reads it (frameItemsFolded)
// with this platform's stack hash.
const foldedHash = true
