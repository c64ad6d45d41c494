package main

import "testing"

// TestRepeatWarm: repeatWarm loads n times, yielding before each load, and
// a request (stop) stops it before the next load.
func TestRepeatWarm(t *testing.T) {
	var log []string
	yield := func() { log = append(log, "y") }
	loads := 0
	once := func() { loads++; log = append(log, "l") }
	if !repeatWarm(3, func() bool { return false }, yield, once) || loads != 3 {
		t.Fatalf("without a request: done, 3 loads; got %d loads", loads)
	}
	if got, want := len(log), 6; got != want || log[0] != "y" || log[1] != "l" || log[4] != "y" || log[5] != "l" {
		t.Fatalf("calls %v, want y l y l y l", log)
	}
	// A request arrives during the second load: no third load.
	loads = 0
	stop := func() bool { return loads >= 2 }
	if repeatWarm(5, stop, func() {}, once) || loads != 2 {
		t.Fatalf("request after the second load: stopped after 2 loads; got %d", loads)
	}
	loads = 0
	if repeatWarm(5, func() bool { return true }, func() {}, once) || loads != 0 {
		t.Fatalf("request before the warm-up: no load; got %d", loads)
	}
}
