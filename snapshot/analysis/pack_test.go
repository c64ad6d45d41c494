package analysis

import (
	"reflect"
	"testing"
)

func TestPackSeries(t *testing.T) {
	s := loadReal(t, "pt26_cs336_ctx128_fullstep.pickle")
	d := Analyze(s, Options{TimelinePoints: 200}).Report().Devices[0]
	pts, rows, err := UnpackSeries(PackSeries(d.Timeline, d.SiteSeries))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pts, d.Timeline) || !reflect.DeepEqual(rows, d.SiteSeries.Values) {
		t.Error("series changed in a pack/unpack round trip")
	}
	for _, bad := range [][]byte{nil, make([]byte, 7), PackSeries(d.Timeline, d.SiteSeries)[:40]} {
		if _, _, err := UnpackSeries(bad); err == nil {
			t.Errorf("UnpackSeries(%d bytes) accepted", len(bad))
		}
	}
	if _, rows, err := UnpackSeries(PackSeries(d.Timeline, nil)); err != nil || len(rows) != 0 {
		t.Errorf("no bands: %v, %d rows", err, len(rows))
	}
}

func FuzzUnpackSeries(f *testing.F) {
	f.Add(PackSeries([]Point{{Index: -1, Allocated: 5}, {Index: 3, TimeUS: 9, Allocated: 7, Reserved: 8}},
		&SiteSeries{Values: [][]int64{{1, 2}, {4, 5}}}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		UnpackSeries(b)
	})
}
