package analysis

import (
	"cmp"
	"slices"
)

// SiteBytes is the live memory of one allocation site at a moment.
type SiteBytes struct {
	Site
	// SiteIndex indexes Analysis.Sites.
	SiteIndex int32 `json:"site_index"`
	// Bytes is the requested bytes alive from this site.
	Bytes int64 `json:"bytes"`
	// Count is the number of live allocations from this site.
	Count int `json:"count"`
	// Category is the category holding most of Bytes.
	Category string `json:"category"`
	// Categories splits Bytes by category.
	Categories CategoryBytes `json:"categories"`
	// LargestBytes is the biggest single allocation.
	LargestBytes int64 `json:"largest_bytes"`
	// Stack is the displayed stack of the biggest allocation (see
	// DisplayStack); empty when none was recorded.
	Stack []string `json:"stack"`
	// Rule is the rule that labelled the biggest allocation.
	Rule string `json:"rule"`

	largest int32
}

// siteTotals groups the live allocations by site and returns the top n
// sites by bytes (all when n <= 0), with the stack of each site's biggest
// allocation. sizes, if not nil, are every allocation's size
// (allocTable.sizeIn).
func (d *Device) siteTotals(live []int32, n int, sizes []int64) []SiteBytes {
	// idx[s] is site s's place in out plus one (0: not met yet): a slice,
	// not a map, which costs more per look-up, most in WebAssembly.
	idx := make([]int32, len(d.a.Sites))
	var out []SiteBytes
	t := &d.allocs
	for _, k := range live {
		site, size := t.site[k], t.sizeIn(sizes, int(k))
		j := int(idx[site]) - 1
		if j < 0 {
			j = len(out)
			idx[site] = int32(j + 1)
			out = append(out, SiteBytes{Site: d.a.Sites[site], SiteIndex: site, largest: k})
		}
		sb := &out[j]
		sb.Bytes += size
		sb.Count++
		sb.Categories.Add(t.cat[k], size)
		if size > sb.LargestBytes {
			sb.LargestBytes, sb.largest = size, k
		}
	}
	slices.SortFunc(out, func(x, y SiteBytes) int {
		if c := cmp.Compare(y.Bytes, x.Bytes); c != 0 {
			return c
		}
		return cmp.Compare(x.Key, y.Key)
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	for j := range out {
		sb := &out[j]
		best := Other
		for _, c := range Categories() {
			if sb.Categories.Get(c) > sb.Categories.Get(best) {
				best = c
			}
		}
		sb.Category = best.String()
		sb.Stack = DisplayStack(d.a.Snap, t.stack(int(sb.largest)))
		if sb.Stack == nil {
			sb.Stack = []string{}
		}
		sb.Rule = t.rule[sb.largest].ID()
	}
	return out
}
