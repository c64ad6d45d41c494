package analysis

import (
	"fmt"
	"slices"

	"oomscope/estimator"
	"oomscope/fixes"
)

// Saving is a fix of the shared catalog (package fixes) with what it would
// save of this measured memory. Why says how SavesBytes was computed.
type Saving struct {
	fixes.Fix
	// Why says how SavesBytes was computed here (it replaces the catalog's
	// general why in the JSON).
	Why Text `json:"why"`
	// SavesBytes is how much the fix lowers Of.
	SavesBytes int64 `json:"saves_bytes"`
	// Of is what SavesBytes lowers: "peak_allocated" (the peak, re-read at
	// every phase's own peak after the fix), "reserved" (cached memory the
	// allocator can reuse) or "device" (memory on the card held by others).
	Of string `json:"of"`
}

// FixRule explains how the fixes' savings are computed and ranked.
const FixRule Text = "each fix's saving is computed from the measured live memory: at the peak of every phase (forward, backward, " +
	"optimizer, other) the bytes the fix removes there are subtracted, and the new peak is the highest of those; the saving is " +
	"the old peak minus the new one. The fixes that act on the cause come first (as in triage), then the rest cheapest first " +
	"(a setting, one line, a few lines, a restructure), then by bytes saved; fixes that save under 0.5 % of the peak are left out"

// leadFixes are, per cause, the fixes that act on the cause itself.
var leadFixes = map[string][]string{
	"leak":          {"release-retained", "item-for-logging", "inference-mode"},
	"fragmentation": {"expandable-segments"},
	"other-process": {"find-other-process"},
}

// fixInput is what the fixes read.
type fixInput struct {
	r     *DeviceReport
	ms    momentSet // the phases' peaks (and the OOM)
	setup *Setup
	leak  *Leak
	steps []Step
	exp   bool // expandable segments already on
	card  *OOMCard
	cause string
}

// peakFix is a fix whose saving is read at every moment.
type peakFix struct {
	id   string
	save func(m *moment) int64
	why  func(at *moment, saved int64) string
}

// chooseFixes lists the fixes that save memory here, cheapest first.
func chooseFixes(in fixInput) []Saving {
	var out []Saving
	peak := in.r.PeakAllocatedBytes
	add := func(id string, saves int64, of, why string) {
		if saves <= 0 {
			return
		}
		fx := Saving{Fix: fixes.Must(id, ""), SavesBytes: saves, Of: of}
		fx.Why = Text(why)
		out = append(out, fx)
	}
	for _, pf := range in.peakFixes() {
		newPeak, at := int64(0), -1
		for j := range in.ms {
			m := &in.ms[j]
			if v := m.allocated - pf.save(m); v > newPeak || at < 0 {
				newPeak, at = v, j
			}
		}
		saves := peak - max(newPeak, 0)
		if saves < peak/200 && pf.id != "release-retained" && pf.id != "item-for-logging" {
			continue
		}
		pm := in.ms.peak()
		why := pf.why(&pm, pf.save(&pm)) + peakMoves(&in.ms[at], &pm, saves)
		if n := len(in.r.OOMEvents); n > 0 {
			// The last moment is the OOM: does the fix free what the
			// request lacked?
			ev := &in.r.OOMEvents[n-1]
			short := max(0, ev.RequestedBytes-ev.DeviceFreeBytes)
			v := pf.save(&in.ms[len(in.ms)-1])
			verdict := "not enough on its own"
			if v >= short {
				verdict = "enough"
			}
			why += fmt.Sprintf("; at the OOM it frees %s of live memory, against the %s the request lacked (request − free on the device): %s",
				gib(v), gib(short), verdict)
		}
		add(pf.id, saves, "peak_allocated", why)
	}
	in.reservedFixes(add)
	in.stepFixes(add)
	lead := leadFixes[in.cause]
	rank := func(f Saving) int {
		if i := slices.Index(lead, f.ID); i >= 0 {
			return i - len(lead)
		}
		return 0
	}
	slices.SortStableFunc(out, func(a, b Saving) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		if a.Cost != b.Cost {
			return a.Cost - b.Cost
		}
		return compareInt64(b.SavesBytes, a.SavesBytes)
	})
	if out == nil {
		out = []Saving{}
	}
	return out
}

