package bytesize

import "testing"

func TestFormat(t *testing.T) {
	tests := []struct {
		n    int64
		u    Unit
		want string
	}{
		{0, Binary, "0 B"},
		{1023, Binary, "1023 B"},
		{1024, Binary, "1.00 KiB"},
		{20 * MiB, Binary, "20.00 MiB"},
		{79 * GiB, Binary, "79.00 GiB"},
		{16060522496, Decimal, "16.06 GB"},
		{16060522496, Binary, "14.96 GiB"},
		{-3 * GiB / 2, Binary, "-1.50 GiB"},
	}
	for _, tt := range tests {
		if got := Format(tt.n, tt.u); got != tt.want {
			t.Errorf("Format(%d, %v) = %q, want %q", tt.n, tt.u, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"40GiB", 40 * GiB},
		{"40 GB", 40 * GB},
		{"1.5g", 3 * GiB / 2},
		{"512MiB", 512 * MiB},
		{"1234", 1234},
		{"1_000 B", 1000},
		{"0.5 KiB", 512},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "GiB", "12 parsecs", "1.2.3GB", "1e400"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded, want error", bad)
		}
	}
}

func TestCommasAndSigned(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 8030261248: "8,030,261,248", -100: "-100"} {
		if got := Commas(n); got != want {
			t.Errorf("Commas(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Signed(3*GiB/2, Binary); got != "+1.50 GiB" {
		t.Errorf("Signed = %q", got)
	}
	if got := Signed(-512*MiB, Binary); got != "-512.00 MiB" {
		t.Errorf("Signed = %q", got)
	}
}
