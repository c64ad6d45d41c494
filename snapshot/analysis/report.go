package analysis

import (
	"sort"
)

// Report is the JSON-ready summary of an Analysis: what the CLI prints with
// --json and what the page shows.
type Report struct {
	// PickleProtocol is the pickle protocol of the file.
	PickleProtocol int `json:"pickle_protocol"`
	// Devices has one entry per device with a trace or segments.
	Devices []DeviceReport `json:"devices"`
	// Explain says how each number was computed.
	Explain map[string]string `json:"explain"`
}

// DeviceReport is the summary of one device.
type DeviceReport struct {
	// Device is the device ordinal.
	Device int `json:"device"`
	// Entries is the number of trace entries.
	Entries int `json:"entries"`
	// Actions counts entries per action.
	Actions map[string]int `json:"actions"`
	// FirstTimeUS and LastTimeUS bound the trace window (0 without time_us).
	FirstTimeUS int64 `json:"first_time_us"`
	// LastTimeUS is the time of the last entry.
	LastTimeUS int64 `json:"last_time_us"`
	// PeakAllocatedBytes is the highest sum of live requested bytes.
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes"`
	// PeakIndex is the entry after which the peak was first reached (-1:
	// before the first entry).
	PeakIndex int `json:"peak_index"`
	// PeakTimeUS is that entry's time_us.
	PeakTimeUS int64 `json:"peak_time_us"`
	// PeakReservedBytes is the highest sum of reserved ranges.
	PeakReservedBytes int64 `json:"peak_reserved_bytes"`
	// PeakReservedIndex is the entry after which it was first reached.
	PeakReservedIndex int `json:"peak_reserved_index"`
	// FinalAllocatedBytes is the requested bytes of active_allocated blocks
	// in the segments.
	FinalAllocatedBytes int64 `json:"final_allocated_bytes"`
	// FinalPendingFreeBytes is the requested bytes of active_pending_free
	// blocks.
	FinalPendingFreeBytes int64 `json:"final_pending_free_bytes"`
	// FinalReservedBytes is the sum of the segments' total_size.
	FinalReservedBytes int64 `json:"final_reserved_bytes"`
	// InitialAllocatedBytes is what was alive before the first entry.
	InitialAllocatedBytes int64 `json:"initial_allocated_bytes"`
	// InitialReservedBytes is what was reserved before the first entry.
	InitialReservedBytes int64 `json:"initial_reserved_bytes"`
	// PreTraceAllocations counts allocations alive before the first entry.
	PreTraceAllocations int `json:"pre_trace_allocations"`
	// Allocations counts all allocations (trace and pre-trace).
	Allocations int `json:"allocations"`
	// Expandable is true when expandable segments are in use.
	Expandable bool `json:"expandable_segments"`
	// Streams counts distinct streams in the trace and segments.
	Streams int `json:"streams"`
	// CategoriesAtPeak splits PeakAllocatedBytes by category.
	CategoriesAtPeak CategoryBytes `json:"categories_at_peak"`
	// CategoryRules lists, per rule, the bytes it labelled at the peak.
	CategoryRules []RuleBytes `json:"category_rules"`
	// TopSites are the sites holding the most bytes at the peak.
	TopSites []SiteBytes `json:"top_sites"`
	// LargestAtPeak are the biggest allocations alive at the peak.
	LargestAtPeak []AllocationView `json:"largest_at_peak"`
	// FragmentationAtPeak describes free space at the peak.
	FragmentationAtPeak Fragmentation `json:"fragmentation_at_peak"`
	// OOMEvents are the oom entries with the state at that moment.
	OOMEvents []OOMEvent `json:"oom_events"`
	// Timeline is the downsampled allocated/reserved curve (page only).
	Timeline []Point `json:"timeline,omitempty"`
	// SiteSeries is the stacked per-site curve at the Timeline points.
	SiteSeries *SiteSeries `json:"site_series,omitempty"`
	// Warnings lists inconsistencies found while replaying.
	Warnings []string `json:"warnings"`
	// DiagnosisReport: steps, phases, leak, cause and fixes (diag_*.go).
	DiagnosisReport
}

