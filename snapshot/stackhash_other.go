//go:build !wasm

package snapshot

// hash hashes a frame list for the stack table (see stackHashMaphash).
func (t *Stacks) hash(st Stack) uint64 { return stackHashMaphash(t.seed, st) }

// foldedHash: the decoder hashes a frame list as it reads it (frameItemsFolded)
// with this platform's stack hash.
const foldedHash = false

// ledCache: the stack cache looks for a key by findLed's first steps
// first (stackCache.ledHit).
const ledCache = false

// get returns the stack whose encoding is k.
func (c *stackCache) get(k []byte) (StackID, bool) { return c.getMap(k) }

// put adds the encoding k of stack id.
func (c *stackCache) put(k string, id StackID) { c.putMap(k, id) }

// find looks for the list after a MARK among the cached keys (see
// findMap and findHashed).
func (c *stackCache) find(rest []byte) (int, StackID, bool) { return c.findMap(rest) }
