package analysis

import (
	"math"
	"slices"

	"oomscope/snapshot"
)

// Options tunes an analysis. The zero value uses the defaults.
type Options struct {
	// TimelinePoints is the number of points of the downsampled timeline and
	// site series (0: none, the CLI's choice; negative:
	// DefaultTimelinePoints).
	TimelinePoints int
	// SeriesSites is how many top sites get their own band in the stacked
	// series; the rest go to "other" (default DefaultSeriesSites).
	SeriesSites int
	// TopSites is how many sites the report lists (default DefaultTopSites).
	TopSites int
	// Largest is how many of the largest allocations alive at the peak the
	// report lists (default DefaultLargest).
	Largest int
}

// Defaults of Options, the CLI and the page (package load uses them).
const (
	// DefaultTimelinePoints is a timeline resolution good for a page-wide
	// chart.
	DefaultTimelinePoints = 800
	// DefaultSeriesSites is the number of site bands of the stacked series.
	DefaultSeriesSites = 8
	// DefaultTopSites is the number of allocation sites listed.
	DefaultTopSites = 10
	// DefaultLargest is the number of largest allocations listed.
	DefaultLargest = 20
)

func (o Options) withDefaults() Options {
	if o.TimelinePoints < 0 {
		o.TimelinePoints = DefaultTimelinePoints
	}
	if o.SeriesSites <= 0 {
		o.SeriesSites = DefaultSeriesSites
	}
	if o.TopSites <= 0 {
		o.TopSites = DefaultTopSites
	}
	if o.Largest <= 0 {
		o.Largest = DefaultLargest
	}
	return o
}

// Origin tells where an allocation's live range comes from.
type Origin uint8

// Allocation origins.
const (
	// FromTrace: its alloc entry is in the trace.
	FromTrace Origin = iota
	// PreTraceFreed: only its free is in the trace; it was allocated before
	// the trace window (late recording or ring-buffer wrap).
	PreTraceFreed
	// PreTraceLive: a live block in the segments with no alloc in the trace;
	// alive for the whole trace window (a "ghost").
	PreTraceLive
)

// String returns the origin's JSON name, e.g. "pre_trace_live".
func (o Origin) String() string {
	return [...]string{"trace", "pre_trace_freed", "pre_trace_live"}[o]
}

// Allocation is one live range of a block, from its alloc to its
// free_completed (docs/snapshot.md#pairing-rule).
type Allocation struct {
	// Addr is the block address.
	Addr uint64
	// Size is the requested bytes (what alloc/free entries and
	// requested_size carry).
	Size int64
	// BlockSize is the block's rounded size when the segments show it (the
	// allocation is still alive at the end), 0 otherwise.
	BlockSize int64
	// Start is the index of the alloc entry; -1 when it predates the trace.
	Start int32
	// End is the index of the free_completed entry; the trace length when it
	// is still alive at the end.
	End int32
	// FreeRequested is the index of its free_requested entry, -1 if none.
	FreeRequested int32
	// Stack is the allocation stack; for PreTraceFreed the free's stack.
	Stack snapshot.StackID
	// Site indexes Analysis.Sites.
	Site int32
	// Origin tells where the live range comes from.
	Origin Origin
	// Category and Rule are the bucket and the rule that chose it.
	Category Category
	// Rule is the classification rule that fired.
	Rule Rule
	// Pending is true when the segments show the block as
	// active_pending_free (freed but waiting for other streams).
	Pending bool
}

// aliveAt reports whether a is live in the state after entry i (i = -1 is
// the state before the first entry).
func (a *Allocation) aliveAt(i int) bool { return int(a.Start) <= i && i < int(a.End) }

