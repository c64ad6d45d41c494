package triage

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"

	"oomscope/bytesize"
)

// Bytes is an exact, non-negative byte count read from a message. It holds
// 128 bits because allocators print values past 2^64: PyTorch prints
// UINT64_MAX as "17179869184.00 GiB", which is 2^64 bytes once multiplied
// out. It marshals to JSON as an exact integer.
type Bytes struct{ hi, lo uint64 }

// BytesOf returns n as Bytes.
func BytesOf(n uint64) Bytes { return Bytes{lo: n} }

// Float64 returns the count as a float64 (exact up to 2^53).
func (b Bytes) Float64() float64 { return float64(b.hi)*0x1p64 + float64(b.lo) }

// Int64 returns the count, saturated at math.MaxInt64.
func (b Bytes) Int64() int64 {
	if b.hi != 0 || b.lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(b.lo)
}

// big returns the count as a big.Int.
func (b Bytes) big() *big.Int {
	v := new(big.Int).SetUint64(b.hi)
	v.Lsh(v, 64)
	return v.Or(v, new(big.Int).SetUint64(b.lo))
}

// String returns the exact count in decimal.
func (b Bytes) String() string {
	if b.hi == 0 {
		return fmt.Sprint(b.lo)
	}
	return b.big().String()
}

// Human renders the count with two decimals in binary units (GiB, as PyTorch
// prints), through bytesize.Format.
func (b Bytes) Human() string {
	if b.hi != 0 || b.lo > math.MaxInt64 {
		return fmt.Sprintf("%.2f GiB", b.Float64()/(1<<30))
	}
	return bytesize.Format(int64(b.lo), bytesize.Binary)
}

// MarshalJSON writes the exact count as a JSON number.
func (b Bytes) MarshalJSON() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalJSON reads a JSON integer of at most 128 bits.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	v, ok := new(big.Int).SetString(strings.TrimSpace(string(data)), 10)
	if !ok || v.Sign() < 0 || v.BitLen() > 128 {
		return fmt.Errorf("triage: byte count %q is not an integer between 0 and 2^128-1", data)
	}
	*b = fromBig(v)
	return nil
}

// bytesOfBig returns v (≥ 0) as Bytes, saturated at MaxBytes.
func bytesOfBig(v *big.Int) Bytes {
	if v.BitLen() > 128 {
		return MaxBytes
	}
	return fromBig(v)
}

// satInt64 returns v (≥ 0) as an int64, saturated at math.MaxInt64.
func satInt64(v *big.Int) int64 {
	if !v.IsInt64() {
		return math.MaxInt64
	}
	return v.Int64()
}

func fromBig(v *big.Int) Bytes {
	lo := new(big.Int).And(v, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	hi := new(big.Int).Rsh(v, 64).Uint64()
	return Bytes{hi: hi, lo: lo}
}

// maxNumberDigits bounds the digits of a printed number we convert exactly;
// a longer number (or one past 2^128 B) is no size an allocator prints, and
// it is read as MaxBytes, saturated, so that the bogus-size rule sees it.
const maxNumberDigits = 30

var errTooLong = errors.New("triage: number has too many digits")

// MaxBytes is the largest count Bytes holds, 2^128 − 1: where a printed
// size too large to convert exactly saturates.
var MaxBytes = Bytes{hi: math.MaxUint64, lo: math.MaxUint64}

// saturatedRule explains a size read as MaxBytes.
const saturatedRule = "too large to convert exactly (more than 30 digits or 2^128 B): saturated at 2^128 − 1 B"

// unitBytes maps the unit spellings that appear in OOM messages to their size.
// All are binary: PyTorch's format_size prints KiB/MiB/GiB and the MPS
// formatter before 2.8 printed KB/MB/GB with binary divisors.
// PiB and EiB are no allocator's: they come from tools that print a
// wrapped size_t (2^64 B = 16.00 EiB), which the bogus-size rule is for.
var unitBytes = map[string]uint64{
	"bytes": 1, "byte": 1, "B": 1,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50, "EiB": 1 << 60,
	"KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50, "EB": 1 << 60,
	"K": 1 << 10, "M": 1 << 20, "G": 1 << 30,
}

// scaleDecimal converts the printed decimal number num (digits with an
// optional fraction, e.g. "3.94") times mult to bytes, rounding half up. A
// number too long or too large to convert returns MaxBytes with
// errTooLong.
func scaleDecimal(num string, mult uint64) (Bytes, error) {
	intPart, frac, _ := strings.Cut(num, ".")
	if intPart == "" && frac == "" {
		return Bytes{}, fmt.Errorf("triage: %q is not a number", num)
	}
	if len(intPart)+len(frac) > maxNumberDigits {
		return MaxBytes, errTooLong
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return Bytes{}, nil
	}
	n, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return Bytes{}, fmt.Errorf("triage: %q is not a number", num)
	}
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	n.Mul(n, new(big.Int).SetUint64(mult))
	// floor((2·n + den) / (2·den)) rounds n/den half up.
	n.Lsh(n, 1).Add(n, den)
	n.Quo(n, den.Lsh(den, 1))
	if n.BitLen() > 128 {
		return MaxBytes, errTooLong
	}
	return fromBig(n), nil
}

// parseSize converts a printed number and unit ("21.56", "MiB") to bytes.
func parseSize(num, unit string) (Bytes, error) {
	mult, ok := unitBytes[unit]
	if !ok {
		return Bytes{}, fmt.Errorf("triage: unknown unit %q", unit)
	}
	return scaleDecimal(num, mult)
}

// unitRule explains how a printed value became bytes, e.g.
// "21.56 MiB = 21.56 × 2^20 B, rounded half up".
func unitRule(num, unit string) string {
	mult := unitBytes[unit]
	if mult == 1 {
		return "printed in bytes"
	}
	exp := 0
	for m := mult; m > 1; m >>= 1 {
		exp++
	}
	return fmt.Sprintf("%s %s = %s × 2^%d B, rounded half up", num, unit, num, exp)
}
