package app

import (
	"slices"
	"testing"
	"time"
)

// TestPacer checks newPacer against a clock the test moves: a pause yields
// once the budget has passed since the pacer was made or last yielded, and
// at every pause with a budget of 0.
func TestPacer(t *testing.T) {
	for _, c := range []struct {
		name   string
		budget time.Duration
		step   time.Duration // the clock's move between pauses (a slice's work)
		pauses int
		want   []int // the pauses (1-based) that yield
	}{
		{"every slice without a budget", 0, time.Millisecond, 4, []int{1, 2, 3, 4}},
		{"slices of 3 ms, budget 10 ms", 10 * time.Millisecond, 3 * time.Millisecond, 12, []int{4, 8, 12}},
		{"a slice over the budget", 10 * time.Millisecond, 11 * time.Millisecond, 3, []int{1, 2, 3}},
		{"exactly the budget", 10 * time.Millisecond, 5 * time.Millisecond, 6, []int{2, 4, 6}},
		{"short read", 10 * time.Millisecond, time.Millisecond, 9, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := time.Unix(1e9, 0)
			now := func() time.Time { return clock }
			var got []int
			n := 0
			pause := newPacer(c.budget, now, func() {
				got = append(got, n)
				clock = clock.Add(4 * time.Millisecond) // the browser's turn
			})
			for n = 1; n <= c.pauses; n++ {
				clock = clock.Add(c.step)
				pause()
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("yielded at pauses %v, want %v", got, c.want)
			}
		})
	}
}
