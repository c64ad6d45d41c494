package analysis

import (
	"fmt"
	"math"
	"strings"

	"oomscope/estimator"
	"oomscope/estimator/triage"
)

// Diagnosis is the one cause of a device's memory trouble, in triage's
// vocabulary (triage.Cause: capacity, fragmentation, leak, other-process,
// ...), with the numbers behind it and the rule that decided it.
type Diagnosis struct {
	// Cause is a triage cause id.
	Cause string `json:"cause"`
	// Why says it in one sentence with the numbers.
	Why Text `json:"why"`
	// Rule is the rule that fired, stated generally.
	Rule Text `json:"rule"`
	// Evidence lists the numbers the rule compared.
	Evidence []Number `json:"evidence"`
}

// Number is a named quantity a rule compared, with where it comes from.
type Number struct {
	Name    string `json:"name"`
	Bytes   int64  `json:"bytes"`
	Formula Text   `json:"formula"`
}

// OOMCard is the card at the trace's last out-of-memory event, laid out as
// triage draws a card from a message (triage.CardBar).
type OOMCard struct {
	// Index is the oom entry.
	Index int `json:"index"`
	// Bar is the card bar.
	Bar triage.Bar `json:"bar"`
	// GPU is the catalog GPU taken for the card ("" when none fits).
	GPU string `json:"gpu"`
	// CapacityBytes is the card's capacity and CapacityRule how it was
	// chosen: the snapshot does not record it.
	CapacityBytes int64 `json:"capacity_bytes"`
	CapacityRule  Text  `json:"capacity_rule"`
}

// Thresholds of the cause rules, triage's where the rule is the same
// (estimator/triage/cause.go).
const (
	fragFloorBytes    = 1 << 30 // fragmentation: ≥ min(1 GiB, 10 % of the card)
	fragFloorShare    = 0.10
	outsideFloorBytes = 3 << 29 // another process: ≥ max(1.5 GiB, 30 % of the card)
	outsideFloorShare = 0.30
	// A leak is the cause when 1,000 more steps would add ≥ 10 % of the peak.
	leakHorizonSteps = 1000
	leakHorizonShare = 0.10
	// Without an OOM, fragmentation is the cause when free space between
	// blocks at the peak is ≥ max(1 GiB, 25 % of reserved).
	fragPeakShare = 0.25
)

// commonCards are card sizes the GPU catalog may lack (consumer cards of
// 4–48 GB), as PyTorch reports them: about 95 % of the nameplate GiB.
var commonCards = []int64{4, 6, 8, 10, 11, 12, 16, 20, 24, 32, 40, 48}

// oomCard lays out the card at OOM event ev. The snapshot records the free
// device memory but not the card's size: the card is taken to be the
// smallest one that holds what PyTorch reserved plus what was free, among
// the catalog's GPUs and the common consumer sizes, so memory outside
// PyTorch is a cautious estimate.
func oomCard(ev *OOMEvent) *OOMCard {
	need := ev.ReservedBytes + ev.DeviceFreeBytes
	c := &OOMCard{Index: ev.Index, CapacityBytes: need,
		CapacityRule: Text("the snapshot does not record the card's size: no known card holds reserved + free, so the card is drawn as reserved + free")}
	var best *estimator.GPU
	for _, g := range estimator.GPUs() {
		if g.CapacityBytes >= need && (best == nil || g.CapacityBytes < best.CapacityBytes) {
			g := g
			best = &g
		}
	}
	size := int64(0)
	for _, n := range commonCards {
		if v := n << 30 * 95 / 100; v >= need {
			size = v
			break
		}
	}
	switch {
	case best != nil && (size == 0 || best.CapacityBytes <= size*101/100):
		c.GPU, c.CapacityBytes = best.ID, best.CapacityBytes
		c.CapacityRule = textf("the snapshot does not record the card's size: taken as the smallest known card that holds reserved + free = %s, the %s (%s); memory outside PyTorch is at least the rest if that is the card",
			sz(need), best.Name, sz(best.CapacityBytes))
	case size > 0:
		c.CapacityBytes = size
		c.CapacityRule = textf("the snapshot does not record the card's size: taken as the smallest common card size that holds reserved + free = %s, a %d GB card (%s, 95 %% of its nameplate as PyTorch reports it)",
			sz(need), size*100/95>>30, sz(size))
	}
	b := func(n int64) *triage.Bytes {
		v := triage.BytesOf(uint64(max(0, n)))
		return &v
	}
	f := &triage.Finding{TotalBytes: b(c.CapacityBytes), FreeBytes: b(ev.DeviceFreeBytes), AllocatedBytes: b(ev.AllocatedBytes),
		ReservedUnallocatedBytes: b(ev.FreeInReservedBytes), TriedBytes: b(ev.RequestedBytes)}
	c.Bar, _ = triage.CardBar(f)
	// The bar's formulas speak of a printed message; say where the
	// snapshot's numbers come from.
	measured := map[string]string{
		"allocated":       "live allocations at the oom entry",
		"reserved-unused": "reserved − allocated at the oom entry",
		"free":            "the oom entry's device_free (cudaMemGetInfo)",
		"unaccounted":     "card − free − reserved: outside this process's PyTorch (the card's size is inferred)",
	}
	for i := range c.Bar.Segments {
		if m, ok := measured[c.Bar.Segments[i].Name]; ok {
			c.Bar.Segments[i].Formula = m
		}
	}
	return c
}

