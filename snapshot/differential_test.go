package snapshot

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestDifferentialReal decodes every real file, and its re-encoding at
// every protocol, with the fast decoder and the gopickle reference.
func TestDifferentialReal(t *testing.T) {
	for _, rf := range realFiles {
		data := readReal(t, rf.name)
		ref, err := DecodeReferenceBytes(data)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(rf.name, func(t *testing.T) {
			fast, err := DecodeBytes(data, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !Equal(fast, ref) {
				t.Errorf("fast and reference differ: %s", Diff(ref, fast))
			}
		})
		format := Format26
		if strings.HasPrefix(rf.name, "pt20") {
			format = Format20
		}
		for proto := range 6 {
			t.Run(fmt.Sprintf("%s/p%d", rf.name, proto), func(t *testing.T) {
				var buf bytes.Buffer
				if err := Encode(&buf, ref, EncodeOptions{Protocol: proto, Format: format, FreshStackLists: proto%2 == 0}); err != nil {
					t.Fatal(err)
				}
				fast, err := DecodeBytes(buf.Bytes(), nil)
				if err != nil {
					t.Fatal(err)
				}
				ref2, err := DecodeReferenceBytes(buf.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				if !Equal(fast, ref2) {
					t.Errorf("fast and reference differ: %s", Diff(ref2, fast))
				}
			})
		}
	}
}

// randomValue builds a random plain-data value. Bytes only when withBytes
// (Python pickles bytes with REDUCE below protocol 3).
func randomValue(r *rand.Rand, depth int, withBytes bool) Value {
	n := 9
	if depth > 4 {
		n = 6 // leaves only
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return randomInt(r)
	case 3:
		return randomFloat(r)
	case 4:
		return randomString(r)
	case 5:
		if withBytes {
			b := make([]byte, r.IntN(300))
			for i := range b {
				b[i] = byte(r.IntN(256))
			}
			return b
		}
		return randomString(r)
	case 6:
		l := make(List, r.IntN(5)+bigCount(r, depth))
		for i := range l {
			l[i] = randomValue(r, depth+1, withBytes)
		}
		return l
	case 7:
		t := make(Tuple, r.IntN(6))
		for i := range t {
			t[i] = randomValue(r, depth+1, withBytes)
		}
		return t
	}
	d := Dict{}
	for i := range r.IntN(6) + bigCount(r, depth) {
		var k Value = fmt.Sprintf("k%d_%s", i, randomString(r))
		if r.IntN(8) == 0 {
			k = int64(i)
		}
		d = append(d, DictItem{Key: k, Value: randomValue(r, depth+1, withBytes)})
	}
	return d
}

// bigCount sometimes makes a container big enough to need several
// APPENDS/SETITEMS batches (Python batches 1000 items).
func bigCount(r *rand.Rand, depth int) int {
	if depth == 0 && r.IntN(8) == 0 {
		return 990 + r.IntN(1100)
	}
	return 0
}

func randomInt(r *rand.Rand) Value {
	switch r.IntN(8) {
	case 0:
		return int64(r.IntN(256))
	case 1:
		return int64(r.IntN(65536))
	case 2:
		return int64(r.Int32()) - 1<<30
	case 3:
		return r.Int64() - 1<<62
	case 4:
		return []int64{0, -1, 255, 256, 65535, 65536, math.MaxInt32, math.MinInt32, math.MaxInt32 + 1,
			math.MinInt32 - 1, math.MaxInt64, math.MinInt64, 140000000000000, 1748730219595970}[r.IntN(14)]
	case 5:
		return new(big.Int).SetUint64(^uint64(0) - uint64(r.IntN(3))) // the 9-byte LONG1 case
	case 6:
		x := new(big.Int).Lsh(big.NewInt(1), uint(64+r.IntN(2000)))
		if r.IntN(2) == 0 {
			x.Neg(x)
		}
		return x.Add(x, big.NewInt(r.Int64N(1000)))
	}
	return -int64(r.IntN(1 << 20))
}

func randomFloat(r *rand.Rand) float64 {
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return float64(r.IntN(1000)) / 8
	case 2:
		return math.Inf(1 - 2*r.IntN(2))
	}
	return (r.Float64() - 0.5) * math.Pow(10, float64(r.IntN(40)-20))
}

func randomString(r *rand.Rand) string {
	alphabet := []rune("abcXYZ019 _-\\\n\r\"'\x00\x1aéß€→😀\u2028")
	n := r.IntN(12)
	if r.IntN(20) == 0 {
		n = 300 + r.IntN(300)
	}
	var b strings.Builder
	for range n {
		b.WriteRune(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// sameValue compares generic values (big integers by value; every integer
// that fits in int64 is an int64).
func sameValue(a, b Value) bool {
	norm := func(x Value) Value {
		if bi, ok := x.(*big.Int); ok && bi.IsInt64() {
			return bi.Int64()
		}
		return x
	}
	a, b = norm(a), norm(b)
	switch x := a.(type) {
	case *big.Int:
		y, ok := b.(*big.Int)
		return ok && x.Cmp(y) == 0
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || (math.IsNaN(x) && math.IsNaN(y)))
	case List:
		y, ok := b.(List)
		return ok && sameSeq(x, y)
	case Tuple:
		y, ok := b.(Tuple)
		return ok && sameSeq(x, y)
	case Dict:
		y, ok := b.(Dict)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i].Key, y[i].Key) || !sameValue(x[i].Value, y[i].Value) {
				return false
			}
		}
		return true
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	return reflect.DeepEqual(a, b)
}

func sameSeq(x, y []Value) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if !sameValue(x[i], y[i]) {
			return false
		}
	}
	return true
}

// referenceValue decodes with gopickle and converts generically.
func referenceValue(b []byte) (Value, error) {
	v, _, err := loadGopickle(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return generic(v)
}

// TestDifferentialRandomValues pickles random values with our writer at
// protocols 0-5 and decodes them with both decoders.
func TestDifferentialRandomValues(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 7))
	for i := range 300 {
		proto := i % 6
		want := randomValue(r, 0, proto >= 3)
		var buf bytes.Buffer
		if err := EncodeValue(&buf, want, proto); err != nil {
			t.Fatal(err)
		}
		got, err := DecodeValue(buf.Bytes())
		if err != nil {
			t.Fatalf("value %d protocol %d: %v", i, proto, err)
		}
		if !sameValue(got, want) {
			t.Fatalf("value %d protocol %d: fast decoder gave %v, want %v", i, proto, got, want)
		}
		if proto == 0 {
			continue // gopickle v0.2.0 does not decode UNICODE's raw-unicode-escape
		}
		ref, err := referenceValue(buf.Bytes())
		if err != nil {
			t.Fatalf("value %d protocol %d: reference: %v", i, proto, err)
		}
		if !sameValue(ref, want) {
			t.Fatalf("value %d protocol %d: reference gave %v, want %v", i, proto, ref, want)
		}
	}
}
