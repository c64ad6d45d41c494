package analysis

// Series is a zoomed timeline: the states between two trace indices.
type Series struct {
	// From and To are the first and last trace index covered.
	From int `json:"from"`
	// To is the last trace index covered.
	To int `json:"to"`
	// Points are the downsampled states; the highest allocated and reserved
	// states of the range are among them.
	Points []Point `json:"points"`
	// Sites splits Points by the top sites at the peak.
	Sites *SiteSeries `json:"site_series"`
}

// Series rebuilds the timeline between trace indices from and to (clamped
// to -1 … len-1, swapped if reversed) in about points points, with the
// stacked series of the top sites at the peak (sites bands plus "other").
// It costs one scan of the allocations and of the range.
func (d *Device) Series(from, to, points, sites int) Series {
	from, to = d.clampIndex(from), d.clampIndex(to)
	if from > to {
		from, to = to, from
	}
	points = max(5, min(points, 10000))
	sites = max(1, min(sites, 50))
	width := to - from + 1
	// Allocated and reserved after entry from, then the change at each
	// later entry of the range.
	var alloc, res int64
	delta := make([]int64, width)
	t := &d.allocs
	inBlocks(t.len(), func(blo, bhi int) {
		for k := blo; k < bhi; k++ {
			size := t.size(k)
			if t.aliveAt(k, from) {
				alloc += size
			}
			if s := int(t.start[k]); s > from && s <= to {
				delta[s-from] += size
			}
			if e := int(t.end[k]); e > from && e <= to {
				delta[e-from] -= size
			}
		}
	})
	res = d.initialReserved
	rdelta := make(map[int]int64)
	for _, k := range d.segEvents {
		e := d.segEvent(k)
		sz := e.Size
		if e.Action == "segment_free" || e.Action == "segment_unmap" {
			sz = -sz
		}
		if int(k) <= from {
			res += sz
		} else if int(k) <= to {
			rdelta[int(k)] += sz
		}
	}
	bs := newBuckets(points, from, width)
	var ca, cr int64
	for i := from; i <= to; i++ {
		if i > from {
			ca += delta[i-from]
			cr += rdelta[i]
		}
		bs.record(i, ca, cr)
	}
	pts := d.points(bs, alloc, res)
	top := d.siteTotals(d.liveAt(d.peakIndex), sites, nil)
	return Series{From: from, To: to, Points: pts, Sites: d.siteSeries(pts, top, sites, d.allocs.sizes())}
}