// peakMoves says where the peak goes after a fix, when it moves.
func peakMoves(after, before *moment, saves int64) string {
	if after.index == before.index {
		return fmt.Sprintf("; the peak falls by %s", gib(saves))
	}
	return fmt.Sprintf("; the peak then moves to the %s phase (after entry %d) and falls by %s", after.phase, after.index, gib(saves))
}

// peakFixes are the fixes whose saving is a share of live bytes.
func (in fixInput) peakFixes() []peakFix {
	var fs []peakFix
	st := in.setup
	if lk := in.leak; lk != nil {
		id := "release-retained"
		if lk.Kind == LeakGraph {
			id = "item-for-logging"
		}
		site := lk.Sites[0].Site
		fs = append(fs, peakFix{id, func(m *moment) int64 { return m.leaked }, func(at *moment, v int64) string {
			return fmt.Sprintf("the leak at %s keeps %s per step; at the peak its kept blocks hold %s", site, gib(lk.BytesPerStep), gib(v))
		}})
		if lk.Kind == LeakGraph {
			fs = append(fs, peakFix{"inference-mode", func(m *moment) int64 { return m.leaked }, func(at *moment, v int64) string {
				return fmt.Sprintf("the passes that keep their graph (at %s) run no backward: under inference_mode they keep nothing; %s at the peak", site, gib(v))
			}})
		}
	}
	if st != nil && st.OptimizerBytes > 0 && (st.Optimizer == estimator.OptAdamW || st.Optimizer == estimator.OptSGDMomentum) {
		elem, share := 4.0, 1.0
		if st.ParamDtype == estimator.DtypeBF16 && !st.Master {
			elem = 2
		}
		if st.Master {
			share = 8.0 / 12
			if st.Optimizer == estimator.OptSGDMomentum {
				share = 0.5
			}
		}
		frac := share * (1 - 1/elem)
		fs = append(fs, peakFix{"optimizer-8bit", func(m *moment) int64 { return int64(frac * float64(m.cats.OptimizerState)) },
			func(at *moment, v int64) string {
				return fmt.Sprintf("%.0f %% of the optimizer state (%s at the peak): its states shrink from %.0f B to 1 B per element; saves %s there",
					100*frac, gib(at.cats.OptimizerState), elem, gib(v))
			}})
	}
	fs = append(fs, peakFix{"micro-batch", func(m *moment) int64 {
		v := m.cats.Activation
		if m.phase != PhaseOptimizer {
			v += m.cats.Temporary
		}
		return v / 2
	}, func(at *moment, v int64) string {
		return fmt.Sprintf("half the activations and forward/backward temporaries, which scale with the micro-batch (%s at the peak)", gib(v))
	}})
	if st == nil || st.ParamDtype == estimator.DtypeFP32 {
		fs = append(fs, peakFix{"autocast", func(m *moment) int64 { return m.cats.Activation / 2 }, func(at *moment, v int64) string {
			return fmt.Sprintf("half the activations, if they are fp32 like the parameters (%s at the peak)", gib(v))
		}})
	}
	fs = append(fs, peakFix{"checkpointing", func(m *moment) int64 {
		if m.layers < 2 {
			return 0
		}
		return m.cats.Activation - m.cats.Activation/int64(m.layers)
	}, func(at *moment, v int64) string {
		return fmt.Sprintf("keeps one layer's activations of %d (the most repeated allocation stack among the activations recurs %d times: taken as the layers); %s at the peak",
			at.layers, at.layers, gib(v))
	}})
	fs = append(fs, peakFix{"chunked-loss", func(m *moment) int64 { return m.logits }, func(at *moment, v int64) string {
		return fmt.Sprintf("the loss-sized blocks (allocated under cross_entropy, log_softmax or lm_head frames) hold %s at the peak; chunked or fused cross-entropy never materialises them whole", gib(v))
	}})
	fs = append(fs, peakFix{"sync-before-free", func(m *moment) int64 { return m.pending }, func(at *moment, v int64) string {
		return fmt.Sprintf("%s at the peak is freed by the program but still waiting for another stream (free_requested without free_completed)", gib(v))
	}})
	if st != nil && st.Mode == estimator.ModeTrain && st.Method == estimator.MethodFull {
		fs = append(fs, peakFix{"lora", func(m *moment) int64 { return (m.cats.Gradient + m.cats.OptimizerState) * 99 / 100 },
			func(at *moment, v int64) string {
				return fmt.Sprintf("gradients and optimizer state of the frozen base go (%s at the peak), adapters of about 1 %% of the parameters stay", gib(v))
			}})
		fs = append(fs, peakFix{"shard", func(m *moment) int64 {
			return (m.cats.Parameter + m.cats.Gradient + m.cats.OptimizerState) / 2
		}, func(at *moment, v int64) string {
			return fmt.Sprintf("over 2 GPUs, half of the parameters, gradients and optimizer state (%s at the peak); each doubling of the GPUs halves it again", gib(v))
		}})
	}
	return fs
}

