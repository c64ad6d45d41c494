package analysis

import (
	"testing"

	"oomscope/snapshot"
)

// TestWeighAll checks the byte-time weights of weighAll (one loop per
// block) against weighRef (a call per allocation, as byteTime did before),
// exactly, on the fast path snapshots.
func TestWeighAll(t *testing.T) {
	weighed := 0
	for name, s := range fastpathSnapshots(t) {
		a := Analyze(s, Options{})
		for _, d := range a.Devices {
			src := newSource(d)
			got, want := newByteTimer(src), newByteTimer(src)
			inBlocks(src.numAllocs(), got.weighAll)
			for k := range src.numAllocs() {
				start, end, _ := src.allocSpan(k)
				want.weighRef(start, end, src.allocSize(k), src.allocStack(k))
			}
			for r := range want.weight {
				if got.weight[r] != want.weight[r] {
					t.Fatalf("%s device %d: weight of rank %d is %v, want %v", name, d.ID, r, got.weight[r], want.weight[r])
				}
				if want.weight[r] > 0 {
					weighed++
				}
			}
		}
	}
	if weighed < 100 {
		t.Errorf("%d stacks weighed: the test checks little", weighed)
	}
}

// weighRef adds an allocation's bytes × lifetime to its stack's weight.
func (c *byteTimer) weighRef(start, end int32, size int64, stack snapshot.StackID) {
	lo, hi := max(int(start), 0), min(int(end), c.n-1)
	var life float64
	switch {
	case c.n == 0:
	case c.clock.on():
		life = c.clock.at(hi) - c.clock.at(lo)
	default:
		life = float64(hi - lo)
	}
	if r := c.stacks.rank(int(stack) + 1); life > 0 && r >= 0 {
		c.weight[r] += float64(size) * life
	}
}
