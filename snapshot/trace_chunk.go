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
	Sizes  Values[int64]
	Stacks []StackID
	Addrs  Values[uint64]
}

// Values is a run of a trace column's values as its page holds them,
// 32 bits a value (narrow) or 64 (wide): At reads value j.
type Values[T int64 | uint64] struct{ p narrowPage[T] }

// At returns value j. Its receiver is a pointer: a loop's v.At(j),
// inlined, copied the 72-byte Values at each call otherwise, which Go's
// WebAssembly does with a memory.copy, a call out of the compiled code in
// V8 (the replay reads a size per alloc entry this way).
func (v *Values[T]) At(j int) T {
	if v.p.w != nil {
		return v.p.w[j]
	}
	return v.p.decode(v.p.d[j])
}

// Plain returns the values as a slice: the page's own when it is wide,
// else decoded into the array of *buf, which it replaces when short. For
// loops that read each value where At's test and decoding would cost
// them (see analysis's scan).
func (v Values[T]) Plain(buf *[]T) []T {
	if v.p.w != nil {
		return v.p.w
	}
	if cap(*buf) < len(v.p.d) {
		*buf = make([]T, len(v.p.d))
	}
	out := (*buf)[:len(v.p.d)]
	for j, u := range v.p.d {
		out[j] = v.p.decode(u)
	}
	return out
}

// Len returns the number of values.
func (v Values[T]) Len() int { return max(len(v.p.d), len(v.p.w)) }

// Slice returns values [i, j).
func (v Values[T]) Slice(i, j int) Values[T] {
	p := v.p
	if p.w != nil {
		p.w = p.w[i:j:j]
	} else {
		p.d = p.d[i:j:j]
	}
	return Values[T]{p}
}

// values returns c's values [i, j) of one page.
func (c *narrowColumn[T]) values(i, j int) Values[T] {
	p := c.pages[i>>pageBits]
	return Values[T]{p}.Slice(i&pageMask, (j-1)&pageMask+1)
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
	return Chunk{Actions: t.e.action.pages[p][off:end:end], Sizes: t.e.size.values(row, row+end-off),
		Stacks: t.e.stack.pages[p][off:end:end], Addrs: t.e.addr.values(row, row+end-off)}
}
