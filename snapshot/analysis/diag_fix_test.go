package analysis

import (
	"strings"
	"testing"

	"oomscope/estimator/triage"
	"oomscope/snapshot/gen"
)

// bruteSaving recomputes a fix's saving by another route than the
// diagnosis: the allocated memory and its split by category after every
// entry, by checking every allocation at every entry, and the new peak as
// the highest of allocated − the fix's share over all entries (not only at
// the phases' peaks).
func bruteSaving(d *Device, share func(c CategoryBytes, leaked int64) int64, leakSites map[string]bool) int64 {
	n := d.Trace.Len()
	var peak, newPeak int64
	for i := -1; i < n; i++ {
		var c CategoryBytes
		var alloc, leaked int64
		for _, al := range allocations(d) {
			if !aliveAfter(al, i) {
				continue
			}
			alloc += al.Size
			c.Add(al.Category, al.Size)
			if leakSites[d.a.Sites[al.Site].Label] && al.Origin == FromTrace && int(al.End) == n && al.FreeRequested < 0 {
				leaked += al.Size
			}
		}
		peak = max(peak, alloc)
		newPeak = max(newPeak, alloc-share(c, leaked))
	}
	return peak - newPeak
}

func fixByID(fs []Saving, id string) *Saving {
	for i := range fs {
		if fs[i].ID == id {
			return &fs[i]
		}
	}
	return nil
}

// TestFixSavingsWitness checks the savings of the fixes whose share is a
// fixed part of a category against a brute-force replay of every entry.
func TestFixSavingsWitness(t *testing.T) {
	for _, name := range []string{"training", "oom_card", "leak_history", "leak_loss_graph", "two_streams", "grad_accum"} {
		t.Run(name, func(t *testing.T) {
			a, r, truth := analyzeScenario(t, name)
			d, rep := a.Devices[0], r.Devices[0]
			sites := map[string]bool{}
			if rep.Leak != nil {
				for _, s := range rep.Leak.Sites {
					sites[s.Site] = true
				}
			}
			checks := map[string]func(c CategoryBytes, leaked int64) int64{
				"optimizer-8bit":   func(c CategoryBytes, _ int64) int64 { return int64(0.75 * float64(c.OptimizerState)) },
				"autocast":         func(c CategoryBytes, _ int64) int64 { return c.Activation / 2 },
				"release-retained": func(_ CategoryBytes, leaked int64) int64 { return leaked },
				"item-for-logging": func(_ CategoryBytes, leaked int64) int64 { return leaked },
			}
			found := 0
			for id, share := range checks {
				fx := fixByID(rep.Fixes, id)
				if fx == nil {
					continue
				}
				found++
				if want := bruteSaving(d, share, sites); fx.SavesBytes != want {
					t.Errorf("%s saves %d, brute force says %d (%s)", id, fx.SavesBytes, want, fx.Why)
				}
			}
			if found == 0 {
				t.Errorf("none of the witnessed fixes was offered: %+v", rep.Fixes)
			}
			if truth.Devices[0].Leak != nil && fixByID(rep.Fixes, map[string]string{gen.LeakHistory: "release-retained",
				gen.LeakLossGraph: "item-for-logging"}[gen.Scenario(name).Loop.Leak]) == nil {
				t.Errorf("leak without its fix: %+v", rep.Fixes)
			}
		})
	}
}

// TestDiagnosisOnScenarios checks the cause, its lead fix and the OOM card
// on the scenarios whose cause is known by construction.
func TestDiagnosisOnScenarios(t *testing.T) {
	tests := []struct {
		scenario, cause, lead string
	}{
		{"leak_history", "leak", "release-retained"},
		{"leak_loss_graph", "leak", "item-for-logging"},
		// The device is capped at the peak reserved before the last step:
		// on any real card, the rest was held by someone else.
		{"oom", "other-process", "find-other-process"},
		{"oom_card", "capacity", ""},
		{"training", "capacity", ""},
		{"vary_seq", "capacity", ""},
		{"eval_between", "capacity", ""},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			_, r, truth := analyzeScenario(t, tt.scenario)
			d := r.Devices[0]
			if d.Diagnosis.Cause != tt.cause || d.Diagnosis.Why == "" || d.Diagnosis.Rule == "" || len(d.Diagnosis.Evidence) == 0 {
				t.Fatalf("diagnosis %+v, want cause %s with why, rule and evidence", d.Diagnosis, tt.cause)
			}
			if len(d.Fixes) == 0 {
				t.Fatal("no fixes")
			}
			if tt.lead != "" && d.Fixes[0].ID != tt.lead {
				t.Errorf("first fix %s, want %s", d.Fixes[0].ID, tt.lead)
			}
			for _, fx := range d.Fixes {
				if fx.SavesBytes <= 0 || fx.Code == "" || fx.Guide == "" || fx.Why == "" {
					t.Errorf("fix %+v lacks a saving, code, guide or why", fx)
				}
			}
			if lk := truth.Devices[0].Leak; lk != nil && !strings.Contains(string(d.Fixes[0].Why), lk.Site) {
				t.Errorf("the leak fix does not name the line %s: %s", lk.Site, d.Fixes[0].Why)
			}
			if len(d.OOMEvents) > 0 {
				c := d.OOMCard
				if c == nil {
					t.Fatal("OOM without a card")
				}
				var sum int64
				for _, s := range c.Bar.Segments {
					sum += s.Bytes
				}
				ev := d.OOMEvents[len(d.OOMEvents)-1]
				if sum != c.Bar.Total || c.Bar.Request != ev.RequestedBytes || c.CapacityBytes < ev.ReservedBytes+ev.DeviceFreeBytes {
					t.Errorf("card %+v does not add up (segments %d, request %d)", c, sum, ev.RequestedBytes)
				}
			}
		})
	}
	// oom_card runs on a card of the catalog's GeForce RTX 3060 12GB size.
	_, r, _ := analyzeScenario(t, "oom_card")
	if c := r.Devices[0].OOMCard; c == nil || c.GPU != "rtx-3060-12gb" || c.CapacityBytes != gen.Scenario("oom_card").CardBytes {
		t.Errorf("oom_card: card %+v, want the rtx-3060-12gb", c)
	}
}

