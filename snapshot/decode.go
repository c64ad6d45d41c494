package snapshot

import (
	"bytes"
	"io"
)

// Decode reads a whole pickled snapshot from r and decodes it.
func Decode(r io.Reader) (*Snapshot, error) {
	return DecodeReference(r)
}

// DecodeBytes decodes a pickled snapshot held in memory.
func DecodeBytes(b []byte) (*Snapshot, error) {
	return DecodeReference(bytes.NewReader(b))
}
