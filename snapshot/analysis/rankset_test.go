package analysis

import (
	"math/rand/v2"
	"testing"
)

// TestRankSet checks rank and all against a sorted list of the members,
// on sets of every density, with ids out of range ignored.
func TestRankSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 4099} {
		for _, density := range []float64{0, 0.01, 0.5, 1} {
			s := newRankSet(n)
			member := make([]bool, n)
			for i := range n {
				if rng.Float64() < density {
					s.add(i)
					s.add(i) // twice: still one member
					member[i] = true
				}
			}
			s.add(-1)
			s.add(n)
			var want []int // the members in increasing order: rank = position
			for i, m := range member {
				if m {
					want = append(want, i)
				}
			}
			if got := s.seal(); got != len(want) {
				t.Fatalf("n=%d density %.2f: seal %d, want %d", n, density, got, len(want))
			}
			r := 0
			for i := -1; i <= n; i++ {
				w := -1
				if i >= 0 && i < n && member[i] {
					w, r = r, r+1
				}
				if got := s.rank(i); got != w {
					t.Fatalf("n=%d density %.2f: rank(%d) = %d, want %d", n, density, i, got, w)
				}
			}
			j := 0
			for id, rank := range s.all() {
				if j >= len(want) || id != want[j] || rank != j {
					t.Fatalf("n=%d density %.2f: all yields (%d, %d) at %d, want %v", n, density, id, rank, j, want[j:min(j+1, len(want))])
				}
				j++
			}
			if j != len(want) {
				t.Fatalf("n=%d density %.2f: all yields %d members, want %d", n, density, j, len(want))
			}
		}
	}
}