// Analysis is a replayed snapshot: one Device per device with a trace or
// segments, plus the allocation sites shared by all devices.
type Analysis struct {
	// Snap is the analysed snapshot.
	Snap *snapshot.Snapshot
	// Devices lists the devices in ordinal order.
	Devices []*Device
	// Sites are the distinct allocation sites; Allocation.Site indexes it.
	Sites []Site

	opt       Options
	siteIndex map[string]int32
	// siteBySum caches the site index of each stack summary's site part.
	siteBySum map[snapshot.StackSummary]int32
	// maxSize is the largest plausible size (see sane).
	maxSize int64
}

// maxPlausible is the largest size taken as real: no device has a
// pebibyte.
const maxPlausible = 1 << 50

// sane returns n as the analysis counts a size: negative sizes and sizes
// over maxSize (a pebibyte, or less when that many sizes could add up past
// 2^63) are impossible and count as 0, so that no sum wraps and no memory
// is shown negative. ok is false for those.
func (a *Analysis) sane(n int64) (v int64, ok bool) {
	if n < 0 || n > a.maxSize {
		return 0, false
	}
	return n, true
}

// sizeLimit is the maxSize of a snapshot: every sum of sizes stays below
// 2^63.
func sizeLimit(s *snapshot.Snapshot) int64 {
	n := int64(1)
	for _, t := range s.DeviceTraces {
		n += int64(t.Len())
	}
	for i := range s.Segments {
		n += 1 + int64(len(s.Segments[i].Blocks))
	}
	return min(maxPlausible, math.MaxInt64/(2*n))
}

// Analyze replays every device of s. It never fails: inconsistencies between
// the trace and the segments are reported as warnings on the device. A
// snapshot decoded without Summarizer gets its stacks summarized here
// (s.Stacks is changed).
func Analyze(s *snapshot.Snapshot, opt Options) *Analysis {
	a := &Analysis{
		Snap:      s,
		opt:       opt.withDefaults(),
		siteIndex: map[string]int32{},
		siteBySum: map[snapshot.StackSummary]int32{},
		maxSize:   sizeLimit(s),
	}
	if !s.Stacks.Summarized() {
		s.Stacks.Summarize(s.Frames, Summarizer())
	}
	segs := segmentsByDevice(s.Segments)
	for _, d := range deviceOrdinals(s, segs) {
		a.Devices = append(a.Devices, a.replay(d, segs[d]))
	}
	return a
}

// segmentsByDevice lists the indices of each device's segments.
func segmentsByDevice(segs []snapshot.Segment) map[int][]int {
	out := map[int][]int{}
	for i := range segs {
		out[segs[i].Device] = append(out[segs[i].Device], i)
	}
	return out
}

// Device returns the analysis of device ordinal d, or nil.
func (a *Analysis) Device(d int) *Device {
	for _, dev := range a.Devices {
		if dev.ID == d {
			return dev
		}
	}
	return nil
}

// deviceOrdinals lists devices with a non-empty trace or any segment.
func deviceOrdinals(s *snapshot.Snapshot, segs map[int][]int) []int {
	seen := map[int]bool{}
	for d, t := range s.DeviceTraces {
		if t.Len() > 0 {
			seen[d] = true
		}
	}
	for d := range segs {
		seen[d] = true
	}
	out := make([]int, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// siteOf returns the site index of a stack.
func (a *Analysis) siteOf(id snapshot.StackID) int32 {
	key := a.Snap.Stacks.Summary(id) &^ 15 // the site part
	if v, ok := a.siteBySum[key]; ok {
		return v
	}
	v := a.internSite(siteOfSummary(a.Snap.Frames, key))
	a.siteBySum[key] = v
	return v
}

func (a *Analysis) internSite(s Site) int32 {
	if v, ok := a.siteIndex[s.Key]; ok {
		return v
	}
	v := int32(len(a.Sites))
	a.Sites = append(a.Sites, s)
	a.siteIndex[s.Key] = v
	return v
}

// phaseOf returns the phase a stack points to.
func (a *Analysis) phaseOf(id snapshot.StackID) phase { return summaryPhase(a.Snap.Stacks.Summary(id)) }
