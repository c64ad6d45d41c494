package snapshot

import "sort"

// ActionKind numbers the actions torch writes, for fast switches; every
// other action is KindOther (Trace.Action still returns its name).
type ActionKind uint8

// Action kinds, one per Action constant.
const (
	KindAlloc ActionKind = iota
	KindFreeRequested
	KindFreeCompleted
	KindSegmentAlloc
	KindSegmentFree
	KindSegmentMap
	KindSegmentUnmap
	KindSnapshot
	KindOOM
	KindUserDefined
	KindAnnotate
	// KindOther is any action torch did not write when this was written.
	KindOther
)

// knownActions names the kinds below KindOther.
var knownActions = [KindOther]Action{ActionAlloc, ActionFreeRequested, ActionFreeCompleted, ActionSegmentAlloc,
	ActionSegmentFree, ActionSegmentMap, ActionSegmentUnmap, ActionSnapshot, ActionOOM, ActionUserDefined, ActionAnnotate}

// Action returns the action of kind k ("" for KindOther).
func (k ActionKind) Action() Action {
	if k < KindOther {
		return knownActions[k]
	}
	return ""
}

// Kind returns the kind of a, KindOther for an action torch does not write.
func (a Action) Kind() ActionKind {
	for k, name := range knownActions {
		if a == name {
			return ActionKind(k)
		}
	}
	return KindOther
}

// Trace is one device's trace entries, oldest first, stored by column (a
// few bytes per entry instead of a struct with strings). Read it with the
// accessors; Entry(i) assembles one entry whole. The zero value is an empty
// trace; Append adds to it. Traces returned by the decoder share one column
// store and are read-only.
type Trace struct {
	e     *entryStore
	start int
	n     int
}

// Len returns the number of entries.
func (t Trace) Len() int { return t.n }

// Kind returns the kind of entry i's action (KindOther for unknown ones).
func (t Trace) Kind(i int) ActionKind { return min(ActionKind(t.e.action.at(t.start+i)), KindOther) }

// Action returns entry i's `action`, verbatim.
func (t Trace) Action(i int) Action {
	c := t.e.action.at(t.start + i)
	if c < uint8(KindOther) {
		return knownActions[c]
	}
	return t.e.names[c-uint8(KindOther)]
}

// Addr returns entry i's `addr` (0 for oom entries).
func (t Trace) Addr(i int) uint64 { return t.e.addr.at(t.start + i) }

// Size returns entry i's `size`.
func (t Trace) Size(i int) int64 { return t.e.size.at(t.start + i) }

// Stream returns entry i's `stream`.
func (t Trace) Stream(i int) uint64 { return t.e.streams[t.e.stream.at(t.start+i)] }

// TimeUS returns entry i's `time_us` (0 when absent).
func (t Trace) TimeUS(i int) int64 { return t.e.time.at(t.start + i) }

// Frames returns entry i's stack (NoStack when the key was absent).
func (t Trace) Frames(i int) StackID { return t.e.stack.at(t.start + i) }

// DeviceFree returns entry i's `device_free` (oom entries; 0 otherwise).
func (t Trace) DeviceFree(i int) int64 { v, _ := t.e.deviceFree.get(t.start + i); return v }

// CompileContext returns entry i's `compile_context` ("" when absent).
func (t Trace) CompileContext(i int) string { v, _ := t.e.compile.get(t.start + i); return v }

// UserMetadata returns entry i's `user_metadata` ("" when absent).
func (t Trace) UserMetadata(i int) string { v, _ := t.e.user.get(t.start + i); return v }

// Extra returns entry i's rare and unknown keys, nil for nearly every entry.
func (t Trace) Extra(i int) *EntryExtra { v, _ := t.e.extra.get(t.start + i); return v }

// Entry assembles entry i.
func (t Trace) Entry(i int) TraceEntry {
	return TraceEntry{Action: t.Action(i), Addr: t.Addr(i), Size: t.Size(i), Stream: t.Stream(i), TimeUS: t.TimeUS(i),
		DeviceFree: t.DeviceFree(i), Frames: t.Frames(i), CompileContext: t.CompileContext(i),
		UserMetadata: t.UserMetadata(i), Extra: t.Extra(i)}
}

