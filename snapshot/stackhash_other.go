//go:build !wasm

package snapshot

import "hash/maphash"

// hash hashes a frame list for the stack table (see stackHashMaphash).
func (t *Stacks) hash(st Stack) uint64 { return stackHashMaphash(t.seed, st) }

// hash hashes a key of the stack cache.
func (c *stackCache) hash(k []byte) uint64 { return maphash.Bytes(c.seed, k) }
