package load

import (
	"bytes"
	"errors"

	"oomscope/snapshot/analysis"
)

// A browser runs a WebAssembly function in baseline code until the
// function has run for a while, and switches to its optimised code only at
// its next call. The first file a worker loads, if it is its first work,
// runs mostly in baseline code: in node, a 55 MB file (repeated stacks)
// decoded in 440-930 ms and analysed in 190-350 ms, against 175-230 and
// 34-41 ms with the optimised code from the start (and 205-250 and 34-43
// after WarmUp). WarmUp spends the decoder's and the analysis's tier-up
// budgets on generated input before the user drops a file.

// WarmSteps are the sizes, in steps (about 1.5 trace entries each), of the
// inputs WarmUp loads: a file of each stack family, repeated and distinct
// stacks (gen's families), about 4 MB each.
var WarmSteps = struct{ Real, Distinct int }{12000, 20000}

// warmHoldFrames makes WarmUp's distinct stacks lazy after this many frame
// IDs, as a user's file of distinct stacks is (the decoder's lazySooner;
// a file whose stacks repeat holds up to max(1 Mi, size/256)), so that the
// lazy stacks' path warms up too.
const warmHoldFrames = 64 << 10

// warmSlice is how many bytes WarmUp generates or decodes between two
// calls of its yield: a few milliseconds in a browser's baseline code
// (its caller's yield decides by the clock whether to let others in).
const warmSlice = 32 << 10

// ErrWarmUpStopped is WarmUp's error when stop said so.
var ErrWarmUpStopped = errors.New("warm-up stopped")

// WarmUp writes a file of each family (WarmSteps) and loads it, once,
// dropping the result. Every warmSlice bytes generated or decoded, and
// before the analysis, it calls yield (if not nil; the worker lets the
// browser deliver messages there) and then stop (if not nil): once stop
// says true it returns ErrWarmUpStopped, so that a file dropped during the
// warm-up waits for at most one slice (and the analysis of the small
// input).
func WarmUp(stop func() bool, yield func()) error {
	stopped := false
	pause := func() bool {
		if yield != nil {
			yield()
		}
		stopped = stopped || stop != nil && stop()
		return stopped
	}
	for _, distinct := range []bool{false, true} {
		if _, err := warmLoad(distinct, pause); err != nil {
			if stopped {
				return ErrWarmUpStopped
			}
			return err
		}
	}
	return nil
}

// warmLoad writes WarmUp's input of a family (warmFile) and loads it,
// calling pause every warmSlice bytes and stopping when it says true.
func warmLoad(distinct bool, pause func() bool) (*File, error) {
	if pause() {
		return nil, ErrWarmUpStopped
	}
	steps := WarmSteps.Real
	if distinct {
		steps = WarmSteps.Distinct
	}
	b := warmFile(distinct, steps, pause, nil)
	if b == nil {
		return nil, ErrWarmUpStopped
	}
	return Load(Input{Name: "warm-up", R: bytes.NewReader(b), Size: int64(len(b)), Source: bytes.NewReader(b)},
		Options{Analysis: analysis.Options{TimelinePoints: TimelinePoints}, holdFrames: warmHoldFrames,
			progressEvery: warmSlice, canceled: pause})
}
