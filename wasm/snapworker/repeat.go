package main

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
