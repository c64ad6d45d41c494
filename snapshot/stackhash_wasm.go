//go:build wasm

package snapshot

// hash hashes a frame list for the stack table (see stackHashXX).
func (t *Stacks) hash(st Stack) uint64 { return stackHashXX(t.seed64, st) }
