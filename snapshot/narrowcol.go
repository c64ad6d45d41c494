package snapshot

import "encoding/binary"

// narrowColumn holds a trace column of 64-bit values (time_us, addr,
// size) in pages of pageSize rows (see column): a narrow page stores each
// value v as u = (v - base) >> shift in 32 bits, u in [1, 2^32), and 0 as
// u = 0; once one value of the page does not fit (v - base not a
// multiple of 2^shift or out of range), the page stores every value
// whole (a wide page). Half the bytes of an int64 column for nearly
// every trace, every value unchanged.
//
// The page's base and shift come from the column's narrowKind when the
// page is started: see timeKind, addrKind, sizeKind.
type narrowColumn[T int64 | uint64] struct{ pages []narrowPage[T] }

// narrowPage is one page: d (narrow) or w (wide), the other nil.
type narrowPage[T int64 | uint64] struct {
	base  uint64
	shift uint64
	d     []uint32
	w     []T
	// early is set when one of the page's first narrowEarly values did
	// not fit it narrow (the page widened then, or was started wide): the
	// next page is started wide (push0), its narrow buffer would be
	// written a few rows and dropped.
	early bool
}

// narrowEarly is how many of a page's first values decide whether it
// widened early (narrowPage.early).
const narrowEarly = pageSize / 8

// narrowKind is how a column's pages are based: a page's base is the
// value of the row before it, aligned down to 2^shift, less half (rel),
// or 0 (not rel).
type narrowKind struct {
	shift, half uint64
	rel         bool
}

var (
	// timeKind: a page spans 2^32 µs around the time before it (traces
	// are in time order, a page of 16 Ki entries spans seconds to
	// minutes).
	timeKind = narrowKind{shift: 0, half: 1 << 31, rel: true}
	// addrKind: the caching allocator's addresses are multiples of 512
	// (kMinBlockSize), a page spans 2 TiB around the address before it.
	addrKind = narrowKind{shift: 9, half: 1 << 40, rel: true}
	// sizeKind: sizes in [0, 2^32).
	sizeKind = narrowKind{}
)

// encode returns v's narrow value, if it fits p (v = 0 always does).
func (p *narrowPage[T]) encode(v uint64) (uint32, bool) {
	if v == 0 {
		return 0, true
	}
	off := v - p.base
	u := off >> p.shift
	return uint32(u), off&(1<<p.shift-1) == 0 && u-1 < 1<<32-1
}

func (c *narrowColumn[T]) at(i int) T {
	p := &c.pages[i>>pageBits]
	if p.w != nil {
		return p.w[i&pageMask]
	}
	return p.decode(p.d[i&pageMask])
}

// decode returns the value of narrow value u.
func (p *narrowPage[T]) decode(u uint32) T {
	v := p.base + uint64(u)<<p.shift
	if u == 0 {
		v = 0
	}
	return T(v)
}

func (c *narrowColumn[T]) set(i int, v T) {
	p := &c.pages[i>>pageBits]
	if p.w == nil {
		if u, ok := p.encode(uint64(v)); ok {
			p.d[i&pageMask] = u
			return
		}
		p.early = i&pageMask < narrowEarly
		p.widen(cap(p.d))
	} else if i&pageMask < narrowEarly && !p.early {
		_, fits := p.encode(uint64(v))
		p.early = !fits
	}
	p.w[i&pageMask] = v
}

// widen turns p into a wide page of capacity n.
func (p *narrowPage[T]) widen(n int) {
	w := make([]T, len(p.d), n)
	for k, u := range p.d {
		w[k] = p.decode(u)
	}
	p.w, p.d = w, nil
}

// room reports whether the last page has room for put0.
func (c *narrowColumn[T]) room() bool {
	n := len(c.pages)
	if n == 0 {
		return false
	}
	p := &c.pages[n-1]
	if p.w != nil {
		return len(p.w) < cap(p.w)
	}
	return len(p.d) < cap(p.d)
}

// free returns how many values the last page has room for.
func (c *narrowColumn[T]) free() int {
	n := len(c.pages)
	if n == 0 {
		return 0
	}
	p := &c.pages[n-1]
	if p.w != nil {
		return cap(p.w) - len(p.w)
	}
	return cap(p.d) - len(p.d)
}

// put appends v, the value of row i, to the last page, which has room
// (see room): put0 then set. entryStore.addRow writes it out.
func (c *narrowColumn[T]) put(i int, v T) {
	if u, misfit := c.last().narrow(v); misfit == 0 {
		c.last().put(u)
	} else if !c.putWide(v) {
		c.putSlow(i, v)
	}
}

// last returns the last page.
func (c *narrowColumn[T]) last() *narrowPage[T] { return &c.pages[len(c.pages)-1] }

// narrow returns v's narrow value in p and misfit 0, or a misfit other
// than 0 if p is wide or v does not fit it narrow (as encode, but 0 does
// not fit: putSlow takes it). It tests by arithmetic, without a branch
// (a jump in WebAssembly: see entryStore.addRow), and makes no call
// (calling encode would cost it its inlining).
func (p *narrowPage[T]) narrow(v T) (u uint32, misfit uint64) {
	off := uint64(v) - p.base
	sh := p.shift & 63 // (no test for a shift of 64 or more)
	w := off >> sh
	// w in [1, 2^32): w-1 and w below 2^32.
	return uint32(w), off&(1<<sh-1) | (w-1)>>32 | w>>32 | uint64(cap(p.w))
}