// Entries assembles every entry (for tests and small traces).
func (t Trace) Entries() []TraceEntry {
	out := make([]TraceEntry, t.n)
	for i := range out {
		out[i] = t.Entry(i)
	}
	return out
}

// Append adds e at the end of the trace. On a trace that shares its
// columns with others (a decoded one), it first copies its entries.
func (t *Trace) Append(e TraceEntry) {
	if t.e == nil || t.start+t.n != t.e.n || t.e.shared {
		old := *t
		*t = Trace{e: &entryStore{}}
		for i := range old.n {
			t.Append(old.Entry(i))
		}
	}
	row := t.e.add()
	t.n++
	t.e.setAction(row, e.Action)
	t.e.addr.set(row, e.Addr)
	t.e.size.set(row, e.Size)
	t.e.setStream(row, e.Stream)
	t.e.time.set(row, e.TimeUS)
	t.e.stack.set(row, e.Frames)
	if e.DeviceFree != 0 {
		t.e.deviceFree.put(row, e.DeviceFree)
	}
	if e.CompileContext != "" {
		t.e.compile.put(row, e.CompileContext)
	}
	if e.UserMetadata != "" {
		t.e.user.put(row, e.UserMetadata)
	}
	if e.Extra != nil {
		t.e.extra.put(row, e.Extra)
	}
}

// TraceOf builds a trace from entries (for tests and generators).
func TraceOf(entries ...TraceEntry) Trace {
	var t Trace
	for _, e := range entries {
		t.Append(e)
	}
	return t
}

// Bytes per entry of the columns (action, addr, size, stream index,
// time, stack), for the memory budget (addr, size and time as in a wide
// page).
const entryBytes = 1 + 8 + 8 + 2 + 8 + 4

// entryStore holds trace entries by column, one row per entry. The
// decoder writes every entry of a file into one store in file order; each
// device's Trace is a run of its rows.
type entryStore struct {
	n int
	// roomTo bounds the rows addRow puts without checking each column's
	// room: every row goes to every column and no column shrinks, so the
	// rows below n + free(), taken at one n, all have room.
	roomTo int
	action column[uint8]        // KindAlloc… or KindOther+i for names[i]
	addr   narrowColumn[uint64] // addrKind
	size   narrowColumn[int64]  // sizeKind
	stream streamColumn         // index into streams
	time   narrowColumn[int64]  // timeKind
	stack  column[StackID]
	// names are the unknown actions, in order of appearance.
	names []Action
	// streams are the distinct stream values; streamIdx finds them.
	streams   []uint64
	streamIdx map[uint64]uint16
	// Rare fields, by row.
	deviceFree sparse[int64]
	compile    sparse[string]
	user       sparse[string]
	extra      sparse[*EntryExtra]
	// shared marks the decoder's store: Append copies before writing.
	shared bool
}

// ready makes the table of streams, which starts with stream 0 (a zero
// row's).
func (e *entryStore) ready() {
	if e.streams == nil {
		e.streams, e.streamIdx = []uint64{0}, map[uint64]uint16{0: 0}
	}
}

