package load

import (
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
)

// Rank is one file of a distributed job (one snapshot per rank) in an
// Overview.
type Rank struct {
	// File is the file's name.
	File string `json:"file"`
	// Rank is the rank read from the file name (RankOf), -1 if none.
	Rank int `json:"rank"`
	// Bytes is the file's size (0 if not known).
	Bytes int64 `json:"bytes,omitempty"`
	// Devices are the headline numbers of each device with data.
	Devices []analysis.Headline `json:"devices,omitempty"`
	// PeakAllocatedBytes and PeakReservedBytes are the highest of its
	// devices.
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes"`
	PeakReservedBytes  int64 `json:"peak_reserved_bytes"`
	// OOMEvents is the number of out-of-memory events of all its devices.
	OOMEvents int `json:"oom_events"`
	// Line is the memory over time of its device of the highest peak
	// allocated, reduced to at most about RankPoints points (the exact
	// peaks among them), for the page's chart of all ranks at once; nil
	// when the file was analysed without a timeline (the CLI).
	Line *RankLine `json:"line,omitempty"`
	// Error says why the file could not be analysed ("" if it was).
	Error string `json:"error,omitempty"`
	// Outlier is set when the rank's peaks stand out (see OutlierRule);
	// Why says how.
	Outlier bool     `json:"outlier"`
	Why     []string `json:"why,omitempty"`
}

// NewRank is the overview row of a file's headlines.
func NewRank(file string, hs []analysis.Headline) Rank {
	r := Rank{File: file, Rank: RankOf(file), Devices: hs}
	for _, h := range hs {
		r.PeakAllocatedBytes = max(r.PeakAllocatedBytes, h.PeakAllocatedBytes)
		r.PeakReservedBytes = max(r.PeakReservedBytes, h.PeakReservedBytes)
	}
	return r
}

// RankLine is a rank's memory over time: the states of one device's
// timeline (analysis.Point: trace index, time_us, allocated and reserved
// bytes), downsampled as the page's timeline is, so that its highest
// allocated and reserved states are among them.
type RankLine struct {
	// Device is the device the line follows.
	Device int `json:"device"`
	// Points are in trace order.
	Points []analysis.Point `json:"points"`
}

// RankPoints is the timeline resolution a rank is analysed with for the
// overview (analysis.Options.TimelinePoints): 40 buckets of the trace,
// each giving its lowest and highest allocated and its highest reserved
// state, so at most 122 points (about 7 KB of JSON per rank).
const RankPoints = 122

// FileRank is the overview row of a loaded file: NewRank of its devices'
// headlines, with its size, its out-of-memory events and, when the file was
// analysed with a timeline (RankPoints), the Line of its device of the
// highest peak allocated. It keeps nothing else of the analysis, which the
// caller can drop.
func FileRank(f *File) Rank {
	hs := make([]analysis.Headline, len(f.Analysis.Devices))
	for i, d := range f.Analysis.Devices {
		hs[i] = d.Headline()
	}
	r := NewRank(f.Name, hs)
	r.Bytes = max(f.Bytes, 0)
	best := -1
	for i, d := range f.Report.Devices {
		r.OOMEvents += len(d.OOMEvents)
		if len(d.Timeline) > 0 && (best < 0 || d.PeakAllocatedBytes > f.Report.Devices[best].PeakAllocatedBytes) {
			best = i
		}
	}
	if best >= 0 {
		d := f.Report.Devices[best]
		r.Line = &RankLine{Device: d.Device, Points: slices.Clone(d.Timeline)}
	}
	return r
}

// MaxRanks is the most files the page analyses as the ranks of one job.
const MaxRanks = 128

// IsSnapshotName reports whether a file in a directory is taken as a
// snapshot of a rank: its name ends in .pickle, .pkl or .gz.
func IsSnapshotName(name string) bool {
	return strings.HasSuffix(name, ".pickle") || strings.HasSuffix(name, ".pkl") || strings.HasSuffix(name, ".gz")
}

