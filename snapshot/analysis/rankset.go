package analysis

import (
	"iter"
	"math/bits"
)

// rankSet is a set of integers in [0, n) that numbers its members in
// increasing order (a member's rank), so that a dense slice indexed by rank
// holds one value per member: a bit per possible member instead of a value.
// The anomaly collector weighs the stacks that allocate this way; a file of
// distinct stacks has millions more for its frees and blocks.
type rankSet struct {
	bits []uint64
	// before[w] counts the members in bits[:w] (set by seal).
	before []int32
	n      int
}

func newRankSet(n int) rankSet { return rankSet{bits: make([]uint64, (n+63)/64), n: n} }

// add makes i a member; i outside [0, n) is ignored. Call it before seal.
func (s *rankSet) add(i int) {
	if uint(i) < uint(s.n) {
		s.bits[i>>6] |= 1 << (i & 63)
	}
}

// seal numbers the members and returns how many there are.
func (s *rankSet) seal() int {
	s.before = make([]int32, len(s.bits))
	c := 0
	for w, b := range s.bits {
		s.before[w] = int32(c)
		c += bits.OnesCount64(b)
	}
	return c
}

// rank returns member i's rank, -1 when i is not a member.
func (s *rankSet) rank(i int) int {
	if uint(i) >= uint(s.n) {
		return -1
	}
	w, b := s.bits[i>>6], uint(i&63)
	if w&(1<<b) == 0 {
		return -1
	}
	return int(s.before[i>>6]) + bits.OnesCount64(w&(1<<b-1))
}

// all yields each member and its rank, in increasing order.
func (s *rankSet) all() iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		r := 0
		for w, b := range s.bits {
			for b != 0 {
				if !yield(w<<6+bits.TrailingZeros64(b), r) {
					return
				}
				b &= b - 1
				r++
			}
		}
	}
}
