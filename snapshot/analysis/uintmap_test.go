package analysis

import (
	"math/rand/v2"
	"testing"
)

// TestUintMap runs random puts, gets, deletes, swaps and takes on a uintMap and a Go map
// side by side: few distinct addresses (0 among them) so that slots
// collide, are reused and the table grows, and every get and the length
// must agree after each step.
func TestUintMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, distinct := range []int{1, 7, 100, 5000} {
		tab, ref := newUintMap[openAlloc](), map[uint64]openAlloc{}
		addr := func() uint64 { return uint64(rng.IntN(distinct)) * 512 }
		for step := range 200000 {
			a := addr()
			switch op := rng.IntN(14); {
			case op < 5:
				v := openAlloc{k: int32(step), size: rng.Uint32()}
				tab.put(a, v)
				ref[a] = v
			case op < 8:
				tab.del(a)
				delete(ref, a)
			case op < 11:
				v := openAlloc{k: int32(step), size: rng.Uint32()}
				old, had := tab.swap(a, v)
				if wold, whad := ref[a]; had != whad || old != wold {
					t.Fatalf("%d addresses, step %d: swap(%#x) = %v %v, want %v %v", distinct, step, a, old, had, wold, whad)
				}
				ref[a] = v
			default:
				got, ok := tab.take(a)
				if want, wok := ref[a]; ok != wok || got != want {
					t.Fatalf("%d addresses, step %d: take(%#x) = %v %v, want %v %v", distinct, step, a, got, ok, want, wok)
				}
				delete(ref, a)
			}
			b := addr()
			got, ok := tab.get(b)
			want, wok := ref[b]
			if ok != wok || got != want {
				t.Fatalf("%d addresses, step %d: get(%#x) = %v %v, want %v %v", distinct, step, b, got, ok, want, wok)
			}
			if tab.len() != len(ref) {
				t.Fatalf("%d addresses, step %d: len %d, want %d", distinct, step, tab.len(), len(ref))
			}
		}
		for a, want := range ref {
			if got, ok := tab.get(a); !ok || got != want {
				t.Fatalf("%d addresses: get(%#x) = %v %v at the end, want %v", distinct, a, got, ok, want)
			}
		}
	}
}

// TestTouch checks that touch reads the first slot of every key: its sum
// is the sum of the keys found in those slots, computed here key by key
// with home, for every count of keys up to 40 (the four-key rounds and
// the rest) on a map holding some of them.
func TestTouch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := newUintMap[openAlloc]()
	keys := make([]uint64, 40)
	for j := range keys {
		keys[j] = uint64(rng.IntN(1<<20)+1) << 9
		if j%3 != 0 {
			m.put(keys[j], openAlloc{k: int32(j)})
		}
	}
	for n := range len(keys) + 1 {
		var want uint64
		for _, key := range keys[:n] {
			want += m.slots[m.home(key)].key
		}
		if got := m.touch(keys[:n]); got != want {
			t.Fatalf("touch of %d keys = %d, want %d", n, got, want)
		}
	}
}
