package triage

import (
	"fmt"
)

// Segment is one part of the card as a message describes it.
type Segment struct {
	// Name is allocated, reserved-unused, non-pytorch, other-processes,
	// unaccounted or free.
	Name string `json:"name"`
	// Label is a short human label.
	Label string `json:"label"`
	// Bytes is the segment's size.
	Bytes int64 `json:"bytes"`
	// Formula says where the size comes from.
	Formula string `json:"formula"`
}

// Bar is the card drawn as one horizontal bar: who holds what, and the
// failed request drawn against the free part.
type Bar struct {
	// Total is the card's capacity (or the MPS allowance).
	Total int64 `json:"total"`
	// Segments, in drawing order, sum to Total.
	Segments []Segment `json:"segments"`
	// Request is the failed request, 0 when not printed.
	Request int64 `json:"request"`
	// RequestStart is where the request is drawn: the start of the free part.
	RequestStart int64 `json:"request_start"`
	// Shortfall is how much of the request the free part cannot hold.
	Shortfall int64 `json:"shortfall"`
	// Note explains an adjustment (figures larger than the card).
	Note string `json:"note,omitempty"`
}

// CardBar lays out the card f describes, or reports false when the message
// prints no capacity.
func CardBar(f *Finding) (Bar, bool) {
	tot, ok := val(f.TotalBytes)
	mps := false
	if !ok {
		if tot, ok = val(f.MaxAllowedBytes); !ok || tot <= 0 {
			return Bar{}, false
		}
		mps = true
	}
	if tot <= 0 || tot >= 0x1p62 {
		return Bar{}, false
	}
	var segs []Segment
	used := 0.0
	add := func(name, label string, x float64, formula string) {
		if x <= 0 {
			return
		}
		segs = append(segs, Segment{Name: name, Label: label, Bytes: saturate(x), Formula: formula})
		used += x
	}
	free, hasFree := val(f.FreeBytes)
	if mps {
		ma, _ := val(f.MPSAllocatedBytes)
		oa, _ := val(f.OtherAllocationsBytes)
		add("allocated", "MPS allocated", ma, "printed MPS allocated")
		add("non-pytorch", "Other allocations", oa, "printed other allocations")
		if rest := tot - ma - oa; rest > 0 {
			free, hasFree = rest, true
		} else {
			free, hasFree = 0, true
		}
	} else {
		a, hasA := val(f.AllocatedBytes)
		if !hasA {
			a, hasA = val(f.AlreadyAllocatedBytes)
		}
		ru, hasRU := val(f.ReservedUnallocatedBytes)
		if !hasRU {
			ru, hasRU = derivedValue(f, "reserved_unallocated")
		}
		add("allocated", "Allocated by PyTorch", a, "printed allocated")
		add("reserved-unused", "Reserved, unallocated", ru, "reserved by PyTorch but unallocated")
		mine := a + ru
		if np, ok := derivedValue(f, "non_pytorch_in_process"); ok && np > 0 {
			add("non-pytorch", "Non-PyTorch (this process)", np, "this process in use − reserved")
			mine += np
		}
		others, _ := derivedValue(f, "other_processes_total")
		add("other-processes", "Other processes", others, "sum of Process N figures")
		if hasFree && (hasA || hasRU) {
			add("unaccounted", "Outside PyTorch (not itemised)", tot-free-mine-others, "total − free − the parts above")
		}
		if !hasA && !hasRU && hasFree {
			add("unaccounted", "In use", tot-free, "total − free")
		}
	}
	b := Bar{Total: saturate(tot)}
	if hasFree {
		add("free", "Free", free, "printed free")
	}
	if !hasFree && used < tot {
		add("unaccounted", "Not printed", tot-used, "total − the parts printed")
	}
	if used > tot*1.0001 {
		// Windows' shared-memory fallback lets PyTorch exceed the card.
		b.Note = fmt.Sprintf("the figures add up to %s, more than the %s card (Windows lets PyTorch spill into shared system memory): drawn to scale of their sum", hb(used), hb(tot))
		b.Total = saturate(used)
	}
	b.Segments = segs
	if t, ok := val(f.TriedBytes); ok && t < 0x1p62 {
		b.Request = saturate(t)
		b.RequestStart = b.Total - min(b.Total, saturate(free))
		if !hasFree {
			b.RequestStart = b.Total
		}
		b.Shortfall = max(0, b.Request-min(b.Request, saturate(free)))
	}
	return b, true
}

// derivedValue returns a derived number by name.
func derivedValue(f *Finding, name string) (float64, bool) {
	for _, d := range f.Derived {
		if d.Name == name {
			return float64(d.Bytes), true
		}
	}
	return 0, false
}