// RuleBytes is what one classification rule labelled at the peak.
type RuleBytes struct {
	// Rule is the rule ID.
	Rule string `json:"rule"`
	// Category is the category it assigns.
	Category string `json:"category"`
	// Bytes and Count are the live bytes and allocations it labelled.
	Bytes int64 `json:"bytes"`
	// Count is the number of allocations.
	Count int `json:"count"`
	// Text explains the rule.
	Text string `json:"text"`
}

// AllocationView describes one allocation for display.
type AllocationView struct {
	// Alloc is the allocation's number (Device.Allocation).
	Alloc int32 `json:"alloc"`
	// Address is the block address in hex.
	Address string `json:"address"`
	// Bytes is the requested size.
	Bytes int64 `json:"bytes"`
	// BlockBytes is the block size when known.
	BlockBytes int64 `json:"block_bytes,omitempty"`
	// AllocIndex is the alloc entry (-1: before the trace).
	AllocIndex int `json:"alloc_index"`
	// FreeIndex is the free_completed entry (the trace length: never freed).
	FreeIndex int `json:"free_index"`
	// Origin is "trace", "pre_trace_freed" or "pre_trace_live".
	Origin string `json:"origin"`
	// Site is the site label.
	Site string `json:"site"`
	// Category is the category name.
	Category string `json:"category"`
	// Rule and RuleText say why.
	Rule string `json:"rule"`
	// RuleText explains Rule.
	RuleText string `json:"rule_text"`
	// Stack is the displayed stack (see DisplayStack).
	Stack []string `json:"stack"`
}

// OOMEvent is an oom trace entry and the allocator state at that moment.
type OOMEvent struct {
	// Index is the entry index.
	Index int `json:"index"`
	// TimeUS is its time_us.
	TimeUS int64 `json:"time_us"`
	// RequestedBytes is the size that failed.
	RequestedBytes int64 `json:"requested_bytes"`
	// DeviceFreeBytes is what cudaMemGetInfo reported free.
	DeviceFreeBytes int64 `json:"device_free_bytes"`
	// Stream is the stream in hex.
	Stream string `json:"stream"`
	// AllocatedBytes, ReservedBytes and the fragmentation at that moment.
	AllocatedBytes int64 `json:"allocated_bytes"`
	// ReservedBytes is the reserved memory then.
	ReservedBytes int64 `json:"reserved_bytes"`
	// FreeInReservedBytes is reserved − allocated (0 if negative: the trace
	// and the segments disagree).
	FreeInReservedBytes int64 `json:"free_in_reserved_bytes"`
	// LargestFreeBlockBytes is the largest free run in the segments.
	LargestFreeBlockBytes int64 `json:"largest_free_block_bytes"`
	// Categories splits AllocatedBytes.
	Categories CategoryBytes `json:"categories"`
	// TopSites are the 5 sites holding the most then.
	TopSites []SiteBytes `json:"top_sites"`
	// Stack is the displayed stack of the failing request, if recorded.
	Stack []string `json:"stack"`
}

// Point is one sample of the downsampled timeline. Keys are short: the page
// receives thousands.
type Point struct {
	// Index is the trace index (-1: before the first entry).
	Index int `json:"i"`
	// TimeUS is that entry's time_us.
	TimeUS int64 `json:"t"`
	// Allocated is the live requested bytes.
	Allocated int64 `json:"a"`
	// Reserved is the reserved bytes.
	Reserved int64 `json:"r"`
}

