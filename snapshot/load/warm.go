package load

import (
	"bytes"
	"errors"

	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

// A browser runs a WebAssembly function in baseline code until the
// function has run for a while, and switches to its optimised code only at
// its next call. The first file a worker loads, if it is its first work,
// runs mostly in baseline code: in node, a 55 MB file decoded in 300 ms
// and analysed in 140 ms, against 175 and 35 ms with the optimised code
// from the start. WarmUp spends the decoder's and the analysis's tier-up
// budgets on generated input before the user drops a file.

// WarmSteps are the sizes, in the generator's steps, of the inputs WarmUp
// loads: a file of each stack family (repeated and distinct stacks), about
// 4 MB each (a step writes 345 and 197 bytes, and less than 15 ms spent on
// them left optimisable code cold). Steps, not bytes: gen sizes a file by
// writing 20,000 steps first.
var WarmSteps = map[gen.Family]int{gen.RealStacks: 12000, gen.DistinctStacks: 20000}

// warmHoldFrames makes WarmUp's distinct stacks lazy after this many frame
// IDs (a user's file waits for max(1 Mi, size/256)), so that the lazy
// stacks' path warms up too.
const warmHoldFrames = 64 << 10

// warmSlice is how many bytes WarmUp generates or decodes between two
// calls of its yield: a few milliseconds in a browser's baseline code
// (its caller's yield decides by the clock whether to let others in).
const warmSlice = 32 << 10

// ErrWarmUpStopped is WarmUp's error when stop said so.
var ErrWarmUpStopped = errors.New("warm-up stopped")

// WarmUp generates a file of each family (WarmSteps) and loads it, once,
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
	for _, fam := range []gen.Family{gen.RealStacks, gen.DistinctStacks} {
		if _, err := warmLoad(fam, pause); err != nil {
			if stopped {
				return ErrWarmUpStopped
			}
			return err
		}
	}
	return nil
}

// warmLoad generates WarmUp's input of a family and loads it, calling pause
// every warmSlice bytes and stopping when it says true.
func warmLoad(fam gen.Family, pause func() bool) (*File, error) {
	if pause() {
		return nil, ErrWarmUpStopped
	}
	w := &warmWriter{pause: pause}
	if _, err := gen.WriteFamily(w, gen.FamilyOptions{Family: fam, Iterations: WarmSteps[fam]}); err != nil {
		return nil, err
	}
	b := w.b.Bytes()
	return Load(Input{Name: "warm-up", R: bytes.NewReader(b), Size: int64(len(b)), Source: bytes.NewReader(b)},
		Options{Analysis: analysis.Options{TimelinePoints: TimelinePoints}, holdFrames: warmHoldFrames,
			progressEvery: warmSlice, canceled: pause})
}

// warmWriter collects the generated file, pausing every warmSlice bytes.
type warmWriter struct {
	b     bytes.Buffer
	next  int
	pause func() bool
}

// Write implements io.Writer.
func (w *warmWriter) Write(p []byte) (int, error) {
	w.b.Write(p)
	if w.b.Len() >= w.next {
		w.next = w.b.Len() + warmSlice
		if w.pause() {
			return 0, ErrWarmUpStopped
		}
	}
	return len(p), nil
}
