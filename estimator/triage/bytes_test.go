package triage

import (
	"encoding/json"
	"math"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		num, unit string
		want      string
	}{
		{"0", "bytes", "0"},
		{"1024", "bytes", "1024"},
		{"1024.00", "KiB", "1048576"},                     // exactly 1 MiB prints as KiB
		{"3.94", "GiB", "4230542787"},                     // 4230542786.56 rounds up
		{"21.56", "MiB", "22607299"},                      // 22607298.56
		{"0.5", "KiB", "512"},                             // exact
		{"9.07", "GB", "9738838344"},                      // MPS GB is 2^30: 9738838343.68
		{"17179869184.00", "GiB", "18446744073709551616"}, // UINT64_MAX printed: 2^64
		{"130674.91", "GiB", "140311116214436"},           // 140311116214435.84
		{"37252902.99", "GiB", "40000000005777654"},       // beyond float64's exact range: 40000000005777653.76
		{"1.5", "K", "1536"},                              // XLA-style single letter
		{"000.00", "GiB", "0"},
	}
	for _, tt := range tests {
		b, err := parseSize(tt.num, tt.unit)
		if err != nil || b.String() != tt.want {
			t.Errorf("parseSize(%s %s) = %s, %v; want %s", tt.num, tt.unit, b, err, tt.want)
		}
	}
	for _, bad := range [][2]string{{"1", "parsecs"}, {"1234567890123456789012345678901", "GiB"}, {".", "GiB"}} {
		if _, err := parseSize(bad[0], bad[1]); err == nil {
			t.Errorf("parseSize(%q, %q) succeeded", bad[0], bad[1])
		}
	}
}

func TestBytesJSONAndConversions(t *testing.T) {
	big, err := parseSize("17179869184.00", "GiB")
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(struct{ B Bytes }{big})
	if string(data) != `{"B":18446744073709551616}` {
		t.Errorf("marshal = %s", data)
	}
	var back struct{ B Bytes }
	if err := json.Unmarshal(data, &back); err != nil || back.B != big {
		t.Errorf("round trip = %v, %v", back.B, err)
	}
	if big.Int64() != math.MaxInt64 || big.Float64() != 0x1p64 {
		t.Errorf("Int64 %d Float64 %g", big.Int64(), big.Float64())
	}
	if got := BytesOf(1 << 30).Human(); got != "1.00 GiB" {
		t.Errorf("Human = %q", got)
	}
	for _, bad := range []string{`-1`, `1.5`, `"x"`, `340282366920938463463374607431768211456`} {
		var b Bytes
		if err := json.Unmarshal([]byte(bad), &b); err == nil {
			t.Errorf("unmarshal %s succeeded", bad)
		}
	}
}
