package snapshot_test

import (
	"fmt"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// TestDifferentialGenerated decodes every generator scenario at every
// protocol the generator writes with the fast decoder and the gopickle
// reference.
func TestDifferentialGenerated(t *testing.T) {
	for _, name := range gen.Scenarios() {
		for proto := 1; proto <= 5; proto++ {
			t.Run(fmt.Sprintf("%s/p%d", name, proto), func(t *testing.T) {
				opt := gen.Scenario(name)
				opt.Protocol = proto
				opt.SharedStackLists = proto%2 == 1
				data, _, err := gen.Bytes(opt)
				if err != nil {
					t.Fatal(err)
				}
				fast, err := snapshot.DecodeBytes(data, nil)
				if err != nil {
					t.Fatal(err)
				}
				ref, err := snapshot.DecodeReferenceBytes(data)
				if err != nil {
					t.Fatal(err)
				}
				if !snapshot.Equal(fast, ref) {
					t.Errorf("fast and reference decoders differ")
				}
			})
		}
	}
}
