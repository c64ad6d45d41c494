package analysis

import "unsafe"

// uintMap is a map from uint64 keys (block addresses, stack summaries):
// open addressing with linear probing in a power-of-two number of slots
// kept at most half full, deletion by shifting the following entries back
// (no tombstones). It does what a Go map does with a fraction of the work
// per operation: the replay looks up an address at every alloc and free,
// classify a site per allocation, millions of times, and WebAssembly
// hashes a Go map's uint64 keys byte by byte. Key 0, the empty slot's
// mark, is kept aside.
type uintMap[V any] struct {
	slots []uintSlot[V]
	shift uint // 64 − log2(len(slots))
	n     int  // keys held, zero's included
	zero  V
	// hasZero: key 0 is held (in zero).
	hasZero bool
}

type uintSlot[V any] struct {
	key uint64 // 0: empty
	v   V
}

func newUintMap[V any]() *uintMap[V] {
	return &uintMap[V]{slots: make([]uintSlot[V], 64), shift: 64 - 6}
}

// home is key's first slot (Fibonacci hashing: block addresses are
// multiples of 512, whose low bits say nothing).
func (t *uintMap[V]) home(key uint64) int {
	return int((key * fibonacci) >> t.shift)
}

// fibonacci is home's multiplier, 2^64 over the golden ratio. The loops
// that hold the table in locals (touch, the replay's allocsRun) write
// home out with it: calling home there, even inlined, changes how Go
// allocates their WebAssembly locals.
const fibonacci = 0x9E3779B97F4A7C15

// get returns what key maps to.
func (t *uintMap[V]) get(key uint64) (V, bool) {
	if key == 0 {
		return t.zero, t.hasZero
	}
	mask := len(t.slots) - 1
	for i := t.home(key); ; i = (i + 1) & mask {
		switch t.slots[i].key {
		case key:
			return t.slots[i].v, true
		case 0:
			var none V
			return none, false
		}
	}
}

// put maps key to v, replacing what it mapped to.
func (t *uintMap[V]) put(key uint64, v V) { t.swap(key, v) }

// swap maps key to v and returns what it mapped to before, if anything
// (put after get, with one probe).
func (t *uintMap[V]) swap(key uint64, v V) (old V, had bool) {
	if key == 0 {
		old, had = t.zero, t.hasZero
		if !had {
			t.n++
		}
		t.zero, t.hasZero = v, true
		return old, had
	}
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(key); ; i = (i + 1) & mask {
		switch t.slots[i].key {
		case key:
			old, t.slots[i].v = t.slots[i].v, v
			return old, true
		case 0:
			t.slots[i] = uintSlot[V]{key, v}
			t.n++
			return old, false
		}
	}
}

// take removes key and returns what it mapped to, if held, with one
// probe. It empties the slot itself, without a call: the replay takes an
// address at every free, and in WebAssembly a call costs its caller the
// reload of every variable it holds, and the callee a prologue (the
// distinct-stacks 55 MiB file's replay: 5 % fewer instructions than with
// a call to a remove(slot) method, cachegrind of node).
func (t *uintMap[V]) take(key uint64) (v V, ok bool) {
	if key == 0 {
		v, ok = t.zero, t.hasZero
		if ok {
			t.n--
		}
		var none V
		t.zero, t.hasZero = none, false
		return v, ok
	}
	mask := len(t.slots) - 1
	i := t.home(key)
	for t.slots[i].key != key {
		if t.slots[i].key == 0 {
			return v, false
		}
		i = (i + 1) & mask
	}
	v = t.slots[i].v
	// Shift back each following entry whose home is not between the hole
	// and it (cyclically), so that every entry stays reachable from home.
	for j := (i + 1) & mask; t.slots[j].key != 0; j = (j + 1) & mask {
		if h := t.home(t.slots[j].key); (j-h)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = uintSlot[V]{}
	t.n--
	return v, true
}

// touch reads the first slot of each key, where get, swap and take look
// first, for the look-ups of those keys that follow to find it in the
// cache: in a loop that does nothing else, the CPU runs ahead through
// many of these independent loads and their cache misses overlap, where
// look-ups among much other work (the replay's, one per entry) wait for
// theirs one after the other. The sum it returns only keeps the loads.
//
//go:noinline
func (t *uintMap[V]) touch(keys []uint64) uint64 {
	slots, shift := t.slots, t.shift
	mask := uint64(len(slots) - 1)
	// Four keys a round, each slot index masked (no bounds check): in
	// WebAssembly every round ends in a jump through the function's
	// dispatch, and the fewer instructions a key takes, the more of its
	// loads the CPU has under way at once.
	var s0, s1 uint64
	i := 0
	for ; i+4 <= len(keys); i += 4 {
		k := keys[i : i+4 : i+4]
		s0 += slots[(k[0]*fibonacci>>shift)&mask].key + slots[(k[1]*fibonacci>>shift)&mask].key
		s1 += slots[(k[2]*fibonacci>>shift)&mask].key + slots[(k[3]*fibonacci>>shift)&mask].key
	}
	for _, key := range keys[i:] {
		s0 += slots[(key*fibonacci>>shift)&mask].key
	}
	return s0 + s1
}

// del removes key, if held.
func (t *uintMap[V]) del(key uint64) { t.take(key) }

// len returns the number of keys held.
func (t *uintMap[V]) len() int { return t.n }

// grow doubles the slots.
func (t *uintMap[V]) grow() {
	old := t.slots
	t.slots, t.shift = make([]uintSlot[V], 2*len(old)), t.shift-1
	faultIn(t.slots, int(unsafe.Sizeof(t.slots[0])))
	mask := len(t.slots) - 1
	for _, s := range old {
		if s.key == 0 {
			continue
		}
		i := t.home(s.key)
		for t.slots[i].key != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}
