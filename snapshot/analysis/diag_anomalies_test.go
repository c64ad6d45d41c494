package analysis

import (
	"math"
	"testing"

	"oomscope/snapshot/gen"
)

// TestAnomaliesMatchGenerator checks pending frees and long-lived
// allocations on every scenario: only the loop that leaves its last
// prefetch pending has pending frees (the prefetch's site and bytes), and
// only the one that caches a tensor in step 1 has a long-lived allocation.
func TestAnomaliesMatchGenerator(t *testing.T) {
	for _, name := range gen.Scenarios() {
		t.Run(name, func(t *testing.T) {
			opt := gen.Scenario(name)
			_, r, _ := analyzeScenario(t, name)
			for _, d := range r.Devices {
				an := d.Anomalies
				switch {
				case opt.Loop.KeepPending:
					want := int64(opt.Tokens) * int64(opt.Hidden) * 2
					if opt.Tokens == 0 {
						want = 2048 * 256 * 2
					}
					if len(an.PendingFrees) != 1 || an.PendingFrees[0].Site != gen.PrefetchSite || an.PendingFrees[0].Bytes != want {
						t.Errorf("pending frees %+v, want %s with %d B", an.PendingFrees, gen.PrefetchSite, want)
					}
					if d.FinalPendingFreeBytes != want {
						t.Errorf("segments show %d B pending, want %d", d.FinalPendingFreeBytes, want)
					}
				case len(an.PendingFrees) != 0:
					t.Errorf("pending frees %+v in a loop that completes them", an.PendingFrees)
				}
				switch {
				case opt.Loop.Cache:
					if len(an.LongLived) != 1 || an.LongLived[0].Site != gen.CacheSite || an.LongLived[0].Bytes != 16<<20 ||
						an.LongLived[0].Blocks != 1 || len(an.LongLived[0].Stack) == 0 {
						t.Errorf("long-lived %+v, want the 16 MiB cache at %s", an.LongLived, gen.CacheSite)
					}
				case len(an.LongLived) != 0:
					t.Errorf("long-lived %+v in a loop that keeps nothing", an.LongLived)
				}
			}
		})
	}
}

// TestByteTimeIntegral checks the byte-time total against the integral of
// the allocated memory over time, computed here by replaying the
// allocations at every entry with the entries' own times: Σ size ×
// lifetime = ∫ allocated dt.
func TestByteTimeIntegral(t *testing.T) {
	check := func(t *testing.T, a *Analysis, r *Report) {
		d, bt := a.Devices[0], r.Devices[0].ByteTime
		if bt == nil || bt.Unit != "byte_seconds" || len(bt.Nodes) == 0 || bt.Nodes[0].Name != "all" {
			t.Fatalf("byte time %+v", bt)
		}
		var integral float64
		for i := 0; i+1 < d.Trace.Len(); i++ {
			var alloc int64
			for _, al := range allocations(d) {
				if aliveAfter(al, i) {
					alloc += al.Size
				}
			}
			integral += float64(alloc) * float64(d.Trace.TimeUS(i+1)-d.Trace.TimeUS(i)) / 1e6
		}
		// Lifetimes are read from a clock sampled at most 4,096 times
		// (every entry of the training loop, every other entry of the
		// forward file): within 1 % of the exact integral on these traces.
		if math.Abs(bt.Total-integral) > 0.01*integral {
			t.Errorf("byte-seconds %g, integral %g", bt.Total, integral)
		}
		for _, n := range bt.Nodes[1:] {
			if n.Parent < 0 || n.Parent >= len(bt.Nodes) || bt.Nodes[n.Parent].Depth != n.Depth-1 || n.Weight > bt.Nodes[n.Parent].Weight*(1+1e-12) {
				t.Errorf("node %+v does not nest in its parent", n)
			}
			if n.Weight < flameMinShare*bt.Total {
				t.Errorf("node %+v below the pruning share", n)
			}
		}
	}
	t.Run("training", func(t *testing.T) {
		a, r, _ := analyzeScenario(t, "training")
		check(t, a, r)
	})
	t.Run("forward", func(t *testing.T) {
		a := Analyze(loadReal(t, "pt26_cs336_ctx128_forward.pickle"), Options{})
		check(t, a, a.Report())
	})
}
