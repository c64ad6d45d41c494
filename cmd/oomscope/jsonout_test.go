package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
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
	}{[]int{1, 2}, `q"\`}, `\`, `\\`, `"`, `\"`, `\\"`, `a\\\"b"`, []string{`\`, `\"`, `x\\`}}
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

// benchJSONDoc is a document shaped as a report's biggest parts (steps,
// phase peaks and spans: many small objects of numbers and short
// strings), about 10 MB compact.
func benchJSONDoc() any {
	type phase struct {
		Step      int    `json:"step"`
		Phase     string `json:"phase"`
		First     int    `json:"first_entry"`
		Last      int    `json:"last_entry"`
		PeakBytes int64  `json:"peak_allocated_bytes"`
		Partial   bool   `json:"partial"`
		Stack     string `json:"stack,omitempty"`
	}
	var doc struct {
		File   string  `json:"file"`
		Phases []phase `json:"phase_spans"`
	}
	doc.File = `C:\runs\"rank 0".pickle`
	for i := range 100_000 {
		p := phase{Step: i / 2, Phase: []string{"forward", "backward", "optimizer"}[i%3], First: i * 7, Last: i*7 + 6, PeakBytes: 6745493504 - int64(i)*4096, Partial: i%5 == 0}
		if i%100 == 0 {
			p.Stack = `model.py:12 forward <"x\y">`
		}
		doc.Phases = append(doc.Phases, p)
	}
	return doc
}

func BenchmarkWriteJSON(b *testing.B) {
	doc := benchJSONDoc()
	compact, err := json.Marshal(doc)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("indent", func(b *testing.B) {
		b.SetBytes(int64(len(compact)))
		for b.Loop() {
			in := newIndenter(io.Discard)
			in.Write(compact)
			in.flush()
		}
	})
	b.Run("all", func(b *testing.B) {
		b.SetBytes(int64(len(compact)))
		for b.Loop() {
			if err := writeJSON(io.Discard, doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteJSONWriterError(t *testing.T) {
	for _, big := range []bool{false, true} {
		var v any = map[string]int{"a": 1}
		if big {
			v = benchJSONDoc()
		}
		if err := writeJSON(failWriter{}, v); err == nil || err.Error() != "disk full" {
			t.Errorf("big %v: writeJSON to a failing writer = %v, want disk full", big, err)
		}
	}
}
