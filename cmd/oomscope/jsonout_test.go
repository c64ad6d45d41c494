package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// encoderJSON is what writeJSON must reproduce: json.Encoder's indented
// output.
func encoderJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// randomJSON builds a random value: nested objects and arrays (empty ones
// too, and deeper than the indenter's run of spaces), strings with quotes,
// backslashes, punctuation, HTML and non-ASCII, numbers, literals.
func randomJSON(r *rand.Rand, depth int) any {
	k := r.IntN(9)
	if depth > 40 {
		k = 4 + r.IntN(5)
	}
	switch k {
	case 0, 1:
		m := map[string]any{}
		for range r.IntN(4) {
			m[randomString(r)] = randomJSON(r, depth+1)
		}
		return m
	case 2, 3:
		a := []any{}
		for range r.IntN(4) {
			a = append(a, randomJSON(r, depth+1))
		}
		return a
	case 4:
		return randomString(r)
	case 5:
		return r.NormFloat64() * 1e6
	case 6:
		return r.Int64() - r.Int64()
	case 7:
		return r.IntN(2) == 0
	}
	return nil
}

func randomString(r *rand.Rand) string {
	const alphabet = `ab"\{}[]:,<>& é` + "\n\t\x01\u2028"
	var s strings.Builder
	for range r.IntN(8) {
		s.WriteString(string([]rune(alphabet)[r.IntN(len([]rune(alphabet)))]))
	}
	return s.String()
}

func TestWriteJSONMatchesEncoder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var deep any = "x"
	for range 70 {
		deep = []any{map[string]any{"k": deep, "e": []any{}, "o": map[string]any{}}}
	}
	values := []any{nil, 1, "s", []any{}, map[string]any{}, deep, struct {
		A []int `json:"a"`
		B string
	}{[]int{1, 2}, `q"\`}}
	for range 3000 {
		values = append(values, randomJSON(r, 0))
	}
	for i, v := range values {
		want := encoderJSON(t, v)
		var got bytes.Buffer
		if err := writeJSON(&got, v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("value %d: writeJSON wrote\n%s\nthe encoder\n%s", i, got.Bytes(), want)
		}
	}
}

func TestWriteJSONError(t *testing.T) {
	if err := writeJSON(&bytes.Buffer{}, map[string]any{"f": func() {}}); err == nil {
		t.Fatal("a value json cannot encode gave no error")
	}
}