// addRowGo is entryStore.addRow in Go (natively addRow itself; in
// WebAssembly addRowAsm's path where it declines): it appends a row of
// these values (no stack) to e and returns its index: add then a set per
// column, or, for rows below roomTo, a put per column without checking
// each column's room.
//
// Below roomTo, with stream 0 and addr, size and time narrow in narrow
// pages (a file of distinct stacks: every row), the values are tested by
// arithmetic (narrowPage.narrow) and put after one branch.
func addRowGo(e *entryStore, action uint8, addr uint64, size, time int64, stream uint16) int {
	if e.n >= e.roomTo {
		free := 0
		if e.streams != nil {
			free = e.free()
		}
		if free == 0 {
			row := e.add()
			e.action.set(row, action)
			e.addr.set(row, addr)
			e.size.set(row, size)
			e.time.set(row, time)
			e.stream.set(row, stream)
			return row
		}
		e.roomTo = e.n + free
	}
	row := e.n
	a, s, t := e.addr.last(), e.size.last(), e.time.last()
	ua, ma := a.narrow(addr)
	us, ms := s.narrow(size)
	ut, mt := t.narrow(time)
	e.action.put(action)
	if ma|ms|mt|uint64(stream) == 0 {
		a.put(ua)
		s.put(us)
		e.stream.column.put(0)
		t.put(ut)
	} else {
		// narrowColumn.put, written out (a call less).
		if ma == 0 {
			a.put(ua)
		} else if !e.addr.putWide(addr) {
			e.addr.putSlow(row, addr)
		}
		if ms == 0 {
			s.put(us)
		} else if !e.size.putWide(size) {
			e.size.putSlow(row, size)
		}
		if stream == 0 {
			// A 0 may go to any page, shared or not (streamColumn):
			// column's put, inlined, not streamColumn's, a call.
			e.stream.column.put(0)
		} else {
			e.stream.put(stream)
		}
		if mt == 0 {
			t.put(ut)
		} else if !e.time.putWide(time) {
			e.time.putSlow(row, time)
		}
	}
	e.stack.put(NoStack)
	e.n++
	return row
}

// free returns how many rows every column's last page has room for.
func (e *entryStore) free() int {
	return min(e.action.free(), e.addr.free(), e.size.free(), e.stream.free(), e.time.free(), e.stack.free())
}

// add appends a zero row (no stack) and returns its index.
func (e *entryStore) add() int {
	e.ready()
	if e.action.room() && e.addr.room() && e.size.room() && e.stream.room() && e.time.room() && e.stack.room() {
		// The common case, without a call per column.
		e.action.put(0)
		e.addr.put0()
		e.size.put0()
		e.stream.put(0)
		e.time.put0()
		e.stack.put(NoStack)
	} else {
		e.action.push(0)
		e.addr.push0(addrKind)
		e.size.push0(sizeKind)
		e.stream.push(0)
		e.time.push0(timeKind)
		e.stack.push(NoStack)
	}
	e.n++
	return e.n - 1
}

// copyRow copies row src to row dst.
func (e *entryStore) copyRow(dst, src int) {
	e.action.set(dst, e.action.at(src))
	e.addr.set(dst, e.addr.at(src))
	e.size.set(dst, e.size.at(src))
	e.stream.set(dst, e.stream.at(src))
	e.time.set(dst, e.time.at(src))
	e.stack.set(dst, e.stack.at(src))
	if v, ok := e.deviceFree.get(src); ok {
		e.deviceFree.put(dst, v)
	}
	if v, ok := e.compile.get(src); ok {
		e.compile.put(dst, v)
	}
	if v, ok := e.user.get(src); ok {
		e.user.put(dst, v)
	}
	if v, ok := e.extra.get(src); ok {
		e.extra.put(dst, v)
	}
}

// maxNames bounds the distinct unknown actions of one store.
const maxNames = 255 - int(KindOther)

// setAction sets a row's action; it reports false when the store already
// holds maxNames unknown actions.
func (e *entryStore) setAction(row int, a Action) bool {
	if k := a.Kind(); k < KindOther {
		e.action.set(row, uint8(k))
		return true
	}
	for i, n := range e.names {
		if n == a {
			e.action.set(row, uint8(KindOther)+uint8(i))
			return true
		}
	}
	if len(e.names) >= maxNames {
		return false
	}
	e.names = append(e.names, a)
	e.action.set(row, uint8(KindOther)+uint8(len(e.names)-1))
	return true
}

// maxStreams bounds the distinct stream values of one store.
const maxStreams = 1 << 16

// setStreamIdx is setStream's lookup: the index of stream s, added if new
// (false: too many).
func (e *entryStore) setStreamIdx(s uint64, out *uint16) bool {
	i, ok := e.streamIdx[s]
	if !ok {
		if len(e.streams) >= maxStreams {
			return false
		}
		i = uint16(len(e.streams))
		e.streams = append(e.streams, s)
		e.streamIdx[s] = i
	}
	*out = i
	return true
}