// SiteSeries splits the timeline by the top sites at the peak: Values[k][j]
// is the live bytes of Sites[k] at Timeline[j]; the last band, "other
// sites", holds the rest, so each column sums to Timeline[j].Allocated.
type SiteSeries struct {
	// Sites are the band labels, the top sites then "other sites".
	Sites []string `json:"sites"`
	// SiteIndex indexes Analysis.Sites per band (-1 for "other sites"); it
	// matches SiteBytes.SiteIndex of the top sites.
	SiteIndex []int32 `json:"site_index"`
	// Values holds one row per band.
	Values [][]int64 `json:"values"`
}

// Explanations of the report's numbers (Report.Explain).
var explain = map[string]string{
	"peak_allocated_bytes":  "max over the trace of Σ requested bytes of live allocations; an allocation is live from its alloc entry to its free_completed entry, matched by address in trace order; allocations alive before the trace (unmatched frees, and live blocks in the segments with no alloc) count from the start",
	"peak_index":            "trace index of the entry after which the peak was first reached; -1 means before the first entry (the peak was already there when recording began)",
	"peak_reserved_bytes":   "max over the trace of reserved bytes: final Σ segment total_size, minus the net segment_alloc/map − segment_free/unmap bytes of the trace, replayed forward",
	"final_allocated_bytes": "Σ requested_size of active_allocated blocks in the segments",
	"final_reserved_bytes":  "Σ total_size of the segments",
	"categories_at_peak":    "the peak's live bytes split by the rule that labelled each allocation (category_rules); stack rules look for optimizer, autograd, module-construction and forward frames, lifetime rules check whether the allocation outlived its phase",
	"top_sites":             SiteRuleText,
	"fragmentation":         FragmentationRule,
	"initial_allocated":     "Σ requested bytes alive before the first entry: unmatched frees plus live blocks without an alloc in the trace",
}

// Report summarizes the analysis; with TimelinePoints > 0 in the options it
// includes the timeline and the site series.
func (a *Analysis) Report() *Report {
	return a.ReportFirst(nil)
}

// ReportFirst makes the same report as Report, which it returns, in two
// parts: when first is not nil, it is called with the report made so far,
// everything but the devices' diagnoses (each DeviceReport's
// DiagnosisReport is zero: no steps, no phase spans, no cause), which cost
// the most; the diagnoses are then written into that same report. first
// must be done with the report when it returns (encode it, not keep it).
func (a *Analysis) ReportFirst(first func(*Report)) *Report {
	r := &Report{PickleProtocol: a.Snap.Protocol, Explain: explain}
	if first == nil {
		for _, d := range a.Devices {
			r.Devices = append(r.Devices, d.Report())
		}
		return r
	}
	runs := make([]*diagnosisRun, len(a.Devices))
	for i, d := range a.Devices {
		var dr DeviceReport
		dr, runs[i] = d.reportFirst()
		r.Devices = append(r.Devices, dr)
	}
	first(r)
	for i, g := range runs {
		r.Devices[i].DiagnosisReport = g.finish(&r.Devices[i])
	}
	return r
}

// Headline is what is known of a device as soon as it is replayed: its
// peaks and totals (the same numbers as its DeviceReport), without the
// parts of the report that cost more (sites, stacks, fragmentation).
type Headline struct {
	// Device is the device ordinal.
	Device int `json:"device"`
	// Entries is the number of trace entries.
	Entries int `json:"entries"`
	// PeakAllocatedBytes is the highest sum of live requested bytes.
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes"`
	// PeakIndex is the entry after which the peak was first reached (-1:
	// before the first entry).
	PeakIndex int `json:"peak_index"`
	// PeakTimeUS is that entry's time_us.
	PeakTimeUS int64 `json:"peak_time_us"`
	// PeakReservedBytes is the highest sum of reserved ranges.
	PeakReservedBytes int64 `json:"peak_reserved_bytes"`
	// PeakReservedIndex is the entry after which it was first reached.
	PeakReservedIndex int `json:"peak_reserved_index"`
	// FinalAllocatedBytes and FinalReservedBytes are the allocated and
	// reserved bytes at the end.
	FinalAllocatedBytes int64 `json:"final_allocated_bytes"`
	// FinalReservedBytes is the sum of the segments' total_size.
	FinalReservedBytes int64 `json:"final_reserved_bytes"`
	// FirstTimeUS and LastTimeUS bound the trace window (0 without time_us).
	FirstTimeUS int64 `json:"first_time_us"`
	// LastTimeUS is the time of the last entry.
	LastTimeUS int64 `json:"last_time_us"`
}

