package analysis

import (
	"math/rand/v2"
	"slices"
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

// TestHeaviest checks the heaviest stacks and the total weight (picked by
// blocks of words into a heap) against every positive weight in stack order
// (rankSet.all), summed in that order and sorted, on the fast path
// snapshots and on weights with ties and zeros over more blocks than one.
func TestHeaviest(t *testing.T) {
	check := func(name string, c *byteTimer) {
		var all []stackWeight
		var total float64
		for i, r := range c.stacks.all() {
			if w := c.weight[r]; w > 0 {
				all = append(all, stackWeight{snapshot.StackID(i - 1), w})
				total += w
			}
		}
		slices.SortFunc(all, func(x, y stackWeight) int {
			if x.heavier(y) {
				return -1
			}
			return 1
		})
		want := all[:min(len(all), flameStacks)]
		got, gotTotal := c.heaviest()
		slices.SortFunc(got, func(x, y stackWeight) int {
			if x.heavier(y) {
				return -1
			}
			return 1
		})
		if gotTotal != total || !slices.Equal(got, want) {
			t.Fatalf("%s: heaviest %v (total %v), want %v (total %v)", name, got, gotTotal, want, total)
		}
	}
	for name, s := range fastpathSnapshots(t) {
		a := Analyze(s, Options{})
		for _, d := range a.Devices {
			c := newByteTimer(newSource(d))
			inBlocks(c.src.numAllocs(), c.weighAll)
			check(name, c)
		}
	}
	// 100 k possible stacks (7 blocks of words), a third of them members,
	// weights from a few values (ties) and zeros.
	rng := rand.New(rand.NewPCG(5, 6))
	c := &byteTimer{stacks: newRankSet(100000)}
	for i := range 100000 {
		if rng.IntN(3) == 0 {
			c.stacks.add(i)
		}
	}
	c.weight = make([]float64, c.stacks.seal())
	for r := range c.weight {
		c.weight[r] = float64(rng.IntN(40)) * 0.25
	}
	check("random", c)
}

// TestByteTimerStacks checks the stack set of newByteTimer (its add
// written out) against rankSet.add of every allocation's stack: the same
// members, so the same ranks.
func TestByteTimerStacks(t *testing.T) {
	for name, s := range fastpathSnapshots(t) {
		a := Analyze(s, Options{})
		for _, d := range a.Devices {
			src := newSource(d)
			got := newByteTimer(src).stacks
			want := newRankSet(src.numStacks() + 1)
			for k := range src.numAllocs() {
				want.add(int(src.allocStack(k)) + 1)
			}
			want.seal()
			if !slices.Equal(got.bits, want.bits) || !slices.Equal(got.before, want.before) {
				t.Fatalf("%s device %d: the byte timer's stacks differ from the allocations' stacks", name, d.ID)
			}
		}
	}
}