// setStream sets a row's stream; it reports false when the store already
// holds maxStreams distinct streams.
func (e *entryStore) setStream(row int, s uint64) bool {
	if e.streams == nil {
		e.streams, e.streamIdx = []uint64{0}, map[uint64]uint16{0: 0}
	}
	var i uint16
	if !e.setStreamIdx(s, &i) {
		return false
	}
	e.stream.set(row, i)
	return true
}

// Columns grow in pages of pageSize values: no reallocation of what is
// there, so a column never needs twice its size while growing (in a
// WebAssembly worker, memory once taken is never given back).
const (
	pageBits = 14
	pageSize = 1 << pageBits
	pageMask = pageSize - 1
)

// column is a growable array in pages; only the first page grows by
// doubling (small traces stay small).
type column[T any] struct{ pages [][]T }

func (c *column[T]) at(i int) T     { return c.pages[i>>pageBits][i&pageMask] }
func (c *column[T]) set(i int, v T) { c.pages[i>>pageBits][i&pageMask] = v }

// room reports whether the last page has room for put.
func (c *column[T]) room() bool {
	n := len(c.pages)
	return n > 0 && len(c.pages[n-1]) < cap(c.pages[n-1])
}

// free returns how many values the last page has room for.
func (c *column[T]) free() int {
	if n := len(c.pages); n > 0 {
		return cap(c.pages[n-1]) - len(c.pages[n-1])
	}
	return 0
}

// put appends v to the last page, which has room (see room).
func (c *column[T]) put(v T) {
	last := &c.pages[len(c.pages)-1]
	*last = (*last)[:len(*last)+1]
	(*last)[len(*last)-1] = v
}

func (c *column[T]) push(v T) {
	n := len(c.pages)
	if n == 0 {
		c.pages = append(c.pages, make([]T, 0, 16))
		n = 1
	}
	last := c.pages[n-1]
	if len(last) == cap(last) {
		if cap(last) < pageSize {
			grown := make([]T, len(last), min(2*cap(last), pageSize))
			copy(grown, last)
			c.pages[n-1] = grown
		} else {
			c.pages = append(c.pages, make([]T, 0, pageSize))
			n++
		}
	}
	c.pages[n-1] = append(c.pages[n-1], v)
}

// truncate keeps the first n values.
func (c *column[T]) truncate(n int) {
	if n == 0 {
		c.pages = nil
		return
	}
	np := (n + pageSize - 1) >> pageBits
	c.pages = c.pages[:np]
	c.pages[np-1] = c.pages[np-1][:n-(np-1)<<pageBits]
}

// sparse holds a value for a few rows, in row order.
type sparse[T any] struct {
	rows []int32
	vals []T
}

func (s *sparse[T]) get(row int) (T, bool) {
	i := sort.Search(len(s.rows), func(j int) bool { return int(s.rows[j]) >= row })
	if i < len(s.rows) && int(s.rows[i]) == row {
		return s.vals[i], true
	}
	var zero T
	return zero, false
}

func (s *sparse[T]) put(row int, v T) {
	n := len(s.rows)
	if n == 0 || int(s.rows[n-1]) < row {
		s.rows, s.vals = append(s.rows, int32(row)), append(s.vals, v)
		return
	}
	i := sort.Search(n, func(j int) bool { return int(s.rows[j]) >= row })
	if i < n && int(s.rows[i]) == row {
		s.vals[i] = v
		return
	}
	var zero T
	s.rows, s.vals = append(s.rows, 0), append(s.vals, zero)
	copy(s.rows[i+1:], s.rows[i:])
	copy(s.vals[i+1:], s.vals[i:])
	s.rows[i], s.vals[i] = int32(row), v
}

// del removes row's value, if any.
func (s *sparse[T]) del(row int) {
	i := sort.Search(len(s.rows), func(j int) bool { return int(s.rows[j]) >= row })
	if i < len(s.rows) && int(s.rows[i]) == row {
		s.rows = append(s.rows[:i], s.rows[i+1:]...)
		s.vals = append(s.vals[:i], s.vals[i+1:]...)
	}
}
