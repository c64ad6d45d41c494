package snapshot

// Streams returns the distinct `stream` values of the trace's entries, in
// the order they first appear (none for an empty trace). It reads the
// stream column a page at a time, not an entry at a time through Stream: a
// page of zeros the column shares (streamColumn; on most files every page)
// is one look, a run of one stream one comparison an entry. The replay
// wants the set, and looking each entry's stream up was a quarter of its
// bookkeeping on big files.
func (t Trace) Streams() []uint64 {
	if t.n == 0 {
		return nil
	}
	c := &t.e.stream
	var seen [maxStreams / 64]uint64 // the stream indexes met
	var out []uint64
	last := -1 // the index met last (its run skips the set)
	for i, end := t.start, t.start+t.n; i < end; {
		p := c.pages[i>>pageBits]
		lo, hi := i&pageMask, min(len(p), end-(i&^pageMask))
		if c.shared(p) {
			p, lo, hi = p[:1], 0, 1 // zeros only
		}
		for _, v := range p[lo:hi] {
			if int(v) == last {
				continue
			}
			last = int(v)
			if seen[v>>6]&(1<<(v&63)) == 0 {
				seen[v>>6] |= 1 << (v & 63)
				out = append(out, t.e.streams[v])
			}
		}
		i = (i &^ pageMask) + pageSize
	}
	return out
}
