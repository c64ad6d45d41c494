package snapshot

import (
	"fmt"
	"testing"
)

// TestEntryRunOddEntries has CPython pickle trace entries that leave the
// one-call entry path (entryRun) part way: keys in another order, missing and
// extra keys, and an empty trace. The fast
// decoder must give what the gopickle reference gives, at every protocol
// the reference reads.
func TestEntryRunOddEntries(t *testing.T) {
	frame := `{'filename': 'train.py', 'line': 7, 'name': 'step'}`
	entries := []string{
		// Frames in the middle of the leading pairs.
		`{'action': 'alloc', 'addr': 4096, 'frames': [` + frame + `], 'size': 512, 'stream': 0, 'time_us': 1}`,
		// Keys in another order; no time_us.
		`{'addr': 8192, 'action': 'alloc', 'stream': 0, 'size': 1024, 'frames': [` + frame + `, ` + frame + `]}`,
		// Frames before the numbers.
		`{'action': 'free_requested', 'frames': [], 'addr': 4096, 'size': 512, 'stream': 0, 'time_us': 3}`,
		// Only some of the leading pairs.
		`{'action': 'free_completed', 'addr': 4096, 'frames': [` + frame + `], 'size': 512, 'stream': 0}`,
		// An extra key between the numbers and the frames.
		`{'action': 'segment_alloc', 'addr': 0, 'size': 2097152, 'stream': 0, 'time_us': 5, 'device_free': 123, 'frames': []}`,
	}
	var traces string
	for _, e := range entries {
		traces += e + ", "
	}
	src := fmt.Sprintf(`{'segments': [], 'device_traces': [[%s], []]}`, traces)
	var reqs []map[string]any
	for proto := 2; proto <= 5; proto++ {
		reqs = append(reqs, map[string]any{"src": src, "proto": proto})
	}
	for i, data := range python(t, reqs) {
		proto := reqs[i]["proto"]
		ref, err := DecodeReferenceBytes(data)
		if err != nil {
			t.Fatalf("protocol %v: reference: %v", proto, err)
		}
		fast, err := DecodeBytes(data, nil)
		if err != nil {
			t.Fatalf("protocol %v: %v", proto, err)
		}
		if !Equal(fast, ref) {
			t.Errorf("protocol %v: fast and reference differ: %s", proto, Diff(ref, fast))
		}
		if n := ref.DeviceTraces[0].Len(); n != len(entries) {
			t.Errorf("protocol %v: the reference reads %d entries, want %d: the test does not test", proto, n, len(entries))
		}
	}
}
