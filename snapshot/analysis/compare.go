package analysis

import (
	"cmp"
	"slices"
)

// Delta is a before/after pair of byte counts.
type Delta struct {
	// Before is the first snapshot's value.
	Before int64 `json:"before"`
	// After is the second snapshot's value.
	After int64 `json:"after"`
	// Delta is After − Before.
	Delta int64 `json:"delta"`
}

func delta(b, a int64) Delta { return Delta{b, a, a - b} }

// SiteDelta is how one allocation site's bytes at the peak changed.
type SiteDelta struct {
	// Site is the site label; Key groups it across snapshots.
	Site string `json:"site"`
	// Key is the grouping key.
	Key string `json:"key"`
	// Bytes compares the site's bytes at each snapshot's peak.
	Bytes Delta `json:"bytes"`
	// CountBefore and CountAfter are its live allocations at each peak.
	CountBefore int `json:"count_before"`
	// CountAfter is the count at the second peak.
	CountAfter int `json:"count_after"`
}

// CategoryDelta is how one category's bytes at the peak changed.
type CategoryDelta struct {
	// Category is the category name.
	Category string `json:"category"`
	// Bytes compares the category at each snapshot's peak.
	Bytes Delta `json:"bytes"`
}

// DeviceComparison compares one device of two snapshots.
type DeviceComparison struct {
	// DeviceBefore and DeviceAfter are the compared ordinals.
	DeviceBefore int `json:"device_before"`
	// DeviceAfter is the second snapshot's ordinal.
	DeviceAfter int `json:"device_after"`
	// PeakAllocated, PeakReserved, FinalAllocated and FinalReserved compare
	// the headline numbers.
	PeakAllocated Delta `json:"peak_allocated_bytes"`
	// PeakReserved compares the reserved peaks.
	PeakReserved Delta `json:"peak_reserved_bytes"`
	// FinalAllocated compares the final allocated bytes.
	FinalAllocated Delta `json:"final_allocated_bytes"`
	// FinalReserved compares the final reserved bytes.
	FinalReserved Delta `json:"final_reserved_bytes"`
	// Categories compares the split at each peak.
	Categories []CategoryDelta `json:"categories"`
	// Sites lists the sites whose bytes at the peak changed most, growth
	// first.
	Sites []SiteDelta `json:"sites"`
}

// Comparison is what changed between two snapshots.
type Comparison struct {
	// Devices pairs devices by ordinal (or the only device of each).
	Devices []DeviceComparison `json:"devices"`
	// Rule explains the comparison.
	Rule string `json:"rule"`
}

// CompareRule explains Comparison.
const CompareRule = "each snapshot is analysed on its own; sites are matched by file:line:function (or autograd node / op) " +
	"and compared at each snapshot's own peak; devices are matched by ordinal, or the only device of each"

// Compare reports what grew from before to after: headline numbers, the
// category split and the allocation sites at each peak (at most maxSites
// sites, the biggest changes; all when maxSites <= 0).
func Compare(before, after *Analysis, maxSites int) Comparison {
	c := Comparison{Rule: CompareRule, Devices: []DeviceComparison{}}
	pair := func(b, a *Device) {
		c.Devices = append(c.Devices, compareDevices(b, a, maxSites))
	}
	if len(before.Devices) == 1 && len(after.Devices) == 1 {
		pair(before.Devices[0], after.Devices[0])
		return c
	}
	for _, b := range before.Devices {
		if a := after.Device(b.ID); a != nil {
			pair(b, a)
		}
	}
	return c
}

func compareDevices(b, a *Device, maxSites int) DeviceComparison {
	rb, ra := b.headline(), a.headline()
	dc := DeviceComparison{
		DeviceBefore: b.ID, DeviceAfter: a.ID,
		PeakAllocated:  delta(rb.peak, ra.peak),
		PeakReserved:   delta(rb.peakRes, ra.peakRes),
		FinalAllocated: delta(b.finalAllocated, a.finalAllocated),
		FinalReserved:  delta(b.finalReserved, a.finalReserved),
	}
	lb, la := b.liveAt(b.peakIndex), a.liveAt(a.peakIndex)
	var cb, ca CategoryBytes
	for _, k := range lb {
		cb.Add(b.allocs.cat[k], b.allocs.size(int(k)))
	}
	for _, k := range la {
		ca.Add(a.allocs.cat[k], a.allocs.size(int(k)))
	}
	for _, cat := range Categories() {
		dc.Categories = append(dc.Categories, CategoryDelta{cat.String(), delta(cb.Get(cat), ca.Get(cat))})
	}
	byKey := map[string]*SiteDelta{}
	var order []string
	get := func(s Site) *SiteDelta {
		sd, ok := byKey[s.Key]
		if !ok {
			sd = &SiteDelta{Site: s.Label, Key: s.Key}
			byKey[s.Key] = sd
			order = append(order, s.Key)
		}
		return sd
	}
	for _, sb := range b.siteTotals(lb, 0, nil) {
		sd := get(sb.Site)
		sd.Bytes.Before, sd.CountBefore = sb.Bytes, sb.Count
	}
	for _, sb := range a.siteTotals(la, 0, nil) {
		sd := get(sb.Site)
		sd.Bytes.After, sd.CountAfter = sb.Bytes, sb.Count
	}
	for _, k := range order {
		sd := byKey[k]
		sd.Bytes.Delta = sd.Bytes.After - sd.Bytes.Before
		if sd.Bytes.Delta != 0 || sd.CountBefore != sd.CountAfter {
			dc.Sites = append(dc.Sites, *sd)
		}
	}
	slices.SortStableFunc(dc.Sites, func(x, y SiteDelta) int {
		if c := cmp.Compare(y.Bytes.Delta, x.Bytes.Delta); c != 0 {
			return c
		}
		return cmp.Compare(x.Key, y.Key)
	})
	if maxSites > 0 && len(dc.Sites) > maxSites {
		// Keep the biggest growths and the biggest shrinks.
		grow := (maxSites + 1) / 2
		dc.Sites = append(dc.Sites[:grow:grow], dc.Sites[len(dc.Sites)-(maxSites-grow):]...)
	}
	if dc.Sites == nil {
		dc.Sites = []SiteDelta{}
	}
	return dc
}

// headline holds the peaks of a device.
type headline struct{ peak, peakRes int64 }

func (d *Device) headline() headline {
	return headline{d.initialAllocated + d.peakRel, d.initialReserved + d.resPeakRel}
}
