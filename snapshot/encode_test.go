package snapshot

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestEncodeRoundTripReal re-pickles every real file at every protocol and
// checks that the gopickle reference decodes the same snapshot back.
func TestEncodeRoundTripReal(t *testing.T) {
	for _, rf := range realFiles {
		orig, err := DecodeReferenceBytes(readReal(t, rf.name))
		if err != nil {
			t.Fatal(err)
		}
		format := Format26
		if strings.HasPrefix(rf.name, "pt20") {
			format = Format20
		}
		for proto := range 6 {
			t.Run(fmt.Sprintf("%s/p%d", rf.name, proto), func(t *testing.T) {
				var buf bytes.Buffer
				if err := Encode(&buf, orig, EncodeOptions{Protocol: proto, Format: format}); err != nil {
					t.Fatal(err)
				}
				got, err := DecodeReferenceBytes(buf.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				want := *orig
				want.Protocol = got.Protocol
				if wantProto := map[bool]int{true: proto, false: 0}[proto >= 2]; got.Protocol != wantProto {
					t.Errorf("protocol = %d, want %d", got.Protocol, wantProto)
				}
				if !Equal(got, &want) {
					t.Errorf("round trip differs: %s", Diff(&want, got))
				}
			})
		}
	}
}
