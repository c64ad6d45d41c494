package triage

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestSaturate(t *testing.T) {
	tests := []struct {
		x    float64
		want int64
	}{
		{1.5, 2},
		{-1.5, -2},
		{0x1p62, 1 << 62},
		{0x1p63, math.MaxInt64},
		{0x1p64, math.MaxInt64},
		{math.Inf(1), math.MaxInt64},
		{-0x1p63, math.MinInt64},
		{-0x1p70, math.MinInt64},
		{math.Inf(-1), math.MinInt64},
		{math.NaN(), 0},
	}
	for _, tt := range tests {
		if got := saturate(tt.x); got != tt.want {
			t.Errorf("saturate(%g) = %d, want %d", tt.x, got, tt.want)
		}
	}
	adds := []struct{ a, b, want int64 }{
		{1, 2, 3},
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MaxInt64 - 5, 511, math.MaxInt64},
		{math.MinInt64, -1, math.MinInt64},
		{math.MaxInt64, math.MinInt64, -1},
		{-5, 3, -2},
	}
	for _, tt := range adds {
		if got := addSat(tt.a, tt.b); got != tt.want {
			t.Errorf("addSat(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestHugeSizesSaturate: sizes past int64 (a wrapped size_t printed as
// 16.00 EiB or as UINT64_MAX in GiB, more digits than any allocator prints,
// a TensorFlow shape whose product overflows) reach the bogus-size rule with
// their value exact or saturated, and no number of the finding wraps to a
// negative.
func TestHugeSizesSaturate(t *testing.T) {
	const tail = ". GPU 0 has a total capacity of 79.15 GiB of which 3.00 GiB is free. Of the allocated memory 70.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated."
	tests := []struct {
		name  string
		text  string
		tried string // exact decimal bytes of the tried size
	}{
		{"16 EiB, size_t wrap", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 EiB" + tail, "18446744073709551616"},
		{"UINT64_MAX in GiB", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 17179869184.00 GiB" + tail, "18446744073709551616"},
		{"8 EiB, exactly 2^63", "CUDA out of memory. Tried to allocate 8.00 EiB (GPU 0; 11.93 GiB total capacity; 4.00 GiB already allocated; 7.33 GiB free; 179.00 KiB cached)", "9223372036854775808"},
		{"16 EB, decimal spelling", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.00 EB" + tail, "18446744073709551616"},
		{"40 digits", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " + strings.Repeat("9", 40) + ".00 GiB" + tail, MaxBytes.String()},
		{"TF shape overflow", "ResourceExhaustedError: OOM when allocating tensor with shape[100000000000,100000000000,1000000] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
			"40000000000000000000000000000"},
		{"TF dim past int64", "ResourceExhaustedError: OOM when allocating tensor with shape[99999999999999999999999,2] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
			"799999999999999999999992"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := one(t, tt.text)
			if f.TriedBytes == nil || f.TriedBytes.String() != tt.tried {
				t.Fatalf("tried = %v, want %s", f.TriedBytes, tt.tried)
			}
			if f.Cause != CauseBogusSize {
				t.Errorf("cause %s (%s), want bogus-size", f.Cause, f.Why)
			}
			for _, n := range append(append([]Number{}, f.Evidence...), f.Derived...) {
				if n.Name == "tried" && (n.Bytes != math.MaxInt64 || !strings.Contains(n.Formula, "saturated")) {
					t.Errorf("evidence tried = %d (%s), want %d marked saturated", n.Bytes, n.Formula, int64(math.MaxInt64))
				}
				if n.Bytes < 0 && n.Name != "non_pytorch_in_process" && n.Name != "outside_this_process" {
					t.Errorf("%s = %d: wrapped negative", n.Name, n.Bytes)
				}
			}
			b, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "-9223372036854775808") {
				t.Errorf("JSON holds a wrapped int64: %s", b)
			}
			if bar, ok := CardBar(f); ok {
				checkBar(t, bar)
			}
		})
	}
}

// checkBar verifies the card bar has no negative or wrapped part.
func checkBar(t *testing.T, b Bar) {
	t.Helper()
	if b.Total < 0 || b.Request < 0 || b.RequestStart < 0 || b.Shortfall < 0 || b.RequestStart > b.Total {
		t.Errorf("bar %+v has a negative or out-of-range figure", b)
	}
	for _, s := range b.Segments {
		if s.Bytes < 0 {
			t.Errorf("bar segment %s = %d", s.Name, s.Bytes)
		}
	}
}

// TestAllocatorRequestSaturates: the allocator's rounding of a tensor
// whose size is near int64's end does not wrap.
func TestAllocatorRequestSaturates(t *testing.T) {
	f := &Finding{Backend: "cuda", Kind: "cuda-2x"}
	for _, n := range []int64{math.MaxInt64, math.MaxInt64 - 100, 1 << 62} {
		if r, _ := allocatorRequest(f, n); r < n-(2<<20) {
			t.Errorf("allocatorRequest(%d) = %d: wrapped", n, r)
		}
	}
}
