package chart

import (
	"strings"
	"testing"

	"oomscope/bytesize"
)

func TestYTicks(t *testing.T) {
	tests := []struct {
		max    int64
		unit   bytesize.Unit
		top    int64
		labels string
	}{
		// fullstep's reserved peak, 56.91 GiB: the page used to label
		// 14.94 / 29.88 / 44.82 / 59.76 GiB.
		{61111009280, bytesize.Binary, 60 << 30, "0|20 GiB|40 GiB|60 GiB"},
		{61111009280, bytesize.Decimal, 75e9, "0|25 GB|50 GB|75 GB"},
		{80 << 30, bytesize.Binary, 100 << 30, "0|20 GiB|40 GiB|60 GiB|80 GiB|100 GiB"},
		{167862272, bytesize.Binary, 200 << 20, "0|50 MiB|100 MiB|150 MiB|200 MiB"},
		{1 << 30, bytesize.Binary, 1280 << 20, "0|0.25 GiB|0.50 GiB|0.75 GiB|1.00 GiB|1.25 GiB"},
		{3 << 40, bytesize.Binary, 4 << 40, "0|1 TiB|2 TiB|3 TiB|4 TiB"},
		{700, bytesize.Binary, 750, "0|250 B|500 B|750 B"},
		{5, bytesize.Decimal, 6, "0|2 B|4 B|6 B"},
		{1, bytesize.Binary, 2, "0|1 B|2 B"},
		{0, bytesize.Binary, 1, "0|1 B"},
		// Past int64 the top saturates; the labels stay round.
		{1<<63 - 1, bytesize.Binary, 1<<63 - 1, "0|2000 PiB|4000 PiB|6000 PiB|8000 PiB|10000 PiB"},
	}
	for _, tt := range tests {
		top, ticks := YTicks(tt.max, tt.unit)
		var labels []string
		for _, tk := range ticks {
			labels = append(labels, tk.Label)
		}
		if top != tt.top || strings.Join(labels, "|") != tt.labels {
			t.Errorf("YTicks(%d, %v) = %d, %s; want %d, %s", tt.max, tt.unit, top, strings.Join(labels, "|"), tt.top, tt.labels)
		}
	}
}

// TestYTicksProperties checks, over many sizes, what every axis must be:
// a top at least 5 % over the data and not far above it, 1 to 5 equal
// steps, ticks from 0 at the bottom to the top at the top, and a step that
// is a round number.
func TestYTicksProperties(t *testing.T) {
	for _, u := range []bytesize.Unit{bytesize.Binary, bytesize.Decimal} {
		for v := int64(1); v > 0 && v < 1<<61; v = v*7/5 + 1 {
			top, ticks := YTicks(v, u)
			n := len(ticks) - 1
			if float64(top) < float64(v)*1.05*(1-1e-9) || n < 1 || n > 5 {
				t.Fatalf("YTicks(%d): top %d, %d steps", v, top, n)
			}
			if float64(top) > float64(v)*1.05*1.7+3 {
				t.Errorf("YTicks(%d): top %d wastes much of the axis", v, top)
			}
			if ticks[0].Bytes != 0 || ticks[0].Y != 1 || ticks[n].Y != 0 || ticks[n].Bytes != top {
				t.Fatalf("YTicks(%d): ends %+v %+v, top %d", v, ticks[0], ticks[n], top)
			}
			step := ticks[1].Bytes
			for i, tk := range ticks {
				if d := tk.Bytes - int64(i)*step; d < -1 || d > 1 {
					t.Fatalf("YTicks(%d): tick %d = %d, not %d × %d", v, i, tk.Bytes, i, step)
				}
			}
			// The step's label is 1, 2, 2.5 or 5 times a power of ten.
			num, _, _ := strings.Cut(ticks[1].Label, " ")
			if m := strings.Trim(strings.ReplaceAll(num, ".", ""), "0"); m != "1" && m != "2" && m != "25" && m != "5" {
				t.Fatalf("YTicks(%d): step label %q is not round", v, ticks[1].Label)
			}
		}
	}
}
