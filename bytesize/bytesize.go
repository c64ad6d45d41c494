// Package bytesize formats and parses byte counts the way PyTorch users read
// them: binary units (GiB, as PyTorch prints) with decimal units (GB, as GPU
// vendors market) available.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Binary and decimal unit sizes in bytes.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
	KB  int64 = 1e3
	MB  int64 = 1e6
	GB  int64 = 1e9
	TB  int64 = 1e12
)

// Unit selects how Format renders a byte count.
type Unit int

const (
	// Binary renders with 1024-based units (KiB, MiB, GiB, TiB).
	Binary Unit = iota
	// Decimal renders with 1000-based units (kB, MB, GB, TB).
	Decimal
)

// Format renders n bytes with two decimals in the largest unit of the given
// system that keeps the value at or above 1, e.g. "14.96 GiB" or "16.06 GB".
// Values under 1 KiB (or 1 kB) are rendered as plain bytes.
func Format(n int64, u Unit) string {
	neg := n < 0
	v := math.Abs(float64(n))
	base, names := 1024.0, []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	if u == Decimal {
		base, names = 1000.0, []string{"B", "kB", "MB", "GB", "TB", "PB"}
	}
	i := 0
	for v >= base && i < len(names)-1 {
		v /= base
		i++
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if i == 0 {
		return fmt.Sprintf("%s%d B", sign, int64(v))
	}
	return fmt.Sprintf("%s%.2f %s", sign, v, names[i])
}

// FormatGiB renders n bytes as binary units; shorthand for Format(n, Binary).
func FormatGiB(n int64) string { return Format(n, Binary) }

var units = map[string]int64{
	"":  1,
	"b": 1, "byte": 1, "bytes": 1,
	"k": KiB, "kib": KiB, "kb": KB,
	"m": MiB, "mib": MiB, "mb": MB,
	"g": GiB, "gib": GiB, "gb": GB,
	"t": TiB, "tib": TiB, "tb": TB,
}

// Parse reads a size such as "40GiB", "40 GB", "1.5g", "512MiB" or "1234"
// (bytes). Binary suffixes (KiB, MiB, GiB, TiB and the single letters K, M, G,
// T) are powers of 1024; decimal suffixes (kB, MB, GB, TB) are powers of 1000.
// The result is rounded half up to whole bytes.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("bytesize: empty size")
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.' || t[i] == '_' || t[i] == ',') {
		i++
	}
	num := strings.NewReplacer("_", "", ",", "").Replace(t[:i])
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("bytesize: unknown unit %q in %q (use B, KiB, MiB, GiB, TiB, kB, MB, GB or TB)", t[i:], s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("bytesize: %q is not a size (want a number with an optional unit, e.g. 40GiB)", s)
	}
	b := math.Floor(v*float64(mult) + 0.5)
	if b > math.MaxInt64/2 {
		return 0, fmt.Errorf("bytesize: %q is too large", s)
	}
	return int64(b), nil
}

// Signed renders a change in bytes with an explicit sign for growth:
// "+1.50 GiB", "-512.00 MiB", "0 B".
func Signed(n int64, u Unit) string {
	if n > 0 {
		return "+" + Format(n, u)
	}
	return Format(n, u)
}

// Commas writes an integer with thousands separators: 8,030,261,248. Every
// byte count that must be read exactly (formulas, tables) uses it.
func Commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	digits := strings.TrimPrefix(s, "-")
	var b strings.Builder
	if len(digits) < len(s) {
		b.WriteByte('-')
	}
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(digits[i])
	}
	return b.String()
}
