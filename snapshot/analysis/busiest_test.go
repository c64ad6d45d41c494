package analysis

import "testing"

func TestBusiest(t *testing.T) {
	for _, tt := range []struct {
		entries []int
		want    int
	}{{nil, -1}, {[]int{0}, 0}, {[]int{5, 9, 9, 2}, 1}, {[]int{3, 3}, 0}, {[]int{1, 2, 7}, 2}} {
		r := &Report{}
		var hs []Headline
		for i, n := range tt.entries {
			r.Devices = append(r.Devices, DeviceReport{Device: i, Entries: n})
			hs = append(hs, Headline{Device: i, Entries: n})
		}
		if got := r.Busiest(); got != tt.want {
			t.Errorf("Busiest(%v) = %d, want %d", tt.entries, got, tt.want)
		}
		if got := BusiestHeadline(hs); got != tt.want {
			t.Errorf("BusiestHeadline(%v) = %d, want %d", tt.entries, got, tt.want)
		}
	}
}
