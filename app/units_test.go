package app

import (
	"net/url"
	"testing"

	"oomscope/bytesize"
)

func TestUnitFromQuery(t *testing.T) {
	tests := []struct {
		query string
		want  bytesize.Unit
	}{
		{"", bytesize.Binary},
		{"unit=gb", bytesize.Decimal},
		{"model=x&unit=gb", bytesize.Decimal},
		{"unit=gib", bytesize.Binary},
		{"unit=GB", bytesize.Binary}, // only the exact value the pages write
		{"unit=", bytesize.Binary},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		if got := unitFromQuery(q); got != tt.want {
			t.Errorf("unitFromQuery(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
}

func TestWithUnit(t *testing.T) {
	tests := []struct {
		query string
		unit  bytesize.Unit
		want  string
	}{
		{"", bytesize.Decimal, "unit=gb"},
		{"", bytesize.Binary, ""},
		{"unit=gb", bytesize.Binary, ""},
		{"b=2&a=1", bytesize.Decimal, "a=1&b=2&unit=gb"},
		{"a=1&unit=gb", bytesize.Decimal, "a=1&unit=gb"},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		if err != nil {
			t.Fatal(err)
		}
		if got := withUnit(q, tt.unit).Encode(); got != tt.want {
			t.Errorf("withUnit(%q, %v) = %q, want %q", tt.query, tt.unit, got, tt.want)
		}
		// Reading back what was written gives the unit.
		if back := unitFromQuery(withUnit(q, tt.unit)); back != tt.unit {
			t.Errorf("round trip of %v through %q gives %v", tt.unit, tt.query, back)
		}
	}
}