// num is one evidence number.
func num(name string, v int64, formula string) Number {
	return Number{Name: name, Bytes: v, Formula: Text(formula)}
}

// gib marks bytes in a why text (see Text).
func gib(n int64) string { return sz(n) }

// diagnoseCause picks the cause. r is the device report (with its steps and
// peak phase); peak the moment of the peak; oomLeaked what the leak holds at
// the last OOM.
func diagnoseCause(r *DeviceReport, lk *Leak, peak moment, card *OOMCard, oomLeaked int64) Diagnosis {
	where := "before the first trace entry"
	if r.PeakPhase.Step >= 0 {
		where = fmt.Sprintf("in the %s phase of step %d", r.PeakPhase.Phase, r.PeakPhase.Step)
	} else if r.PeakIndex >= 0 {
		where = "outside the training steps (" + r.PeakPhase.Phase.String() + ")"
	}
	leakNote := func() string {
		if lk == nil {
			return ""
		}
		return fmt.Sprintf("; a %s-confidence leak of %s per step was also found", lk.Confidence, gib(lk.BytesPerStep))
	}
	if n := len(r.OOMEvents); n > 0 && card != nil {
		ev := &r.OOMEvents[n-1]
		req, free, res, ru := ev.RequestedBytes, ev.DeviceFreeBytes, ev.ReservedBytes, ev.FreeInReservedBytes
		capy := card.CapacityBytes
		outside := capy - free - res
		ev0 := []Number{num("requested", req, "the oom entry's size"), num("device_free", free, "the oom entry's device_free (cudaMemGetInfo)"),
			num("allocated", ev.AllocatedBytes, "live allocations at the oom entry"), num("reserved", res, "reserved segments at the oom entry")}
		switch {
		case lk != nil && lk.Confidence != "low" && oomLeaked > 0 && oomLeaked >= req-free:
			return Diagnosis{Cause: string(triage.CauseLeak),
				Why: textf("the request of %s failed with %s free on the device, and a leak holds %s by then: %s per step kept by %s (%s confidence, %d steps); without it the request would have fit",
					gib(req), gib(free), gib(oomLeaked), gib(lk.BytesPerStep), lk.Sites[0].Site, lk.Confidence, lk.Steps),
				Rule:     "a leak (see leak) whose kept blocks at the OOM are at least the request minus the free device memory: freeing them lets the request fit",
				Evidence: append(ev0, num("leaked", oomLeaked, "blocks of the leaking sites alive at the oom entry"))}
		case ru >= req && float64(ru) >= math.Min(fragFloorBytes, fragFloorShare*float64(capy)):
			floor := int64(math.Min(fragFloorBytes, fragFloorShare*float64(capy)))
			return Diagnosis{Cause: string(triage.CauseFragmentation),
				Why: textf("%s was reserved by PyTorch but unallocated when the %s request failed, ≥ the request and ≥ %s, but the largest free block was %s: the cache held enough bytes only in split blocks%s",
					gib(ru), gib(req), gib(floor), gib(ev.LargestFreeBlockBytes), leakNote()),
				Rule: textf("reserved-but-unallocated ≥ request and ≥ min(%s, 10 %% of the card) at the OOM: fragmentation (triage's rule)", sz(fragFloorBytes)),
				Evidence: append(ev0, num("reserved_unallocated", ru, "reserved − allocated at the oom entry"),
					num("largest_free_block", ev.LargestFreeBlockBytes, "longest free run in one segment"), num("floor", floor, fmt.Sprintf("min(%s, 10 %% of the card)", sz(fragFloorBytes))))}
		case outside >= req && float64(outside) >= math.Max(outsideFloorBytes, outsideFloorShare*float64(capy)):
			return Diagnosis{Cause: string(triage.CauseOtherProcess),
				Why: textf("at least %s of the %s card was held outside this process's PyTorch when the %s request failed (card − free − reserved = %s − %s − %s): another process, or this process's non-PyTorch memory%s",
					gib(outside), gib(capy), gib(req), gib(capy), gib(free), gib(res), leakNote()),
				Rule:     textf("memory outside PyTorch ≥ request and ≥ max(%s, 30 %% of the card) at the OOM: another process (triage's rule; the card's size is inferred, so this is a lower bound)", sz(outsideFloorBytes)),
				Evidence: append(ev0, num("outside", outside, "card − free − reserved"), num("card", capy, string(card.CapacityRule)))}
		}
		return Diagnosis{Cause: string(triage.CauseCapacity),
			Why: textf("the request of %s found %s free on the device and %s free inside the cache: the job's own %s allocated (%s) fills the card%s",
				gib(req), gib(free), gib(ru), gib(ev.AllocatedBytes), categoriesText(ev.Categories), leakNote()),
			Rule:     "at the OOM neither the cache (fragmentation) nor memory outside PyTorch (another process) would hold the request, and no leak explains it: the job needs more than the card (capacity)",
			Evidence: append(ev0, num("reserved_unallocated", ru, "reserved − allocated at the oom entry"))}
	}
	if lk != nil && lk.Confidence != "low" && float64(lk.BytesPerStep)*leakHorizonSteps >= leakHorizonShare*float64(r.PeakAllocatedBytes) {
		return Diagnosis{Cause: string(triage.CauseLeak),
			Why: textf("memory grows by %s per step (%s kept by %s in each of %d steps, %s confidence): 1,000 more steps add %s to the %s peak",
				gib(lk.BytesPerStep), gib(lk.Sites[0].BytesPerStep), lk.Sites[0].Site, lk.Sites[0].Steps, lk.Confidence,
				gib(lk.BytesPerStep*leakHorizonSteps), gib(r.PeakAllocatedBytes)),
			Rule: "no OOM in the trace; a leak (see leak) of medium or high confidence that would add ≥ 10 % of the peak within 1,000 steps",
			Evidence: []Number{num("bytes_per_step", lk.BytesPerStep, "median bytes born per step and never freed"),
				num("growth_per_step", lk.GrowthPerStep, "median growth of step-end memory"), num("peak_allocated", r.PeakAllocatedBytes, "peak allocated")}}
	}
	f := r.FragmentationAtPeak
	if float64(f.ExternalFreeBytes) >= math.Max(fragFloorBytes, fragPeakShare*float64(f.ReservedBytes)) {
		return Diagnosis{Cause: string(triage.CauseFragmentation),
			Why: textf("at the peak %s of the %s reserved lay free between blocks (largest free block %s): the cache reserves %.0f %% more than the job uses",
				gib(f.ExternalFreeBytes), gib(f.ReservedBytes), gib(f.LargestFreeBlockBytes), 100*float64(f.FreeBytes)/float64(max(1, f.AllocatedBytes))),
			Rule: textf("no OOM in the trace; free space between blocks at the peak ≥ max(%s, 25 %% of reserved): fragmentation", sz(fragFloorBytes)),
			Evidence: []Number{num("external_free", f.ExternalFreeBytes, "reserved bytes outside live blocks at the peak"),
				num("reserved", f.ReservedBytes, "reserved at the peak"), num("largest_free_block", f.LargestFreeBlockBytes, "longest free run in one segment")}}
	}
	return Diagnosis{Cause: string(triage.CauseCapacity),
		Why: textf("no out-of-memory in the trace; the peak of %s falls %s and is the job's own memory: %s%s",
			gib(r.PeakAllocatedBytes), where, categoriesText(peak.cats), leakNote()),
		Rule:     "no OOM, no leak that matters within 1,000 steps, no heavy fragmentation: the peak is what the job needs (capacity); the fixes below lower it",
		Evidence: []Number{num("peak_allocated", r.PeakAllocatedBytes, "peak allocated"), num("peak_reserved", r.PeakReservedBytes, "peak reserved")}}
}

// categoriesText lists the largest categories, e.g. "optimizer_state
// 25.38 GiB (50 %), gradient 12.72 GiB (25 %), …".
func categoriesText(c CategoryBytes) string {
	total := c.Total()
	type kv struct {
		name string
		v    int64
	}
	var parts []kv
	for _, cat := range Categories() {
		if v := c.Get(cat); v > 0 {
			parts = append(parts, kv{cat.String(), v})
		}
	}
	for i := range parts {
		for j := i + 1; j < len(parts); j++ {
			if parts[j].v > parts[i].v {
				parts[i], parts[j] = parts[j], parts[i]
			}
		}
	}
	var s []string
	for i, p := range parts {
		if i == 4 {
			break
		}
		s = append(s, fmt.Sprintf("%s %s (%.0f %%)", strings.ReplaceAll(p.name, "_", " "), gib(p.v), 100*float64(p.v)/float64(max(total, 1))))
	}
	if len(s) == 0 {
		return "nothing live"
	}
	return strings.Join(s, ", ")
}