// reservedFixes adds the fixes that act on the allocator's cache or on the
// card, not on live memory.
func (in fixInput) reservedFixes(add func(id string, saves int64, of, why string)) {
	r := in.r
	if n := len(r.OOMEvents); n > 0 {
		ev := &r.OOMEvents[n-1]
		if !in.exp && ev.FreeInReservedBytes >= ev.RequestedBytes && ev.LargestFreeBlockBytes < ev.RequestedBytes {
			add("expandable-segments", ev.FreeInReservedBytes, "reserved", fmt.Sprintf(
				"at the OOM %s was free inside the cache, more than the %s request, but the largest free block was %s: with expandable segments those bytes stay usable",
				gib(ev.FreeInReservedBytes), gib(ev.RequestedBytes), gib(ev.LargestFreeBlockBytes)))
		}
		if c := in.card; c != nil {
			if outside := c.CapacityBytes - ev.DeviceFreeBytes - ev.ReservedBytes; float64(outside) >= outsideFloorBytes {
				add("find-other-process", outside, "device", fmt.Sprintf(
					"at least %s of the card was held outside this process's PyTorch at the OOM (card − free − reserved; %s)", gib(outside), c.CapacityRule))
			}
		}
		return
	}
	f := r.FragmentationAtPeak
	if !in.exp && float64(f.ExternalFreeBytes) >= fragFloorBytes {
		add("expandable-segments", f.ExternalFreeBytes, "reserved", fmt.Sprintf(
			"at the peak %s of the %s reserved lay free between blocks (largest free block %s): expandable segments let the cache reuse it instead of reserving more",
			gib(f.ExternalFreeBytes), gib(f.ReservedBytes), gib(f.LargestFreeBlockBytes)))
	}
}

// stepFixes adds the fixes read from the steps: a long batch that sets the
// peak.
func (in fixInput) stepFixes(add func(id string, saves int64, of, why string)) {
	var peaks []int64
	top := -1
	for k, s := range in.steps {
		if s.Partial {
			continue
		}
		peaks = append(peaks, s.PeakAllocatedBytes)
		if top < 0 || s.PeakAllocatedBytes > in.steps[top].PeakAllocatedBytes {
			top = k
		}
	}
	if len(peaks) < 3 || in.leak != nil {
		return
	}
	med := median(peaks)
	hi := in.steps[top].PeakAllocatedBytes
	if 5*hi < 6*med || hi != in.r.PeakAllocatedBytes {
		return
	}
	add("cap-seq-len", hi-med, "peak_allocated", fmt.Sprintf(
		"step peaks range up to %s (step %d) against a median of %s over %d complete steps: the largest batch sets the peak; bounding it near the median saves about %s",
		gib(hi), top, gib(med), len(peaks), gib(hi-med)))
}