// TestCauseRules checks each cause rule on hand-made numbers, and the
// boundaries of the thresholds triage shares.
func TestCauseRules(t *testing.T) {
	const gb = int64(1) << 30
	card := func(ev OOMEvent) *OOMCard { return oomCard(&ev) }
	oom := func(req, free, alloc, res, largest int64) OOMEvent {
		return OOMEvent{Index: 9, RequestedBytes: req, DeviceFreeBytes: free, AllocatedBytes: alloc, ReservedBytes: res,
			FreeInReservedBytes: res - alloc, LargestFreeBlockBytes: largest}
	}
	lk := &Leak{BytesPerStep: 64 << 20, Steps: 4, Confidence: "high", HeldBytes: 3 * gb,
		Sites: []LeakSite{{Site: "train.py:9 step", BytesPerStep: 64 << 20, Steps: 4}}}
	tests := []struct {
		name      string
		ev        *OOMEvent
		leak      *Leak
		oomLeaked int64
		frag      Fragmentation
		peak      int64
		want      triage.Cause
	}{
		// 23.5 GiB card (RTX 4090 class): 4 GiB cached in pieces of at most 512 MiB.
		{"fragmentation", ptr(oom(2*gb, 100<<20, 18*gb, 22*gb, 512<<20)), nil, 0, Fragmentation{}, 22 * gb, triage.CauseFragmentation},
		{"cache below the request", ptr(oom(5*gb, 100<<20, 18*gb, 22*gb, 512<<20)), nil, 0, Fragmentation{}, 22 * gb, triage.CauseCapacity},
		// reserved + free = 8 GiB, so the smallest card holding it is
		// ~10 GiB: 2 GiB or more outside PyTorch is not 30 % of it.
		{"outside too small", ptr(oom(1*gb, 200<<20, 7*gb, 7*gb+100<<20, 50<<20)), nil, 0, Fragmentation{}, 7 * gb, triage.CauseCapacity},
		{"leak at the OOM", ptr(oom(2*gb, 100<<20, 22*gb, 22*gb+200<<20, 50<<20)), lk, 3 * gb, Fragmentation{}, 22 * gb, triage.CauseLeak},
		{"leak too small at the OOM", ptr(oom(2*gb, 100<<20, 22*gb, 22*gb+200<<20, 50<<20)), lk, 1 * gb, Fragmentation{}, 22 * gb, triage.CauseCapacity},
		{"leak, no OOM", nil, lk, 0, Fragmentation{ReservedBytes: 30 * gb}, 22 * gb, triage.CauseLeak},
		{"tiny leak, no OOM", nil, &Leak{BytesPerStep: 512, Confidence: "high", Sites: lk.Sites}, 0, Fragmentation{ReservedBytes: 30 * gb}, 22 * gb, triage.CauseCapacity},
		{"low-confidence leak", nil, &Leak{BytesPerStep: 64 << 20, Confidence: "low", Sites: lk.Sites}, 0, Fragmentation{ReservedBytes: 30 * gb}, 22 * gb, triage.CauseCapacity},
		{"fragmented cache, no OOM", nil, nil, 0, Fragmentation{ReservedBytes: 30 * gb, ExternalFreeBytes: 8 * gb}, 22 * gb, triage.CauseFragmentation},
		{"little free space, no OOM", nil, nil, 0, Fragmentation{ReservedBytes: 30 * gb, ExternalFreeBytes: 7 * gb}, 22 * gb, triage.CauseCapacity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &DeviceReport{PeakAllocatedBytes: tt.peak, FragmentationAtPeak: tt.frag, OOMEvents: []OOMEvent{}}
			var c *OOMCard
			if tt.ev != nil {
				r.OOMEvents = []OOMEvent{*tt.ev}
				c = card(*tt.ev)
			}
			got := diagnoseCause(r, tt.leak, moment{}, c, tt.oomLeaked)
			if got.Cause != string(tt.want) {
				t.Errorf("cause %s (%s), want %s", got.Cause, got.Why, tt.want)
			}
		})
	}
	// Another process: reserved + free = 2 GiB, so the smallest card
	// holding it (a 4 GB card, 3.8 GiB usable) leaves 1.8 GiB outside:
	// ≥ 1.5 GiB, ≥ 30 % of the card and ≥ the request.
	ev := oom(1*gb, 300<<20, 1*gb+500<<20, 1*gb+700<<20, 10<<20)
	r := &DeviceReport{OOMEvents: []OOMEvent{ev}}
	if got := diagnoseCause(r, nil, moment{}, card(ev), 0); got.Cause != string(triage.CauseOtherProcess) {
		t.Errorf("other process: cause %s (%s)", got.Cause, got.Why)
	}
}

func ptr[T any](v T) *T { return &v }
