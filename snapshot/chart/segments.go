package chart

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/untrusted"
)

// CategoryClass is the CSS class of an allocation category's colour,
// e.g. snap-cat-optimizer-state.
func CategoryClass(c string) string {
	return "snap-cat-" + className(strings.ReplaceAll(c, "_", "-"))
}

// SegmentsSVG draws the segments of a state as bars scaled to the largest
// one: live blocks coloured by category (rounding waste paler), free space
// grey. Hovering a block shows its size, site and category. Blocks too thin
// to see are drawn as one sliver per run. It appends with strconv: this
// runs on the page's main thread.
func SegmentsSVG(st *analysis.State, u bytesize.Unit) string {
	if len(st.Segments) == 0 {
		return `<svg class="snap-segs-svg" viewBox="0 0 1000 10" xmlns="http://www.w3.org/2000/svg" aria-hidden="true"></svg>`
	}
	const rowH, gap = 10, 4
	maxSize := int64(1)
	for _, s := range st.Segments {
		maxSize = max(maxSize, s.Size)
	}
	// Coordinates in hundredths of a unit of a 1000-unit-wide row; sizes
	// out of range (negative, past the largest) are drawn at the ends.
	scale := func(n int64) int64 { return int64(math.Max(0, math.Min(1, float64(n)/float64(maxSize))) * 100000) }
	num := func(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }
	rect := func(b []byte, cls string, x, y, w int64) []byte {
		b = append(b, `<rect class="`...)
		b = append(b, cls...)
		b = append(b, `" x="`...)
		b = num(b, x)
		b = append(b, `" y="`...)
		b = num(b, y)
		b = append(b, `" width="`...)
		b = num(b, w)
		b = append(b, `" height="`...)
		b = num(b, rowH*100)
		return append(b, `"/>`...)
	}
	h := int64(len(st.Segments))*(rowH+gap) + gap
	b := make([]byte, 0, 4096)
	b = append(b, `<svg class="snap-segs-svg" viewBox="0 0 100000 `...)
	b = num(b, h*100)
	b = append(b, `" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="segments">`...)
	for r, s := range st.Segments {
		y := (gap + int64(r)*(rowH+gap)) * 100
		b = append(b, `<g><title>`...)
		b = append(b, untrusted.HTML(fmt.Sprintf("segment %s: %s (%s B), %s allocated, %s free between blocks, largest free %s, %s pool%s",
			s.Address, bytesize.Format(s.Size, u), bytesize.Commas(s.Size), bytesize.Format(s.AllocatedBytes, u), bytesize.Format(s.ExternalFreeBytes, u), bytesize.Format(s.LargestFreeBytes, u), s.Pool,
			map[bool]string{true: ", expandable", false: ""}[s.Expandable]))...)
		b = append(b, `</title>`...)
		b = rect(b, "snap-seg-bg", 0, y, scale(s.Size))
		b = append(b, `</g>`...)
		var lastEnd int64 = -1
		for _, bl := range s.Blocks {
			x, w, wr := scale(bl.Offset), max(scale(bl.Size), 40), max(scale(bl.Requested), 30)
			if x < lastEnd {
				continue // thinner than what is already drawn there
			}
			lastEnd = x + w
			pend := ""
			if bl.Pending {
				pend = ", freed but pending (record_stream)"
			}
			b = append(b, `<g class="`...)
			b = append(b, CategoryClass(bl.Category)...)
			b = append(b, `"><title>`...)
			b = append(b, untrusted.HTML(bytesize.Format(bl.Requested, u)+" requested in a "+bytesize.Format(bl.Size, u)+" block: "+st.SiteLabels[bl.Site]+
				" ("+bl.Category+")"+pend)...)
			b = append(b, `</title>`...)
			b = rect(b, "snap-blk-waste", x, y, w)
			b = rect(b, "snap-blk", x, y, min(wr, w))
			b = append(b, `</g>`...)
		}
	}
	b = append(b, `</svg>`...)
	return string(b)
}