// Headline returns the device's headline numbers.
func (d *Device) Headline() Headline {
	h := Headline{
		Device:              d.ID,
		Entries:             d.Trace.Len(),
		PeakAllocatedBytes:  d.initialAllocated + d.peakRel,
		PeakIndex:           d.peakIndex,
		PeakTimeUS:          d.timeAt(d.peakIndex),
		PeakReservedBytes:   d.initialReserved + d.resPeakRel,
		PeakReservedIndex:   d.resPeakIndex,
		FinalAllocatedBytes: d.finalAllocated,
		FinalReservedBytes:  d.finalReserved,
	}
	if n := d.Trace.Len(); n > 0 {
		h.FirstTimeUS, h.LastTimeUS = d.Trace.TimeUS(0), d.Trace.TimeUS(n-1)
	}
	return h
}

// Report summarizes one device.
func (d *Device) Report() DeviceReport {
	r, g := d.reportFirst()
	r.DiagnosisReport = g.finish(&r)
	return r
}

// reportFirst summarizes one device but for its diagnosis (its
// DiagnosisReport is zero), which the returned run completes (finish).
func (d *Device) reportFirst() (DeviceReport, *diagnosisRun) {
	opt := d.a.opt
	h := d.Headline()
	r := DeviceReport{
		Device:                h.Device,
		Entries:               h.Entries,
		Actions:               d.Actions,
		FirstTimeUS:           h.FirstTimeUS,
		LastTimeUS:            h.LastTimeUS,
		PeakAllocatedBytes:    h.PeakAllocatedBytes,
		PeakIndex:             h.PeakIndex,
		PeakTimeUS:            h.PeakTimeUS,
		PeakReservedBytes:     h.PeakReservedBytes,
		PeakReservedIndex:     h.PeakReservedIndex,
		FinalAllocatedBytes:   h.FinalAllocatedBytes,
		FinalPendingFreeBytes: d.finalPending,
		FinalReservedBytes:    h.FinalReservedBytes,
		InitialAllocatedBytes: d.initialAllocated,
		InitialReservedBytes:  d.initialReserved,
		PreTraceAllocations:   d.preTrace,
		Allocations:           d.allocs.len(),
		OOMEvents:             []OOMEvent{},
	}
	// The steps and the flame graph of the diagnosis start now, beside
	// the rest where there is a second core.
	// The allocations' sizes, read once from the trace for the passes
	// over all of them (the diagnosis's and the site series).
	var sizes []int64
	if d.early != nil {
		sizes = d.early.allocSizes()
	} else {
		sizes = d.allocs.takeSizes()
	}
	dg := d.startDiagnosis(stepsHead(d, &r), sizes)
	r.Expandable, r.Streams = d.streamsAndExpandable()
	// The allocations live at the peak, found once for the state and
	// the lists below.
	at := d.clampIndex(d.peakIndex)
	live := d.liveAt(at)
	// The live allocations' sizes from sizes, in hand: a slice read
	// where the trace's pages would be read again, four times.
	peak := d.stateAt(at, live, 0, opt.TopSites, sizes)
	r.CategoriesAtPeak = peak.Categories
	r.TopSites = peak.TopSites
	r.FragmentationAtPeak = peak.Fragmentation
	r.CategoryRules = d.ruleTotals(live, sizes)
	r.LargestAtPeak = d.largest(live, opt.Largest, sizes)
	for _, k := range d.ooms {
		r.OOMEvents = append(r.OOMEvents, d.oomEvent(int(k)))
	}
	if opt.TimelinePoints > 0 {
		r.Timeline = d.timeline
		r.SiteSeries = d.siteSeries(r.Timeline, peak.TopSites, opt.SeriesSites, sizes)
	}
	r.Warnings = append([]string{}, d.Warnings...)
	// The early diagnosis's sizes and source (8 bytes per allocation, a
	// byte per stack) are not kept with the device: a comparison holds
	// the first analysis while it loads the second. The diagnosis run dg
	// holds them until it is finished; another report makes them again,
	// as on one core.
	d.early = nil
	return r, dg
}

