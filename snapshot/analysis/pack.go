package analysis

import (
	"encoding/binary"
	"fmt"
	"math"
)

// PackSeries encodes a timeline and its site bands as little-endian
// float64s, for handing them from a Web Worker to the page without JSON:
// the point count n and band count k, then n × (index, time_us, allocated,
// reserved), then k rows of n band values. Every value is below 2^53, so a
// float64 holds it exactly. bands may be nil (k = 0).
func PackSeries(pts []Point, bands *SiteSeries) []byte {
	k := 0
	if bands != nil {
		k = len(bands.Values)
	}
	n := len(pts)
	out := make([]byte, 0, 8*(2+4*n+k*n))
	put := func(v float64) { out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v)) }
	put(float64(n))
	put(float64(k))
	for _, p := range pts {
		put(float64(p.Index))
		put(float64(p.TimeUS))
		put(float64(p.Allocated))
		put(float64(p.Reserved))
	}
	for r := 0; r < k; r++ {
		row := bands.Values[r]
		for j := 0; j < n; j++ {
			var v int64
			if j < len(row) {
				v = row[j]
			}
			put(float64(v))
		}
	}
	return out
}

// UnpackSeries decodes PackSeries's bytes into points and band rows.
func UnpackSeries(b []byte) ([]Point, [][]int64, error) {
	if len(b)%8 != 0 || len(b) < 16 {
		return nil, nil, fmt.Errorf("series: %d bytes is not a packed series", len(b))
	}
	at := 0
	get := func() float64 {
		v := math.Float64frombits(binary.LittleEndian.Uint64(b[at:]))
		at += 8
		return v
	}
	nf, kf := get(), get()
	if !(nf >= 0 && nf <= 1e7 && kf >= 0 && kf <= 1e4) || nf != math.Trunc(nf) || kf != math.Trunc(kf) {
		return nil, nil, fmt.Errorf("series: bad header %v × %v", nf, kf)
	}
	n, k := int(nf), int(kf)
	if want := 8 * (2 + 4*n + k*n); len(b) != want {
		return nil, nil, fmt.Errorf("series: %d bytes for %d points and %d bands, want %d", len(b), n, k, want)
	}
	pts := make([]Point, n)
	for j := range pts {
		pts[j] = Point{Index: int(get()), TimeUS: int64(get()), Allocated: int64(get()), Reserved: int64(get())}
	}
	rows := make([][]int64, k)
	for r := range rows {
		rows[r] = make([]int64, n)
		for j := range rows[r] {
			rows[r][j] = int64(get())
		}
	}
	return pts, rows, nil
}
