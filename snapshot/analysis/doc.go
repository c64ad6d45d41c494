// Package analysis replays a decoded CUDA memory snapshot
// (torch.cuda.memory._dump_snapshot) and answers the questions a user with an
// out-of-memory problem asks: how high did allocated and reserved memory go,
// when, what was alive at that moment, which code allocated it, how much of it
// was parameters, gradients, optimizer state, activations or temporaries, how
// fragmented the allocator was, and what the state was at an OOM.
//
// The replay follows the pairing rule of docs/snapshot.md#pairing-rule: an
// allocation is live from its alloc entry to its free_completed entry,
// matched by address in trace order. Allocations that were alive before the
// trace window (recording started late, or the ring buffer wrapped) are
// rebuilt from unmatched frees and from live blocks in the segments, and they
// count towards the peak, unlike in PyTorch's MemoryViz.
//
// Every number in a Report carries the rule that produced it (the Explain
// fields and each allocation's Rule), so the page and the CLI can show why.
package analysis