func (d *Device) streamsAndExpandable() (bool, int) {
	// The replay found the trace's streams and whether it maps segments.
	streams := map[uint64]bool{}
	for _, s := range d.traceStreams {
		streams[s] = true
	}
	exp := d.mapped
	for _, si := range d.segments {
		seg := &d.a.Snap.Segments[si]
		streams[seg.Stream] = true
		exp = exp || seg.IsExpandable
	}
	return exp, len(streams)
}

// ruleTotals sums the live allocations per classification rule; sizes,
// if not nil, are every allocation's size (allocTable.sizeIn).
func (d *Device) ruleTotals(live []int32, sizes []int64) []RuleBytes {
	var by [numRules]RuleBytes
	t := &d.allocs
	for _, k := range live {
		by[t.rule[k]].Bytes += t.sizeIn(sizes, int(k))
		by[t.rule[k]].Count++
	}
	out := []RuleBytes{}
	for r := Rule(0); r < numRules; r++ {
		if by[r].Count == 0 {
			continue
		}
		rb := by[r]
		rb.Rule, rb.Text = r.ID(), r.Text()
		rb.Category = rules[r].category.String()
		if r == RuleProfilerCategory || r == RuleUserMetadata {
			rb.Category = "(from the label)"
		}
		out = append(out, rb)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Bytes > out[j].Bytes })
	return out
}

// largest returns views of the n biggest live allocations; sizes, if not
// nil, are every allocation's size (allocTable.sizeIn).
func (d *Device) largest(live []int32, n int, sizes []int64) []AllocationView {
	// Biggest first, then by number: a total order.
	type sized struct {
		size int64
		k    int32
	}
	before := func(x, y sized) bool { return x.size > y.size || (x.size == y.size && x.k < y.k) }
	// The n first in that order, kept sorted: most allocations are not
	// among them and cost one comparison with the last kept.
	n = max(0, min(n, len(live)))
	v := make([]sized, 0, n)
	for _, k := range live {
		s := sized{d.allocs.sizeIn(sizes, int(k)), k}
		if len(v) == n && (n == 0 || !before(s, v[n-1])) {
			continue
		}
		j := len(v)
		for j > 0 && before(s, v[j-1]) {
			j--
		}
		if len(v) < n {
			v = append(v, sized{})
		}
		copy(v[j+1:], v[j:len(v)-1])
		v[j] = s
	}
	out := make([]AllocationView, 0, len(v))
	for _, s := range v {
		out = append(out, d.AllocationView(int(s.k)))
	}
	return out
}

// AllocationView describes allocation k (see Allocation); the zero view
// when k is out of range.
func (d *Device) AllocationView(k int) AllocationView {
	if k < 0 || k >= d.allocs.len() {
		return AllocationView{Alloc: -1, Stack: []string{}}
	}
	al := d.Allocation(k)
	v := AllocationView{
		Alloc: int32(k), Address: hex(al.Addr), Bytes: al.Size, BlockBytes: al.BlockSize,
		AllocIndex: int(al.Start), FreeIndex: int(al.End), Origin: al.Origin.String(),
		Site: d.a.Sites[al.Site].Label, Category: al.Category.String(), Rule: al.Rule.ID(), RuleText: al.Rule.Text(),
		Stack: DisplayStack(d.a.Snap, al.Stack),
	}
	if v.Stack == nil {
		v.Stack = []string{}
	}
	return v
}

