package snapshot

import "math"

// timeColumn holds the trace entries' time_us in pages of pageSize rows
// (see column): a page stores each time as its 32-bit difference from the
// page's base, the time of the row before the page (traces are in time
// order, so a page of 16 Ki entries spans seconds to minutes), or, once
// one time of the page does not fit, every time whole (a wide page). Half
// the bytes of an int64 column for nearly every trace.
type timeColumn struct{ pages []timePage }

// timePage is one page: d (narrow) or w (wide), the other nil.
type timePage struct {
	base int64
	d    []int32
	w    []int64
}

// zeroTime is a narrow page's difference for a time of 0 (an entry
// without time_us), whatever the base.
const zeroTime = math.MinInt32

func (c *timeColumn) at(i int) int64 {
	p := &c.pages[i>>pageBits]
	if p.w != nil {
		return p.w[i&pageMask]
	}
	d := p.d[i&pageMask]
	if d == zeroTime {
		return 0
	}
	return p.base + int64(d)
}

// narrow returns v's difference from base, if it fits a narrow page.
// (v - base may wrap; base + the difference then wraps back to v.)
func narrow(v, base int64) (int32, bool) {
	if v == 0 {
		return zeroTime, true
	}
	d := v - base
	return int32(d), d == int64(int32(d)) && d != zeroTime
}

func (c *timeColumn) set(i int, v int64) {
	p := &c.pages[i>>pageBits]
	if p.w == nil {
		if d, ok := narrow(v, p.base); ok {
			p.d[i&pageMask] = d
			return
		}
		p.widen(cap(p.d))
	}
	p.w[i&pageMask] = v
}

// widen turns p into a wide page of capacity n.
func (p *timePage) widen(n int) {
	w := make([]int64, len(p.d), n)
	for k, d := range p.d {
		if d != zeroTime {
			w[k] = p.base + int64(d)
		}
	}
	p.w, p.d = w, nil
}

// room reports whether the last page has room for put0.
func (c *timeColumn) room() bool {
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

// free returns how many times the last page has room for.
func (c *timeColumn) free() int {
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

// put appends v, the time of row i, to the last page, which has room
// (see room): put0 then set.
func (c *timeColumn) put(i int, v int64) {
	if !c.putNarrow(v) {
		c.putSlow(i, v)
	}
}

// putNarrow is put's common case, a narrow page and a time that fits it:
// it appends v and reports true, or does nothing and reports false. It
// makes no call, so that it is inlined (entryStore.addRow): in
// WebAssembly a call less a trace entry.
func (c *timeColumn) putNarrow(v int64) bool {
	p := &c.pages[len(c.pages)-1]
	// d in (MinInt32, MaxInt32]: it fits and is not zeroTime, narrow's
	// test written out (calling narrow costs putNarrow its inlining:
	// cost 91 > 80).
	d := v - p.base
	if p.w != nil || v == 0 || uint64(d+math.MaxInt32) >= 1<<32-1 {
		return false
	}
	n := len(p.d)
	p.d = p.d[:n+1] // room: no append, whose growing path costs inlining
	p.d[n] = int32(d)
	return true
}

// putSlow is put past putNarrow: a time of 0, a wide page or a time that
// widens it.
func (c *timeColumn) putSlow(i int, v int64) {
	c.put0()
	c.set(i, v)
}

// put0 appends a time of 0 to the last page, which has room (see room).
func (c *timeColumn) put0() {
	p := &c.pages[len(c.pages)-1]
	if p.w != nil {
		p.w = append(p.w, 0)
	} else {
		p.d = append(p.d, zeroTime)
	}
}

// push0 appends a time of 0, starting a page (or growing the first, as a
// column does) when the last is full.
func (c *timeColumn) push0() {
	n := len(c.pages)
	if n == 0 {
		c.pages = append(c.pages, timePage{d: make([]int32, 0, 16)})
	} else if !c.room() {
		p := &c.pages[n-1]
		size := max(len(p.d), len(p.w))
		switch {
		case size < pageSize && p.w != nil:
			p.w = append(make([]int64, 0, min(2*size, pageSize)), p.w...)
		case size < pageSize:
			p.d = append(make([]int32, 0, min(2*size, pageSize)), p.d...)
		default:
			c.pages = append(c.pages, timePage{base: c.at(n*pageSize - 1), d: make([]int32, 0, pageSize)})
		}
	}
	c.put0()
}

// len returns the number of times (every page but the last is full).
func (c *timeColumn) len() int {
	n := len(c.pages)
	if n == 0 {
		return 0
	}
	p := &c.pages[n-1]
	return (n-1)<<pageBits + max(len(p.d), len(p.w))
}

// appendFrom appends src's times [i, j) to c and lets src's pages go, as
// column.appendFrom: c's last page filled one time at a time, then src's
// full-size pages taken whole, their times moved down in place and the
// next page's first times appended (as differences from the taken page's
// base, the page widened if one does not fit).
func (c *timeColumn) appendFrom(src *timeColumn, i, j int) {
	for i < j {
		pg := i >> pageBits
		sp := src.pages[pg]
		off := i & pageMask
		if -c.len()&pageMask > 0 || max(cap(sp.d), cap(sp.w)) != pageSize {
			n := c.len()
			if !c.room() {
				c.push0()
			} else {
				c.put0()
			}
			c.set(n, src.at(i))
			i++
			if i&pageMask == 0 {
				src.pages[pg] = timePage{}
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
					if d, ok := narrow(v, sp.base); ok {
						sp.d = append(sp.d, d)
						continue
					}
					sp.widen(pageSize)
				}
				sp.w = append(sp.w, v)
			}
			i += k
		}
		src.pages[pg] = timePage{}
		c.pages = append(c.pages, sp)
	}
}
