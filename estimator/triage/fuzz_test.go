package triage

import (
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"strings"
	"testing"

	"oomscope/untrusted/hostile"
)

// checkInvariants verifies what must hold for any input: spans inside the
// input and in order, texts and phrases equal to the input at their spans,
// JSON that encodes.
func checkInvariants(t *testing.T, text string, res Result) {
	t.Helper()
	prevEnd := 0
	for i, f := range res.Findings {
		if f.Start < prevEnd || f.Start > f.End || f.End > len(text) {
			t.Fatalf("finding %d span [%d,%d) out of order or bounds (prev end %d, len %d)", i, f.Start, f.End, prevEnd, len(text))
		}
		prevEnd = f.End
		if text[f.Start:f.End] != f.Text {
			t.Fatalf("finding %d text differs from input span", i)
		}
		for _, fd := range f.Fields {
			if fd.Start < 0 || fd.End > len(text) || fd.Start > fd.End || text[fd.Start:fd.End] != fd.Phrase {
				t.Fatalf("finding %d field %s span [%d,%d) does not hold its phrase", i, fd.Key, fd.Start, fd.End)
			}
		}
		if f.Cause == "" || f.Why == "" || f.Rule == "" || len(f.Fixes) == 0 {
			t.Fatalf("finding %d (%s) lacks cause, why, rule or fixes", i, f.Kind)
		}
		if b, ok := CardBar(&f); ok {
			checkBar(t, b)
		}
		for _, n := range f.Evidence {
			if n.Bytes == math.MinInt64 {
				t.Fatalf("finding %d evidence %s wrapped to %d", i, n.Name, n.Bytes)
			}
		}
	}
	if len(res.Findings) > maxFindings {
		t.Fatalf("%d findings, cap is %d", len(res.Findings), maxFindings)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Fatalf("JSON: %v", err)
	}
}

func FuzzTriage(f *testing.F) {
	for _, tc := range formatCases {
		f.Add(tc.text)
	}
	for _, path := range []string{examplesPath, realPath} {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			var ex example
			if json.Unmarshal([]byte(line), &ex) == nil {
				f.Add(ex.Text)
			}
		}
	}
	for _, p := range hostile.Pastes(4096) {
		f.Add(p.Text)
	}
	f.Add("CUDA out of memory. Tried to allocate 99999999999999999999999999999999999.99 GiB. GPU 0")
	f.Add("Tried to allocate 1.00 GiB Tried to allocate 2.00 GiB (GPU 0; 1 bytes total capacity;")
	f.Fuzz(func(t *testing.T, text string) {
		checkInvariants(t, text, Triage(text, Options{When: WhenLongInputs}))
	})
}

// junk returns n bytes of pseudo-random text mixed with fragments of OOM
// wording, the worst case for the keyword windows.
func junk(n int, seed int64) string {
	r := rand.New(rand.NewSource(seed))
	words := []string{"CUDA", "out", "of", "memory", "Tried", "to", "allocate", "1.00", "GiB", "GPU", "0", "(", ";", "free",
		"reserved", "cached)", "Process", "has", "NCCL", "WARN", "MPS", "backend", "\n", "> ", "[rank1]: ", "OOM", "when", "allocating"}
	var b strings.Builder
	for b.Len() < n {
		if r.Intn(4) == 0 {
			b.WriteByte(byte(r.Intn(256)))
		} else {
			b.WriteString(words[r.Intn(len(words))])
			b.WriteByte(' ')
		}
	}
	return b.String()[:n]
}

func TestJunkTerminates(t *testing.T) {
	text := junk(1<<20, 1)
	checkInvariants(t, text, Triage(text, Options{}))
	// A 10 MB log of one repeated message hits the findings cap.
	msg := "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity; 3.40 GiB already allocated; 4.00 MiB free; 3.45 GiB reserved in total by PyTorch)\n"
	big := strings.Repeat(msg, 1000)
	res := Triage(big, Options{})
	if len(res.Findings) != maxFindings || !res.Truncated {
		t.Errorf("1000 messages: got %d findings, truncated=%v; want %d, true", len(res.Findings), res.Truncated, maxFindings)
	}
}

func benchmarkTriage(b *testing.B, text string) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Triage(text, Options{})
	}
}

// BenchmarkJunk10MB: 10 MB of random text full of OOM words must finish
// quickly (linear time).
func BenchmarkJunk10MB(b *testing.B) { benchmarkTriage(b, junk(10<<20, 2)) }

// BenchmarkRandomBytes10MB: 10 MB of random bytes with no OOM wording.
func BenchmarkRandomBytes10MB(b *testing.B) {
	r := rand.New(rand.NewSource(3))
	buf := make([]byte, 10<<20)
	r.Read(buf)
	benchmarkTriage(b, string(buf))
}

// BenchmarkLog10MB: a 10 MB training log with one OOM at the end.
func BenchmarkLog10MB(b *testing.B) {
	line := "step 1234 | loss 2.3456 | lr 1.0e-4 | mem allocated 12.3 GiB | reserved memory 14.0 GiB | tokens/s 12345\n"
	text := strings.Repeat(line, (10<<20)/len(line)) + formatCases[0].text
	benchmarkTriage(b, text)
}

// BenchmarkMessage: one typical 2.x message.
func BenchmarkMessage(b *testing.B) { benchmarkTriage(b, formatCases[1].text) }
