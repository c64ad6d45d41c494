package chart

import (
	"sort"
	"strconv"
	"strings"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/untrusted"
)

// TipHTML draws the hover line and the tooltip for point j of the timeline
// of device d: the entry and its time, allocated and reserved there, the
// six largest bands with the one under the cursor (hot) marked, and the
// stack of that band's site (the user's own frames first). It returns "" for a
// point out of range.
func (t *Timeline) TipHTML(d *analysis.DeviceReport, j, hot int, u bytesize.Unit) string {
	if t == nil || d == nil || j < 0 || j >= len(t.Points) {
		return ""
	}
	pt := t.Points[j]
	fx := t.X(pt.Index)
	var b strings.Builder
	b.WriteString(`<div class="snap-hover-line" style="left:` + Percent(fx) + `"></div>`)
	side := "left:" + Percent(fx)
	if fx > 0.55 {
		side = "right:" + Percent(1-fx)
	}
	b.WriteString(`<div class="snap-tip" id="snap-tip" style="` + side + `">`)
	head := "Entry " + bytesize.Commas(int64(pt.Index))
	if pt.Index < 0 {
		head = "Before the first entry"
	}
	if pt.TimeUS > 0 && d.FirstTimeUS > 0 {
		head += " · " + seconds(pt.TimeUS-d.FirstTimeUS)
	}
	b.WriteString("<strong>" + untrusted.HTML(head) + "</strong><div>allocated " + bytesize.Format(pt.Allocated, u) +
		" · reserved " + bytesize.Format(pt.Reserved, u) + `</div><ul class="snap-tip-list">`)
	type band struct {
		k int
		v int64
	}
	var bs []band
	for k, row := range t.Bands.Values {
		if j < len(row) && row[j] > 0 {
			bs = append(bs, band{k, row[j]})
		}
	}
	sort.Slice(bs, func(a, b int) bool { return bs[a].v > bs[b].v })
	n := len(t.Bands.Sites)
	for i, bd := range bs {
		if i == 6 {
			break
		}
		cls := "snap-tip-row"
		if bd.k == hot {
			cls += " snap-tip-hot"
		}
		name := ""
		if bd.k < n {
			name = t.Bands.Sites[bd.k]
		}
		b.WriteString(`<li class="` + cls + `"><span class="snap-swatch snap-bg-` + strconv.Itoa(BandClass(bd.k, n)) + `"></span> ` +
			bytesize.Format(bd.v, u) + " " + untrusted.HTML(name) + "</li>")
	}
	b.WriteString("</ul>")
	if lines := t.hotStack(d, hot); lines != nil {
		b.WriteString(`<pre class="snap-tip-stack">`)
		for i, l := range lines {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(untrusted.HTML(l))
		}
		b.WriteString("</pre>")
	}
	b.WriteString("</div>")
	return b.String()
}

// hotStack returns the lines of the stack shown for band k: the Python
// frames of its site's largest allocation, the user's own first, then
// torch's and the standard library's (analysis.StackGroups), C++ ones only
// when it has none; at most 8 and "…"; nil when the band is no top site.
func (t *Timeline) hotStack(d *analysis.DeviceReport, k int) []string {
	if k < 0 || k >= len(t.Bands.SiteIndex) {
		return nil
	}
	si := t.Bands.SiteIndex[k]
	for _, s := range d.TopSites {
		if s.SiteIndex != si || si < 0 {
			continue
		}
		user, lib, native := analysis.StackGroups(s.Stack)
		lines := append(user[:len(user):len(user)], lib...)
		if len(lines) == 0 {
			lines = native
		}
		if len(lines) > 8 {
			lines = append(lines[:8:8], "…")
		}
		if len(lines) == 0 {
			lines = []string{"(no stack recorded)"}
		}
		return lines
	}
	return nil
}

// DragHTML draws the range being selected on the chart, between fractions
// lo and hi of its width.
func DragHTML(lo, hi float64) string {
	return `<div class="snap-drag" style="left:` + Percent(lo) + `;width:` + Percent(hi-lo) + `"></div>`
}
