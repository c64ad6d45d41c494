package snapshot

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// firstStreams is Trace.Streams the straightforward way: every entry's
// Stream, each new one in the order met.
func firstStreams(t Trace) []uint64 {
	var out []uint64
	for i := range t.Len() {
		if s := t.Stream(i); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// TestTraceStreams compares Trace.Streams with a scan of every entry's
// Stream on traces of a few pages: pages of the default stream only (the
// column's shared page of zeros), pages with runs of other streams, a
// stream met first in the middle of a page of zeros, and windows of the
// store (a device's trace starts and ends inside pages) at and around page
// boundaries.
func TestTraceStreams(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, mix := range []string{"zeros", "late", "runs", "every"} {
		var tr Trace
		n := 3*pageSize + 123
		for i := range n {
			var s uint64
			switch mix {
			case "late": // one other stream, once, in the third page
				if i == 2*pageSize+77 {
					s = 0x7f00
				}
			case "runs": // runs of a few streams in the second page
				if i >= pageSize && i < 2*pageSize {
					s = uint64(0x100 * (1 + (i/100)%3))
				}
			case "every": // a random stream at every entry
				s = uint64(r.IntN(40)) << 8
			}
			tr.Append(TraceEntry{Action: ActionAlloc, Addr: uint64(i+1) << 9, Size: 512, Stream: s})
		}
		bounds := []int{0, 1, 77, pageSize - 1, pageSize, pageSize + 1, 2*pageSize + 77, 2*pageSize + 78, n - 1, n}
		for _, lo := range bounds {
			for _, hi := range bounds {
				if hi < lo {
					continue
				}
				w := Trace{e: tr.e, start: lo, n: hi - lo}
				t.Run(fmt.Sprintf("%s/%d-%d", mix, lo, hi), func(t *testing.T) {
					if got, want := w.Streams(), firstStreams(w); !slices.Equal(got, want) {
						t.Fatalf("Streams() = %#x, want %#x", got, want)
					}
				})
			}
		}
	}
}
