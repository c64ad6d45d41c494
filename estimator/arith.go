package estimator

import "math"

// Byte counts saturate at satMax instead of overflowing, so absurd inputs
// give an absurdly large (and still monotonic) estimate rather than a
// negative one. satMax is 4 EiB, far beyond any real GPU.
const satMax int64 = 1 << 62

// mul multiplies non-negative factors, saturating at satMax.
func mul(fs ...int64) int64 {
	p := int64(1)
	for _, f := range fs {
		if f <= 0 {
			return 0
		}
		if p > satMax/f {
			return satMax
		}
		p *= f
	}
	return p
}

// sum adds non-negative terms, saturating at satMax.
func sum(ts ...int64) int64 {
	var s int64
	for _, t := range ts {
		s += t
		if s >= satMax || s < 0 {
			return satMax
		}
	}
	return s
}

// ceilDiv divides rounding up (b > 0).
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// fraction returns ceil(n·num/den) without overflow for n < satMax.
func fraction(n int64, num, den float64) int64 {
	v := math.Ceil(float64(n) * num / den)
	if v >= float64(satMax) {
		return satMax
	}
	return int64(v)
}