// oomEvent describes the oom entry at index i.
func (d *Device) oomEvent(i int) OOMEvent {
	e := d.Trace.Entry(i)
	st := d.StateAt(i, 0, 5)
	ev := OOMEvent{
		Index: i, TimeUS: e.TimeUS, RequestedBytes: max(e.Size, 0), DeviceFreeBytes: max(e.DeviceFree, 0), Stream: hex(e.Stream),
		AllocatedBytes: st.AllocatedBytes, ReservedBytes: st.ReservedBytes,
		FreeInReservedBytes:   st.Fragmentation.FreeBytes,
		LargestFreeBlockBytes: st.Fragmentation.LargestFreeBlockBytes,
		Categories:            st.Categories, TopSites: st.TopSites,
		Stack: DisplayStack(d.a.Snap, e.Frames),
	}
	if ev.Stack == nil {
		ev.Stack = []string{}
	}
	return ev
}

// Timeline is the device's downsampled allocated/reserved curve (nil
// without Options.TimelinePoints, or without entries), made from the
// replay's buckets once the replay is done (see points): every report's
// Timeline is this slice, which its users must not modify.
func (d *Device) Timeline() []Point { return d.timeline }

// points turns buckets into points in index order, adding the offsets to
// the bucket values. Each bucket gives its lowest and highest allocated
// state and its highest reserved state, so the exact peaks are points; the
// first and last states are points too.
func (d *Device) points(bs buckets, allocOffset, resOffset int64) []Point {
	var pts []Point
	add := func(i int32, a, r int64) {
		if n := len(pts); n > 0 && pts[n-1].Index == int(i) {
			return
		}
		pts = append(pts, Point{Index: int(i), TimeUS: d.timeAt(int(i)), Allocated: allocOffset + a, Reserved: resOffset + r})
	}
	if !bs.seen {
		return nil
	}
	add(bs.first.i, bs.first.a, bs.first.r)
	for _, b := range bs.b {
		if !b.used {
			continue
		}
		s := []sample{{b.minI, b.minA, b.minAR}, {b.maxI, b.maxA, b.maxAR}, {b.resI, b.resA, b.resR}}
		sort.Slice(s, func(x, y int) bool { return s[x].i < s[y].i })
		for _, v := range s {
			if v.i > bs.first.i {
				add(v.i, v.a, v.r)
			}
		}
	}
	if n := len(pts); pts[n-1].Index < int(bs.last.i) {
		add(bs.last.i, bs.last.a, bs.last.r)
	}
	return pts
}

// siteSeries splits the timeline by the top sites at the peak; sizes are
// the allocations' sizes (allocTable.sizes).
func (d *Device) siteSeries(pts []Point, top []SiteBytes, k int, sizes []int64) *SiteSeries {
	if len(pts) == 0 {
		return nil
	}
	if len(top) > k {
		top = top[:k]
	}
	// band[s] is site s's band: its place among the top sites, or the
	// last band, "other sites".
	band := make([]int32, len(d.a.Sites))
	for s := range band {
		band[s] = int32(len(top))
	}
	ss := &SiteSeries{}
	for j, sb := range top {
		band[sb.SiteIndex] = int32(j)
		ss.Sites = append(ss.Sites, sb.Label)
		ss.SiteIndex = append(ss.SiteIndex, sb.SiteIndex)
	}
	ss.Sites = append(ss.Sites, "other sites")
	ss.SiteIndex = append(ss.SiteIndex, -1)
	m := len(pts)
	diff := make([][]int64, len(ss.Sites))
	for j := range diff {
		diff[j] = make([]int64, m+1)
	}
	first := newPointFinder(pts)
	lastIdx := pts[m-1].Index
	t := &d.allocs
	next := 0 // first(start) of the allocations from the trace, whose starts grow with k
	// The columns in locals: the loop stores, after which the compiler
	// would load them again through t.
	starts, ends, sites := t.start, t.end[:len(t.start)], t.site[:len(t.start)]
	sizes = sizes[:len(t.start)]
	lo0, shift, cells := first.lo, first.shift, first.cells
	inBlocks(t.len(), func(blo, bhi int) {
		for k := blo; k < bhi; k++ {
			var j0 int
			if s := int(starts[k]); s >= 0 {
				for next < m && pts[next].Index < s {
					next++
				}
				j0 = next
			} else {
				j0 = first.first(s)
			}
			// j1 := first.first(end), inlined: a call per allocation
			// costs more than the search in WebAssembly.
			var j1 int
			switch idx := int(ends[k]); {
			case m == 0 || idx <= lo0:
			case idx > lastIdx:
				j1 = m
			default:
				c := (idx - lo0) >> shift
				lo, hi := int(cells[c]), int(cells[c+1])
				for lo < hi {
					h := int(uint(lo+hi) >> 1)
					if pts[h].Index < idx {
						lo = h + 1
					} else {
						hi = h
					}
				}
				j1 = lo
			}
			if j0 >= j1 {
				continue
			}
			g, size := band[sites[k]], sizes[k]
			diff[g][j0] += size
			diff[g][j1] -= size
		}
	})
	ss.Values = make([][]int64, len(diff))
	for g := range diff {
		row := make([]int64, m)
		var run int64
		for j := 0; j < m; j++ {
			run += diff[g][j]
			row[j] = run
		}
		ss.Values[g] = row
	}
	return ss
}

