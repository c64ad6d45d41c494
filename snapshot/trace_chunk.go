package snapshot

// Chunk is a run of consecutive trace entries as plain slices, for loops
// over long traces that would otherwise pay a column lookup per entry and
// field. The slices alias the trace's storage: read them, never write.
type Chunk struct {
	// Actions are the entries' action codes: an ActionKind below
	// KindOther, or KindOther and above for an action torch did not write
	// when this was written (Trace.Action names it).
	Actions []uint8
	// Sizes, Stacks and Addrs are the entries' Size, Frames and Addr.
	Sizes  []int64
	Stacks []StackID
	Addrs  []uint64
}

// Chunk returns entries i, i+1, … up to the end of the column page that
// holds entry i or of the trace (at least one entry for 0 ≤ i < Len()):
//
//	for i := 0; i < t.Len(); {
//		c := t.Chunk(i)
//		for j, a := range c.Actions { … c.Sizes[j] … }
//		i += len(c.Actions)
//	}
func (t Trace) Chunk(i int) Chunk {
	row := t.start + i
	p, off := row>>pageBits, row&pageMask
	end := off + min(len(t.e.action.pages[p])-off, t.n-i)
	return Chunk{Actions: t.e.action.pages[p][off:end:end], Sizes: t.e.size.pages[p][off:end:end],
		Stacks: t.e.stack.pages[p][off:end:end], Addrs: t.e.addr.pages[p][off:end:end]}
}
