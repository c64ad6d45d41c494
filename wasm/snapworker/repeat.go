package main

// warmRepeats is how many times the warm-up loads the sample snapshot
// (warmSnapshot, 68 KB) again, before the generated files of load.WarmUp.
// A browser optimises a WebAssembly function once it has run for a while;
// the generated files leave a real snapshot's paths cold (memo gets,
// segments and blocks, the classification, the steps, the encoding):
// after WarmUp alone, the first drop of the 3.2 MB real snapshot had
// TurboFan compile 76 functions of the worker (0.6 s of CPU), and 18 after
// 48 loads of the sample (--trace-wasm-compilation-times in Chromium 156).
// Measured in the browser benchmark (settle 3 s, 10 rounds alternated in
// both orders, 2 cores at load 2-5), medians of drop to timeline without
// and with them: distinct-stacks 200 MB 1829 -> 1481 ms (the worker's
// analysis 414 -> 317 ms, its decode 1502 -> 1267), 55 MB 591 -> 565, the
// real 3.2 MB file 160 -> 161, real-stacks 55 MB 378 -> 369; the worker's
// peak memory the same.
const warmRepeats = 48

// repeatWarm calls once n times, calling yield before each and returning
// false without calling once again as soon as stop says true; true if it
// called once n times. A file dropped during it waits for at most one
// call of once (a load of the sample: a few milliseconds).
func repeatWarm(n int, stop func() bool, yield func(), once func()) bool {
	for range n {
		yield()
		if stop() {
			return false
		}
		once()
	}
	return true
}
