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
	// siteBySum caches the site index of each stack summary's site part
	// (looked up once per allocation).
	siteBySum *uintMap[int32]
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
func Analyze(s *snapshot.Snapshot, opt Options) *Analysis { return AnalyzeSummary(s, opt, nil) }

// AnalyzeSummary is Analyze that also calls summary (if not nil) with each
// device's Headline and Timeline (nil without Options.TimelinePoints: the
// report's Timeline, the same slice, not to be modified) as soon as every
// device is replayed. Where the
// analysis runs on one goroutine (WebAssembly), that is before the
// allocations are classified: the headline numbers need the replay
// alone, and classify, which costs a quarter of the analysis there, runs
// after summary returns (device by device, in order: the sites are
// numbered as Analyze numbers them), as does the split of the
// allocations' ends (allocTable.splitEnds). Elsewhere each device is classified
// right after its replay, beside the early diagnosis, as Analyze does.
func AnalyzeSummary(s *snapshot.Snapshot, opt Options, summary func(hs []Headline, timelines [][]Point)) *Analysis {
	a := &Analysis{
		Snap:      s,
		opt:       opt.withDefaults(),
		siteIndex: map[string]int32{},
		siteBySum: newUintMap[int32](),
		maxSize:   sizeLimit(s),
	}
	if !s.Stacks.Summarized() {
		s.Stacks.Summarize(s.Frames, Summarizer())
	}
	segs := segmentsByDevice(s.Segments)
	// Replayed devices not yet classified (one goroutine: all of them).
	var unclassified []*Device
	for _, d := range deviceOrdinals(s, segs) {
		dev := a.replay(d, segs[d])
		a.Devices = append(a.Devices, dev)
		if concurrent() {
			dev.allocs.splitEnds()
			dev.early = dev.startEarly()
			dev.classify(false)
		} else {
			unclassified = append(unclassified, dev)
		}
	}
	if summary != nil {
		hs := make([]Headline, len(a.Devices))
		tls := make([][]Point, len(a.Devices))
		for i, d := range a.Devices {
			hs[i], tls[i] = d.Headline(), d.timeline
		}
		summary(hs, tls)
	}
	for _, dev := range unclassified {
		dev.allocs.splitEnds()
		// The diagnosis comes after classify here: classify makes its
		// source's stack bytes of the allocations on the way.
		dev.classify(true)
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
	return a.siteOfSummary(a.Snap.Stacks.Summary(id))
}

// siteOfSummary returns the site index of a stack whose summary is sum.
func (a *Analysis) siteOfSummary(sum snapshot.StackSummary) int32 {
	key := sum &^ 15 // the site part
	if v, ok := a.siteBySum.get(uint64(key)); ok {
		return v
	}
	v := a.internSite(siteOfSummary(a.Snap.Frames, key))
	a.siteBySum.put(uint64(key), v)
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
