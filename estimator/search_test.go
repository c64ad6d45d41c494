package estimator

import "testing"

// TestLargestFitting checks the search against thresholds: fits(n) holds
// for n up to the threshold.
func TestLargestFitting(t *testing.T) {
	tests := []struct{ limit, threshold, want int }{
		{0, 5, 0},
		{10, 0, 0},
		{1, 1, 1},
		{1, 7, 1},
		{10, 1, 1},
		{10, 2, 2},
		{10, 3, 3},
		{10, 9, 9},
		{10, 10, 10},
		{10, 11, 10},
		{MaxSeq, 12345, 12345},
		{MaxSeq, MaxSeq - 1, MaxSeq - 1},
		{MaxSeq, MaxSeq + 1, MaxSeq},
	}
	for _, tt := range tests {
		calls := 0
		got := largestFitting(tt.limit, func(n int) bool {
			calls++
			if n < 1 || n > tt.limit {
				t.Errorf("limit %d: asked about %d", tt.limit, n)
			}
			return n <= tt.threshold
		})
		if got != tt.want {
			t.Errorf("largestFitting(%d) with threshold %d = %d, want %d", tt.limit, tt.threshold, got, tt.want)
		}
		if calls > 2*bitLen(tt.limit)+1 {
			t.Errorf("largestFitting(%d) with threshold %d asked %d times", tt.limit, tt.threshold, calls)
		}
	}
}

// TestBoundary checks the bisection between a known true lo and false hi.
func TestBoundary(t *testing.T) {
	tests := []struct{ lo, hi, threshold int }{
		{0, 1, 0},
		{8, 9, 8},
		{8, MaxGPUs, 8},
		{8, MaxGPUs, 9},
		{8, MaxGPUs, 1000},
		{8, MaxGPUs, MaxGPUs - 1},
	}
	for _, tt := range tests {
		got := boundary(tt.lo, tt.hi, func(n int) bool {
			if n <= tt.lo || n >= tt.hi {
				t.Errorf("boundary(%d, %d): asked about %d", tt.lo, tt.hi, n)
			}
			return n <= tt.threshold
		})
		if got != tt.threshold {
			t.Errorf("boundary(%d, %d) with threshold %d = %d", tt.lo, tt.hi, tt.threshold, got)
		}
	}
}

func bitLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}
