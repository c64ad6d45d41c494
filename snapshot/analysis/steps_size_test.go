package analysis

import (
	"testing"
	"unsafe"
)

// TestStepRecordSizes pins the size of the records findSteps keeps per
// phase run and per gap (hundreds of thousands of each on a 1 GiB trace of
// short steps; they set the report's heap peak): entry indices are int32.
func TestStepRecordSizes(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"run", unsafe.Sizeof(run{}), 32},
		{"gapCut", unsafe.Sizeof(gapCut{}), 12},
	} {
		if c.got > c.want {
			t.Errorf("%s is %d bytes, want at most %d", c.name, c.got, c.want)
		}
	}
}
