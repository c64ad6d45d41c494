//go:build wasm

package snapshot

// hash hashes a frame list for the stack table (see stackHashXX).
func (t *Stacks) hash(st Stack) uint64 { return stackHashXX(t.seed64, st) }

// hash hashes a key of the stack cache (see bytesHashXX).
func (c *stackCache) hash(k []byte) uint64 { return bytesHashXX(c.seed64, k) }
