package chart

import (
	"slices"
	"strconv"

	"oomscope/bytesize"
	"oomscope/untrusted"
)

// RankRow is one row of the table of ranks: a file of the job, queued,
// being read, analysed or failed.
type RankRow struct {
	// Index is the row's place in the overview (the open button's
	// data-index); Rank the rank read from the file name (-1: none).
	Index, Rank int
	// Label names it ("rank 3", "file 2"); File is the file's name.
	Label, File string
	// State is "queued", "running", "done" or "failed".
	State string
	// Outlier marks it, Why says how; Error is why it failed.
	Outlier bool
	Why     []string
	Error   string
	// Read and Size are the bytes read so far and the file's size.
	Read, Size int64
	// The rank's numbers (State "done"): peaks, what is left at the end,
	// out-of-memory events, devices.
	Alloc, Res, FinalAlloc, FinalRes int64
	OOMs, Devices                    int
}

// Equal says whether r and o are the same row (RankRowHTML writes the
// same HTML for both).
func (r RankRow) Equal(o RankRow) bool {
	return r.Index == o.Index && r.Rank == o.Rank && r.Label == o.Label && r.File == o.File && r.State == o.State &&
		r.Outlier == o.Outlier && slices.Equal(r.Why, o.Why) && r.Error == o.Error && r.Read == o.Read && r.Size == o.Size &&
		r.Alloc == o.Alloc && r.Res == o.Res && r.FinalAlloc == o.FinalAlloc && r.FinalRes == o.FinalRes &&
		r.OOMs == o.OOMs && r.Devices == o.Devices
}

// RankTable writes the table of ranks (#snap-ranks-table) as HTML: a row
// per rank (RankRowHTML) in its body. RankTable(nil, u) is the table
// without rows, whose body the page fills and then writes again only
// where a row changed.
func RankTable(rows []RankRow, u bytesize.Unit) string {
	b := make([]byte, 0, 1024+600*len(rows))
	b = append(b, `<table id="snap-ranks-table" class="snap-ranks-table"><caption>Peaks per rank: open a rank for its full analysis</caption>`+
		`<thead><tr><th>rank</th><th class="num">peak allocated</th><th class="num">peak reserved</th>`+
		`<th class="num snap-wide">allocated at the end</th><th class="num snap-wide">reserved at the end</th>`+
		`<th class="num">OOMs</th><th>file</th></tr></thead><tbody>`...)
	for _, r := range rows {
		b = appendRankRow(b, r, u)
	}
	return string(append(b, `</tbody></table>`...))
}

// RankRowHTML writes one row of the table of ranks (a tr): its peaks,
// what is left at the end, its out-of-memory events and its file, an
// outlier marked with its reasons, a failed file's error, and for an
// analysed rank a button (class snap-rank-open, data-index) that the page
// opens.
func RankRowHTML(r RankRow, u bytesize.Unit) string {
	return string(appendRankRow(make([]byte, 0, 600), r, u))
}

// appendRankRow appends RankRowHTML(r, u) to b.
func appendRankRow(b []byte, r RankRow, u bytesize.Unit) []byte {
	num := func(b []byte, v int64, cls string) []byte {
		b = append(b, `<td class="`...)
		b = append(b, cls...)
		b = append(b, `" title="`...)
		b = append(b, bytesize.Commas(v)...)
		b = append(b, ` B">`...)
		b = append(b, bytesize.Format(v, u)...)
		return append(b, `</td>`...)
	}
	state := className(r.State)
	label := untrusted.HTML(r.Label)
	b = append(b, `<tr class="snap-rank-`...)
	b = append(b, state...)
	if r.Outlier {
		b = append(b, ` snap-rank-outlier`...)
	}
	b = append(b, `" data-index="`...)
	b = strconv.AppendInt(b, int64(r.Index), 10)
	b = append(b, `" data-rank="`...)
	b = strconv.AppendInt(b, int64(r.Rank), 10)
	b = append(b, `" data-state="`...)
	b = append(b, state...)
	b = append(b, `" data-outlier="`...)
	b = strconv.AppendBool(b, r.Outlier)
	if r.State == "done" {
		b = append(b, `" data-peak-allocated="`...)
		b = strconv.AppendInt(b, r.Alloc, 10)
		b = append(b, `" data-peak-reserved="`...)
		b = strconv.AppendInt(b, r.Res, 10)
	}
	b = append(b, `"><th scope="row">`...)
	switch r.State {
	case "done":
		b = append(b, `<button type="button" class="snap-rank-open" data-index="`...)
		b = strconv.AppendInt(b, int64(r.Index), 10)
		b = append(b, `" title="Open `...)
		b = append(b, label...)
		b = append(b, ` in the full view">`...)
		b = append(b, label...)
		b = append(b, `</button></th>`...)
		b = num(b, r.Alloc, "num")
		b = num(b, r.Res, "num")
		b = num(b, r.FinalAlloc, "num snap-wide")
		b = num(b, r.FinalRes, "num snap-wide")
		b = append(b, `<td class="num">`...)
		b = strconv.AppendInt(b, int64(r.OOMs), 10)
		b = append(b, `</td>`...)
	case "failed":
		b = append(b, label...)
		b = append(b, `</th><td colspan="5" class="error snap-rank-error">`...)
		b = append(b, untrusted.HTML(r.Error)...)
		b = append(b, `</td>`...)
	default:
		b = append(b, label...)
		b = append(b, `</th><td colspan="5" class="muted">`...)
		if r.State == "running" {
			b = append(b, "reading… "+bytesize.Format(r.Read, u)+" of "+bytesize.Format(r.Size, u)...)
		} else {
			b = append(b, "waiting for a worker"...)
		}
		b = append(b, `</td>`...)
	}
	b = append(b, `<td class="snap-rank-file">`...)
	b = append(b, untrusted.HTML(r.File)...)
	if r.State == "done" {
		if r.Outlier {
			for _, w := range r.Why {
				b = append(b, `<br/><strong class="snap-rank-why">outlier: `...)
				b = append(b, untrusted.HTML(w)...)
				b = append(b, `</strong>`...)
			}
		}
		if r.Devices > 1 {
			b = append(b, `<br/><span class="muted">`...)
			b = strconv.AppendInt(b, int64(r.Devices), 10)
			b = append(b, ` devices: the highest peaks</span>`...)
		}
	}
	b = append(b, `</td></tr>`...)
	return b
}
