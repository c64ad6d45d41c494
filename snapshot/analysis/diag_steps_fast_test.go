package analysis

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// TestStepsFastPaths checks findSteps' fast paths, the scan's fast path
// (fastRun) and the measure pass's cursors and phase slots, against the
// scan's general path and the straightforward measure pass (a search per
// interval and step, per-phase maps, as findSteps did before), on the fast
// path snapshots and training runs of both bench families, with the last
// OOM placed at entries across each trace.
func TestStepsFastPaths(t *testing.T) {
	snaps := fastpathSnapshots(t)
	for _, fam := range []gen.Family{gen.RealStacks, gen.DistinctStacks} {
		for _, size := range []int64{1 << 20, 6 << 20} {
			var b bytes.Buffer
			if _, err := gen.WriteFamily(&b, gen.FamilyOptions{Family: fam, TargetBytes: size, Seed: uint64(size)}); err != nil {
				t.Fatal(err)
			}
			s, err := snapshot.DecodeBytes(b.Bytes(), nil)
			if err != nil {
				t.Fatal(err)
			}
			snaps[string(fam)+"-"+sz(size)] = s
		}
	}
	for name, s := range snaps {
		a := Analyze(s, Options{})
		rep := a.Report()
		for di, d := range a.Devices {
			src := newSource(d)
			head := stepsHead(d, &rep.Devices[di])
			heads := []DeviceReport{head}
			for n, i := d.Trace.Len(), 0; i < n; i += max(1, n/9) {
				h := head
				h.OOMEvents = []OOMEvent{{Index: i}}
				heads = append(heads, h)
			}
			// The scan itself, before any remeasure: its runs, cuts and
			// interval sums.
			fastSt := newStepper(src, &head)
			fastPeak, fastAt := fastSt.scan()
			scanNoFast = true
			slowSt := newStepper(src, &head)
			slowPeak, slowAt := slowSt.scan()
			scanNoFast = false
			if fastPeak != slowPeak || fastAt != slowAt || !reflect.DeepEqual(fastSt, slowSt) {
				t.Fatalf("%s device %d: the scan's fast path differs: peak %d at %d, want %d at %d; %d runs %d intervals, want %d, %d",
					name, d.ID, fastPeak, fastAt, slowPeak, slowAt, len(fastSt.runs), len(fastSt.ivs), len(slowSt.runs), len(slowSt.ivs))
			}
			for hi := range heads {
				got := findSteps(src, &heads[hi])
				scanNoFast, measureSteps = true, measureStepsRef
				want := findSteps(src, &heads[hi])
				scanNoFast, measureSteps = false, (*stepper).measure
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s device %d head %d: fast paths differ:\n got %+v\nwant %+v", name, d.ID, hi, diffSteps(got, want), diffSteps(want, got))
				}
			}
			if len(heads[0].OOMEvents) == 0 && name == string(gen.DistinctStacks)+"-"+sz(6<<20) {
				if r := findSteps(src, &heads[0]); len(r.steps) < 10 || len(r.spansOut) < 20 {
					t.Errorf("%s: %d steps, %d spans: the test checks little", name, len(r.steps), len(r.spansOut))
				}
			}
		}
	}
}

// diffSteps is the first part of r that differs from o, for the message.
func diffSteps(r, o stepResult) any {
	switch {
	case !reflect.DeepEqual(r.steps, o.steps):
		for k := range min(len(r.steps), len(o.steps)) {
			if r.steps[k] != o.steps[k] {
				return []any{"step", k, r.steps[k]}
			}
		}
		return []any{"steps", len(r.steps)}
	case !reflect.DeepEqual(r.phasePeaks, o.phasePeaks):
		for k := range min(len(r.phasePeaks), len(o.phasePeaks)) {
			if r.phasePeaks[k] != o.phasePeaks[k] {
				return []any{"phase peak", k, r.phasePeaks[k]}
			}
		}
		return []any{"phase peaks", len(r.phasePeaks)}
	case !reflect.DeepEqual(r.spansOut, o.spansOut):
		for k := range min(len(r.spansOut), len(o.spansOut)) {
			if r.spansOut[k] != o.spansOut[k] {
				return []any{"span", k, r.spansOut[k]}
			}
		}
		return []any{"spans", len(r.spansOut)}
	}
	return []any{r.peak, r.info, r.maxPhase, r.oomPhase}
}

