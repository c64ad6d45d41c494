package snapshot

import (
	"errors"
	"io"
)

// Split lets Decode hand a later stretch of the trace to a second decoder
// (DecodePart, run elsewhere: a goroutine, another browser worker) and take
// its result when it reaches that stretch.
type Split struct {
	// At is where the part should start: its first trace entry at or after At.
	At int64
	// Start returns the part's first byte once the second decoder knows it
	// (it waits); an error means: decode on alone.
	Start func() (int64, error)
	// Part returns the decoded part (it waits); an error or a part that does
	// not verify means: decode on alone. The result is the same either way.
	Part func() (*Part, error)
}

// SplitAt returns where a second decoder should start on a file of size
// bytes (-1: too small to be worth it).
func SplitAt(size int64) int64 {
	if size < splitMin {
		return -1
	}
	return size / 2
}

// splitMin is the smallest input that Decode splits by itself.
const splitMin = 48 << 20

// errSplitTODO is returned by DecodePart until it is implemented.
var errSplitTODO = errors.New("snapshot: DecodePart is not implemented yet")

// DecodePart decodes, from src (size bytes), the trace entries from the first
// one at or after at to the end of that trace list, after decoding the file's
// first bytes for what the entries refer to. started is called with the part's
// first byte as soon as it is known. opt must be the Options the main decoder
// uses (Fold, MaxMemory; Progress may cancel).
func DecodePart(src io.ReaderAt, size, at int64, opt *Options, started func(start int64)) (*Part, error) {
	return nil, errSplitTODO
}

// Part is a decoded stretch of a trace. Its fields are unexported.
type Part struct {
	start, end int64
}

// MarshalBinary encodes the part (for postMessage between workers).
func (p *Part) MarshalBinary() ([]byte, error) {
	return nil, errSplitTODO
}

// UnmarshalBinary decodes what MarshalBinary encoded; a corrupt or foreign
// blob is an error, never a panic.
func (p *Part) UnmarshalBinary(b []byte) error {
	return errSplitTODO
}

// Bytes returns the number of input bytes the part covers.
func (p *Part) Bytes() int64 {
	if p == nil {
		return 0
	}
	return p.end - p.start
}
