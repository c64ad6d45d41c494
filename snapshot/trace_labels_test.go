package snapshot

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestLabelledFrom checks LabelledFrom against a scan of every entry's
// UserMetadata and Extra, from every entry of windows of one store (a
// device's trace): no labels, one user_metadata late, extras and
// user_metadata at random entries, both on one entry, labels just before
// and at a window's first and last entries.
func TestLabelledFrom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	n := 2*pageSize + 50
	for _, mix := range []string{"none", "late", "random", "edges"} {
		var tr Trace
		for i := range n {
			e := TraceEntry{Action: ActionAlloc, Addr: uint64(i+1) << 9, Size: 512}
			switch mix {
			case "late":
				if i == 2*pageSize+7 {
					e.UserMetadata = "optimizer"
				}
			case "random":
				if r.IntN(300) == 0 {
					e.UserMetadata = "x"
				}
				if r.IntN(200) == 0 {
					e.Extra = &EntryExtra{Category: "activation"}
				}
			case "edges":
				if i == 99 || i == 100 || i == n-1 || i == pageSize {
					e.Extra = &EntryExtra{Category: "temporary"}
				}
			}
			tr.Append(e)
		}
		for _, w := range [][2]int{{0, n}, {100, n}, {101, n - 1}, {pageSize, pageSize + 1}, {7, 7}} {
			win := Trace{e: tr.e, start: w[0], n: w[1] - w[0]}
			t.Run(fmt.Sprintf("%s/%d-%d", mix, w[0], w[1]), func(t *testing.T) {
				want := win.Len() // the first labelled entry at or after i, scanning back
				for i := win.Len(); i >= 0; i-- {
					if i < win.Len() && (win.UserMetadata(i) != "" || win.Extra(i) != nil) {
						want = i
					}
					if got := win.LabelledFrom(i); got != want {
						t.Fatalf("LabelledFrom(%d) = %d, want %d", i, got, want)
					}
				}
			})
		}
	}
	if got := (Trace{}).LabelledFrom(0); got != 0 {
		t.Errorf("empty trace: LabelledFrom(0) = %d, want 0", got)
	}
}