// measureStepsRef is the straightforward measure pass: per interval a
// bisection of the runs, per step the phase peaks found by name and the
// highest per phase kept in maps.
func measureStepsRef(st *stepper, res *stepResult, spans []span, peakIndex, oom int) {
	runAt := func(i int) int {
		return sort.Search(len(st.runs), func(j int) bool { return int(st.runs[j].first) > i }) - 1
	}
	maxBytes := map[Phase]int64{}
	k, runLo := -1, 0
	var stepPeaks []PhasePeak
	flush := func() {
		if k < 0 {
			return
		}
		for _, pp := range stepPeaks {
			res.phasePeaks = append(res.phasePeaks, pp)
			if b, ok := maxBytes[pp.Phase]; !ok || pp.PeakAllocatedBytes > b {
				maxBytes[pp.Phase], res.maxPhase[pp.Phase] = pp.PeakAllocatedBytes, pp.PeakIndex
			}
		}
		s := &res.steps[k]
		hi := runAt(spans[k].last) + 1
		s.MicroBatches, s.EvalPasses = st.passes(runLo, hi)
		res.info.EvalPasses += s.EvalPasses
		runLo = hi
	}
	for j, w := range st.ivs {
		iv := struct {
			start, arg int
			max, end   int64
		}{int(w.start), int(w.arg), w.max, w.end}
		for k+1 < len(spans) && iv.start >= spans[k+1].first {
			flush()
			k++
			sp := spans[k]
			res.steps = append(res.steps, Step{FirstEntry: sp.first, LastEntry: sp.last, Partial: sp.partial, PeakIndex: -1})
			stepPeaks = stepPeaks[:0]
			for runLo < len(st.runs) && int(st.runs[runLo].first) < sp.first {
				runLo++
			}
		}
		step := k
		if k >= 0 && iv.start > spans[k].last {
			step = -1
		}
		ph := PhaseOther
		if r := runAt(iv.start); r >= 0 && step >= 0 && int(st.runs[r].first) >= spans[step].first {
			ph = reportPhase(st.runs[r].ph)
		}
		if step >= 0 {
			last := st.n - 1
			if j+1 < len(st.ivs) {
				last = int(st.ivs[j+1].start) - 1
			}
			last = min(last, spans[step].last)
			first := max(iv.start, spans[step].first)
			if n := len(res.spansOut); n > 0 && res.spansOut[n-1].Step == step && res.spansOut[n-1].Phase == ph {
				res.spansOut[n-1].LastEntry = last
			} else {
				res.spansOut = append(res.spansOut, PhaseSpan{Step: step, Phase: ph, FirstEntry: first, LastEntry: last})
			}
		}
		holds := func(i int) bool { return i >= iv.start && (j+1 == len(st.ivs) || i < int(st.ivs[j+1].start)) }
		if holds(peakIndex) && peakIndex >= 0 {
			res.peak = PeakPhase{Step: step, Phase: ph}
		}
		if holds(oom) {
			res.oomPhase = ph
		}
		if step < 0 {
			continue
		}
		s := &res.steps[step]
		if s.PeakIndex < 0 || iv.max > s.PeakAllocatedBytes {
			s.PeakAllocatedBytes, s.PeakIndex = iv.max, iv.arg
		}
		s.EndAllocatedBytes = iv.end
		switch p := slices.IndexFunc(stepPeaks, func(pp PhasePeak) bool { return pp.Phase == ph }); {
		case p < 0:
			stepPeaks = append(stepPeaks, PhasePeak{Step: step, Phase: ph, PeakAllocatedBytes: iv.max, PeakIndex: iv.arg})
		case iv.max > stepPeaks[p].PeakAllocatedBytes:
			stepPeaks[p].PeakAllocatedBytes, stepPeaks[p].PeakIndex = iv.max, iv.arg
		}
	}
	flush()
}

