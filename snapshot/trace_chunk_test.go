package snapshot_test

import (
	"bytes"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// TestTraceChunk reads traces chunk by chunk and checks every entry against
// the per-entry accessors: a decoded trace sharing its store with other
// devices (a run of rows that starts inside a page), and a built one of
// several pages.
func TestTraceChunk(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: gen.RealStacks, Iterations: 30000}); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.DecodeBytes(buf.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	opt := gen.Scenario("training")
	opt.Devices = 3
	two, _, err := gen.Bytes(opt)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := snapshot.DecodeBytes(two, nil)
	if err != nil {
		t.Fatal(err)
	}
	var built snapshot.Trace
	for i := range 40000 {
		addr, size := uint64(i)*512, int64(i)
		if i == 20000 { // a page of wide addrs and sizes
			addr, size = 0x7f0000000001, 1<<40
		}
		built.Append(snapshot.TraceEntry{Action: []snapshot.Action{snapshot.ActionAlloc, snapshot.ActionFreeCompleted, "mystery"}[i%3],
			Addr: addr, Size: size, Frames: snapshot.StackID(i % 7)})
	}
	traces := append(append([]snapshot.Trace{built}, s.DeviceTraces...), s2.DeviceTraces...)
	chunks := 0
	var sizeBuf []int64 // Plain's
	for d, tr := range traces {
		for i := 0; i < tr.Len(); {
			c := tr.Chunk(i)
			if len(c.Actions) == 0 || c.Sizes.Len() != len(c.Actions) || len(c.Stacks) != len(c.Actions) ||
				c.Addrs.Len() != len(c.Actions) || i+len(c.Actions) > tr.Len() {
				t.Fatalf("trace %d: chunk at %d has %d/%d/%d/%d entries of %d left", d, i, len(c.Actions), c.Sizes.Len(), len(c.Stacks),
					c.Addrs.Len(), tr.Len()-i)
			}
			plain := c.Sizes.Plain(&sizeBuf)
			for j, v := range plain {
				if v != tr.Size(i+j) {
					t.Fatalf("trace %d entry %d: Plain says size %d, Size %d", d, i+j, v, tr.Size(i+j))
				}
			}
			for j, a := range c.Actions {
				k := min(snapshot.ActionKind(a), snapshot.KindOther)
				if k != tr.Kind(i+j) || c.Sizes.At(j) != tr.Size(i+j) || c.Stacks[j] != tr.Frames(i+j) || c.Addrs.At(j) != tr.Addr(i+j) {
					t.Fatalf("trace %d entry %d: chunk says %d/%d/%d/%#x, accessors %d/%d/%d/%#x", d, i+j, k, c.Sizes.At(j), c.Stacks[j],
						c.Addrs.At(j), tr.Kind(i+j), tr.Size(i+j), tr.Frames(i+j), tr.Addr(i+j))
				}
			}
			i += len(c.Actions)
			chunks++
		}
	}
	if chunks < 5 {
		t.Errorf("%d chunks: the traces did not span pages", chunks)
	}
}