// Overview compares the ranks of a job.
type Overview struct {
	// Ranks are in rank order (then by file name; files without a rank
	// last).
	Ranks []Rank `json:"ranks"`
	// MedianAllocatedBytes and MedianReservedBytes are the medians of the
	// ranks' peaks (over the ranks analysed).
	MedianAllocatedBytes int64 `json:"median_peak_allocated_bytes"`
	MedianReservedBytes  int64 `json:"median_peak_reserved_bytes"`
	// Rule explains the outliers.
	Rule string `json:"rule"`
}

// OutlierRule says when a rank is marked as an outlier.
const OutlierRule = "a rank is an outlier when its peak allocated or peak reserved memory differs from the median over " +
	"all ranks by more than 5 % and by more than 256 MiB (needs 3 ranks or more); rank 0 often holds more (the CUDA " +
	"context of collectives, gathered outputs, checkpoint buffers)"

// Outlier thresholds (OutlierRule).
const (
	outlierShare = 0.05
	outlierBytes = 256 << 20
)

// OutlierBand is the range of peaks that are not outliers around a median
// (OutlierRule): a peak is an outlier when it lies outside lo … hi, that
// is when it differs from the median by more than 5 % of it and by more
// than 256 MiB.
func OutlierBand(median int64) (lo, hi int64) {
	d := max(int64(outlierBytes), int64(outlierShare*float64(median)))
	return median - d, median + d
}

// outlying reports whether a peak v lies outside the band of the median.
func outlying(v, median int64) bool {
	lo, hi := OutlierBand(median)
	return v < lo || v > hi
}

// NewOverview sorts the ranks and marks the outliers; marks the rows
// already had are replaced (the page marks its rows again as more ranks
// finish).
func NewOverview(ranks []Rank) Overview {
	o := Overview{Ranks: slices.Clone(ranks), Rule: OutlierRule}
	for i := range o.Ranks {
		o.Ranks[i].Outlier, o.Ranks[i].Why = false, nil
	}
	slices.SortStableFunc(o.Ranks, func(a, b Rank) int {
		if (a.Rank < 0) != (b.Rank < 0) {
			return cmp.Compare(b.Rank, a.Rank) // ranked files first
		}
		if c := cmp.Compare(a.Rank, b.Rank); c != 0 {
			return c
		}
		return cmp.Compare(a.File, b.File)
	})
	var alloc, res []int64
	for _, r := range o.Ranks {
		if r.Error == "" {
			alloc, res = append(alloc, r.PeakAllocatedBytes), append(res, r.PeakReservedBytes)
		}
	}
	o.MedianAllocatedBytes, o.MedianReservedBytes = median(alloc), median(res)
	if len(alloc) < 3 {
		return o
	}
	for i := range o.Ranks {
		r := &o.Ranks[i]
		if r.Error != "" {
			continue
		}
		for _, c := range []struct {
			what      string
			v, median int64
		}{{"peak allocated", r.PeakAllocatedBytes, o.MedianAllocatedBytes}, {"peak reserved", r.PeakReservedBytes, o.MedianReservedBytes}} {
			d := c.v - c.median
			if outlying(c.v, c.median) {
				dir := "above"
				if d < 0 {
					dir = "below"
				}
				r.Outlier = true
				r.Why = append(r.Why, fmt.Sprintf("%s %s %s the median %s", c.what, bytesize.FormatGiB(abs(d)), dir,
					bytesize.FormatGiB(c.median)))
			}
		}
	}
	return o
}

func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return s[n/2-1] + (s[n/2]-s[n/2-1])/2
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

var (
	rankWord  = regexp.MustCompile(`(?i)rank[_-]?(\d+)`)
	lastDigit = regexp.MustCompile(`(?:^|[_.-])(\d+)$`)
)

// RankOf reads a rank from a file name: the number after "rank"
// ("rank3", "rank_03", "snapshot-rank-7.pickle"), else a number ending the
// base name after a separator ("mem_snapshot_5.pickle"); -1 if neither.
func RankOf(file string) int {
	base := filepath.Base(file)
	for _, ext := range []string{".gz", ".pickle", ".pkl"} {
		base = strings.TrimSuffix(base, ext)
	}
	m := rankWord.FindStringSubmatch(base)
	if m == nil {
		m = lastDigit.FindStringSubmatch(base)
	}
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n > 1<<20 {
		return -1
	}
	return n
}