// TestLazyStackInfo checks the stack bytes (made in one pass where a stack
// may be inside zero_grad, else when first read) against bytes made from
// every stack's summary and depth, after a whole diagnosis (the bytes it
// made) and for every stack, and the zero_grad and backward questions
// against the same pass, on the fast path snapshots and one whose
// optimizer steps call zero_grad (so that both ways are taken).
func TestLazyStackInfo(t *testing.T) {
	snaps := fastpathSnapshots(t)
	b := newBuilder()
	fwd := b.stack(py("train.py", 10, "forward"))
	opt := b.stack(py("torch/optim/adam.py", 7, "step"))
	zg := b.stack(py("torch/optim/optimizer.py", 9, "zero_grad"))
	for step := range 3 {
		base := uint64(step) << 20
		b.ev(snapshot.ActionAlloc, base+0x1000, 512, fwd)
		b.ev(snapshot.ActionAlloc, base+0x2000, 1024, opt)
		b.ev(snapshot.ActionFreeRequested, base+0x2000, 1024, zg)
		b.ev(snapshot.ActionFreeCompleted, base+0x2000, 1024, zg)
		b.ev(snapshot.ActionFreeCompleted, base+0x1000, 512, fwd)
	}
	snaps["zero_grad"] = b.s
	ways := map[bool]int{}
	lazyInfoAlways = true
	defer func() { lazyInfoAlways = false }()
	for name, s := range snaps {
		a := Analyze(s, Options{})
		r := a.Report()
		for i, d := range a.Devices {
			st := &s.Stacks
			eager := make([]stackInfo, st.Len())
			zeroGrad, backward := false, false
			for id := range eager {
				sum := st.Summary(snapshot.StackID(id))
				v := stackInfo(summaryPhase(sum)) & 15
				if st.Depth(snapshot.StackID(id)) > 0 {
					v |= infoFrames
				}
				if summaryPhase(sum) == phaseBackward {
					backward = true
				}
				if summaryZeroGrad(sum) {
					v |= infoZeroGrad
					zeroGrad = true
				}
				if summaryLoss(sum) {
					v |= infoLoss
				}
				eager[id] = v | infoKnown
			}
			if zeroGrad && !mayZeroGrad(s.Frames) {
				t.Fatalf("%s: a stack is inside zero_grad, mayZeroGrad says none may be", name)
			}
			g := d.startDiagnosis(stepsHead(d, &r.Devices[i]), nil)
			g.finish(&r.Devices[i])
			ways[g.src.eager]++
			for id, v := range g.src.info {
				if v != 0 && v != eager[id] {
					t.Fatalf("%s device %d: stack %d made %08b, want %08b", name, d.ID, id, v, eager[id])
				}
			}
			src := newSource(d)
			if src.anyZeroGrad() != zeroGrad || src.anyBackwardStack() != backward {
				t.Errorf("%s device %d: zero_grad %v backward %v, want %v %v", name, d.ID, src.anyZeroGrad(), src.anyBackwardStack(), zeroGrad, backward)
			}
			for id := range eager {
				if v := src.stackInfo(snapshot.StackID(id)); v != eager[id] {
					t.Fatalf("%s device %d: stack %d is %08b, want %08b", name, d.ID, id, v, eager[id])
				}
			}
		}
	}
	if ways[true] == 0 || ways[false] == 0 {
		t.Errorf("bytes made in one pass %d times, when read %d times: want both", ways[true], ways[false])
	}
}

// TestPhaseText writes each phase by its name, reads the names back, and
// refuses what is no phase, either way.
func TestPhaseText(t *testing.T) {
	want := map[Phase]string{PhaseForward: "forward", PhaseBackward: "backward", PhaseOptimizer: "optimizer", PhaseOther: "other"}
	if len(Phases) != len(want) {
		t.Fatalf("%d phases, want %d", len(Phases), len(want))
	}
	for _, p := range Phases {
		b, err := json.Marshal(PhasePeak{Phase: p})
		if err != nil || !strings.Contains(string(b), `"phase":"`+want[p]+`"`) {
			t.Errorf("phase %d: %s %v, want its name %q", p, b, err, want[p])
		}
		var back PhasePeak
		if err := json.Unmarshal(b, &back); err != nil || back.Phase != p {
			t.Errorf("%s read back as %v, %v", b, back.Phase, err)
		}
	}
	if b, err := json.Marshal(PhaseSpan{Phase: Phase(len(Phases))}); err == nil {
		t.Errorf("phase %d written as %s", len(Phases), b)
	}
	for _, bad := range []string{`"Forward"`, `""`, `"init"`, `3`} {
		var p PhasePeak
		if err := json.Unmarshal([]byte(`{"phase":`+bad+`}`), &p); err == nil {
			t.Errorf("phase %s read as %v", bad, p.Phase)
		}
	}
}