// put appends u to the narrow page p, which has room.
func (p *narrowPage[T]) put(u uint32) {
	n := len(p.d)
	p.d = p.d[:n+1] // room: no append, whose growing path costs inlining
	p.d[n] = u
}

// putWide is put's common case in a wide page (addresses that span more
// than a narrow page does widen most pages): past the page's first
// narrowEarly rows, which set narrowPage.early (a page's rows are
// appended, so its length is the row's place in it), it appends v and
// reports true, else does nothing and reports false. Inlined, as
// narrow.
func (c *narrowColumn[T]) putWide(v T) bool {
	p := &c.pages[len(c.pages)-1]
	n := len(p.w)
	if n < narrowEarly {
		return false // or narrow
	}
	p.w = p.w[:n+1] // room: no append
	p.w[n] = v
	return true
}

// putSlow is put past a narrow value and putWide: the first rows of a wide
// page, 0 or a value that widens the page.
func (c *narrowColumn[T]) putSlow(i int, v T) {
	c.put0()
	c.set(i, v)
}

// put0 appends a 0 to the last page, which has room (see room).
func (c *narrowColumn[T]) put0() {
	p := &c.pages[len(c.pages)-1]
	if p.w != nil {
		p.w = append(p.w, 0)
	} else {
		p.d = append(p.d, 0)
	}
}

// push0 appends a 0, starting a page of kind k (or growing the first, as
// a column does) when the last is full.
func (c *narrowColumn[T]) push0(k narrowKind) {
	n := len(c.pages)
	if n == 0 {
		c.pages = append(c.pages, c.start(k, 0, 16, false))
	} else if !c.room() {
		p := &c.pages[n-1]
		size := max(len(p.d), len(p.w))
		switch {
		case size < pageSize && p.w != nil:
			p.w = append(make([]T, 0, min(2*size, pageSize)), p.w...)
		case size < pageSize:
			p.d = append(make([]uint32, 0, min(2*size, pageSize)), p.d...)
		default:
			// Wide at once after a page that widened early (not the
			// first, whose base is 0): this one most likely does too.
			c.pages = append(c.pages, c.start(k, uint64(c.at(n*pageSize-1)), pageSize, n > 1 && p.early))
		}
	}
	c.put0()
}

// start returns an empty page of kind k, capacity n, after a row of
// value prev, narrow or wide.
func (c *narrowColumn[T]) start(k narrowKind, prev uint64, n int, wide bool) narrowPage[T] {
	p := narrowPage[T]{shift: k.shift}
	if wide {
		p.w = make([]T, 0, n)
	} else {
		p.d = make([]uint32, 0, n)
	}
	if k.rel {
		p.base = prev&^(1<<k.shift-1) - k.half
	}
	return p
}

// len returns the number of values (every page but the last is full).
func (c *narrowColumn[T]) len() int {
	n := len(c.pages)
	if n == 0 {
		return 0
	}
	p := &c.pages[n-1]
	return (n-1)<<pageBits + max(len(p.d), len(p.w))
}

// pushWide appends the little-endian 64-bit values in b (a part's wire
// column), pages of kind k.
func (c *narrowColumn[T]) pushWide(k narrowKind, b []byte) {
	n := c.len()
	for ; len(b) >= 8; b = b[8:] {
		v := T(binary.LittleEndian.Uint64(b))
		if c.room() {
			c.put(n, v) // as the decoder appends (entryStore.addRow)
		} else {
			c.push0(k)
			c.set(n, v)
		}
		n++
	}
}

// appendFrom appends src's values [i, j) to c and lets src's pages go, as
// column.appendFrom: c's last page (of kind k) filled one value at a
// time, then src's full-size pages taken whole, their values moved down
// in place and the next page's first values appended (narrow in the
// taken page's base, the page widened if one does not fit).
func (c *narrowColumn[T]) appendFrom(k narrowKind, src *narrowColumn[T], i, j int) {
	for i < j {
		pg := i >> pageBits
		sp := src.pages[pg]
		off := i & pageMask
		if -c.len()&pageMask > 0 || max(cap(sp.d), cap(sp.w)) != pageSize {
			n := c.len()
			if !c.room() {
				c.push0(k)
			} else {
				c.put0()
			}
			c.set(n, src.at(i))
			i++
			if i&pageMask == 0 {
				src.pages[pg] = narrowPage[T]{}
			}
			continue
		}
		m := min(max(len(sp.d), len(sp.w))-off, j-i)
		if sp.w != nil {
			copy(sp.w, sp.w[off:off+m])
			sp.w = sp.w[:m]
		} else {
			copy(sp.d, sp.d[off:off+m])
			sp.d = sp.d[:m]
		}
		i += m
		if off > 0 && i < j {
			k := min(off, j-i)
			for q := range k {
				v := src.at(i + q)
				if sp.w == nil {
					if u, ok := sp.encode(uint64(v)); ok {
						sp.d = append(sp.d, u)
						continue
					}
					sp.widen(pageSize)
				}
				sp.w = append(sp.w, v)
			}
			i += k
		}
		src.pages[pg] = narrowPage[T]{}
		c.pages = append(c.pages, sp)
	}
}
