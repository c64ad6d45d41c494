package snapshot

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// oddReader delivers its data in pieces of random sizes (sometimes none),
// the last with err, or err alone after it.
type oddReader struct {
	data []byte
	err  error
	r    *rand.Rand
}

func (o *oddReader) Read(p []byte) (int, error) {
	n := min(len(o.data), len(p), o.r.IntN(3*readAheadChunk/2))
	copy(p, o.data[:n])
	o.data = o.data[n:]
	if len(o.data) == 0 && o.r.IntN(2) == 0 {
		return n, o.err
	}
	return n, nil
}

// TestReadAhead reads inputs of 0 to a few chunks through readAhead, in
// reads of random sizes: the bytes must be the input's, in order, and the
// last read the source's error.
func TestReadAhead(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	errBroken := errors.New("broken")
	for _, size := range []int{0, 1, 4095, readAheadChunk, readAheadChunk + 1, 5*readAheadChunk + 17} {
		for _, end := range []error{io.EOF, errBroken} {
			data := make([]byte, size)
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			ra := newReadAhead(&oddReader{data: data, err: end, r: rand.New(rand.NewPCG(uint64(size), 5))})
			var got []byte
			var err error
			for err == nil {
				p := make([]byte, r.IntN(3*readAheadChunk))
				var n int
				n, err = ra.Read(p)
				got = append(got, p[:n]...)
			}
			ra.close()
			if !bytes.Equal(got, data) || err != end {
				t.Fatalf("size %d, ending with %v: read %d bytes (equal: %v), then %v", size, end, len(got), bytes.Equal(got, data), err)
			}
		}
	}
	// Closing before the end stops the goroutine.
	ra := newReadAhead(&oddReader{data: make([]byte, 20*readAheadChunk), err: io.EOF, r: rand.New(rand.NewPCG(6, 7))})
	if n, err := ra.Read(make([]byte, 10)); n != 10 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	ra.close()
}