// pointFinder finds the first point at or after a trace index among
// points in index order, without a bisection of all of them per query: a
// table over the index range, a few cells per point, gives the points
// whose cell holds the index, and the search bisects those alone.
type pointFinder struct {
	pts []Point
	// lo is the first point's index, 1<<shift the indices per cell (a
	// power of two: a cell is found by a shift, not a division); cells[c]
	// is the first point at or after the start of cell c, cells[len-1] the
	// number of points.
	lo, shift int
	cells     []int32
}

func newPointFinder(pts []Point) pointFinder {
	f := pointFinder{pts: pts}
	m := len(pts)
	if m == 0 {
		return f
	}
	f.lo = pts[0].Index
	span := pts[m-1].Index - f.lo + 1
	n := min(span, 4*m)
	for 1<<f.shift < (span+n-1)/n {
		f.shift++
	}
	width := 1 << f.shift
	n = (span + width - 1) / width
	f.cells = make([]int32, n+1)
	j := 0
	for c := range n {
		for j < m && pts[j].Index < f.lo+c*width {
			j++
		}
		f.cells[c] = int32(j)
	}
	f.cells[n] = int32(m)
	return f
}

// first returns the first j with pts[j].Index >= idx (len(pts) when none).
func (f *pointFinder) first(idx int) int {
	m := len(f.pts)
	switch {
	case m == 0 || idx <= f.lo:
		return 0
	case idx > f.pts[m-1].Index:
		return m
	}
	// Points before cells[c] are below the cell's start, so below idx; the
	// point cells[c+1] is at or after the next cell's start, above idx.
	c := (idx - f.lo) >> f.shift
	lo, hi := int(f.cells[c]), int(f.cells[c+1])
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if f.pts[h].Index < idx {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return lo
}

// Busiest returns the index in r.Devices of the device with the most trace
// entries (the first of equals), the device the page shows first
// (docs/snapshot.md#defaults); -1 when there is none.
func (r *Report) Busiest() int {
	return busiest(len(r.Devices), func(i int) int { return r.Devices[i].Entries })
}

// BusiestHeadline is Busiest for the headlines the worker sends first.
func BusiestHeadline(hs []Headline) int {
	return busiest(len(hs), func(i int) int { return hs[i].Entries })
}

// busiest returns the i < n with the most entries(i), the first of
// equals; -1 when n is 0.
func busiest(n int, entries func(i int) int) int {
	best := -1
	for i := range n {
		if best < 0 || entries(i) > entries(best) {
			best = i
		}
	}
	return best
}
