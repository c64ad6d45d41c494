package chart

import (
	"math"
	"strconv"

	"oomscope/bytesize"
)

// Tick is one label of the y axis.
type Tick struct {
	// Bytes is the tick's value.
	Bytes int64
	// Label is the value as the axis shows it, e.g. "15 GiB" or "2.5 GB".
	Label string
	// Y is where the tick is, as a fraction of the chart's height from the
	// top (0 is the top of the axis, 1 its zero).
	Y float64
}

// headroom is the space above the highest value: the axis reaches at least
// 5 % over it, so the peak never touches the frame.
const headroom = 1.05

// Units of each system, from bytes up, as the axis names them.
var (
	binaryUnits  = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	decimalUnits = []string{"B", "kB", "MB", "GB", "TB", "PB"}
)

// YTicks chooses the y axis for values up to maxBytes shown in unit u: a
// top at least 5 % above maxBytes reached in 3 to 5 equal steps, each step
// a round number (1, 2, 2.5 or 5 × a power of ten) of one unit (KiB, MiB,
// GiB, … or kB, MB, GB, …), the lowest such top, so the labels read 0, 20,
// 40, 60 GiB rather than 14.94, 29.88 GiB. It returns the top and the
// ticks from 0 to the top.
func YTicks(maxBytes int64, u bytesize.Unit) (top int64, ticks []Tick) {
	base, names := 1024.0, binaryUnits
	if u == bytesize.Decimal {
		base, names = 1000.0, decimalUnits
	}
	raw := math.Max(float64(maxBytes)*headroom, 1)
	// The unit: the largest that keeps raw at 1 or more.
	k, unit := 0, 1.0
	for k < len(names)-1 && raw/(unit*base) >= 1 {
		k, unit = k+1, unit*base
	}
	span := raw / unit
	step, n, decimals := niceSteps(span, k == 0)
	top = saturate(float64(n) * step * unit)
	for i := 0; i <= n; i++ {
		v := float64(i) * step
		label := "0"
		if i > 0 {
			label = strconv.FormatFloat(v, 'f', decimals, 64) + " " + names[k]
		}
		ticks = append(ticks, Tick{Bytes: saturate(v * unit), Label: label, Y: float64(n-i) / float64(n)})
	}
	return top, ticks
}

// niceSteps returns the round step (1, 2, 2.5 or 5 × 10^e; at least 1 when
// whole, as bytes do not split) whose n = 3…5 steps reach span with the
// least to spare, and the decimals its multiples need.
func niceSteps(span float64, whole bool) (step float64, n, decimals int) {
	best := math.Inf(1)
	e0 := math.Floor(math.Log10(span / 5))
	for e := e0 - 1; e <= e0+1; e++ {
		for _, m := range []float64{1, 2, 2.5, 5} {
			s := m * math.Pow(10, e)
			k := int(math.Ceil(span/s - 1e-9))
			if k < 3 && !(whole && s == 1) || k > 5 || whole && s != math.Trunc(s) {
				continue
			}
			if top := float64(k) * s; top < best*(1-1e-9) {
				best, step, n = top, s, k
				decimals = max(0, int(-e))
				if m == 2.5 {
					decimals = max(0, int(1-e))
				}
			}
		}
	}
	return step, max(n, 1), decimals
}

// saturate rounds x ≥ 0 to an int64, at most math.MaxInt64.
func saturate(x float64) int64 {
	if x >= 0x1p63 {
		return math.MaxInt64
	}
	return int64(math.Round(x))
}
