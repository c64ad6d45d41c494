package load

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"

	"oomscope/snapshot"
)

// The browser decodes a large file in two workers (issue #9): the
// analysis worker decodes the file from its start with Options.Split and,
// at the split point, takes the rest of the trace decoded meanwhile by a
// part worker, which runs LoadPart on the same File. The two talk with a
// part request (RequestPart) answered by start, progress and part
// messages (messages.go).

// LoadPart decodes, for a second decoder, the stretch of in's trace from
// its first entry at or after at to the end of that trace
// (snapshot.DecodePart) with the snapshot.Options Load uses for the same
// opt, calls started with the stretch's first byte as soon as it is known,
// and returns the stretch marshalled (snapshot.Part.MarshalBinary) and the
// input bytes it covers. in.Source is read (in.R is not); opt.Progress is
// called while decoding (StageDecode, bytes of the file read so far), and
// opt.Analysis and opt.Summary are not used. Errors name the file; a bug of
// ours is an *InternalError.
func LoadPart(in Input, at int64, opt Options, started func(start int64)) (b []byte, covered int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, covered, err = nil, 0, &InternalError{Offset: at, Stage: StageDecode, Value: r, Stack: string(debug.Stack())}
		}
	}()
	if in.Source == nil || in.Size <= 0 {
		return nil, 0, fmt.Errorf("%s: a part needs a file of known size readable at any offset", in.Name)
	}
	if at <= 0 || at >= in.Size {
		return nil, 0, fmt.Errorf("%s: a part at byte %d of %d", in.Name, at, in.Size)
	}
	if started == nil {
		started = func(int64) {}
	}
	dopt := decodeOptions(in, opt, func(done, total int64) {
		if opt.Progress != nil {
			opt.Progress(StageDecode, done, total)
		}
	})
	p, err := snapshot.DecodePart(in.Source, in.Size, at, dopt, started)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: the part from byte %d: %w", in.Name, at, err)
	}
	if p == nil {
		return nil, 0, errors.New(in.Name + ": the part decoder returned nothing")
	}
	if in.Size > 64<<20 {
		// As Load: the decoder's tables are garbage now, and the
		// marshalled part (about 40 % of the input decoded) can reuse
		// their memory (a browser worker never gives memory back).
		runtime.GC()
	}
	b, err = p.MarshalBinary()
	if err != nil {
		return nil, 0, fmt.Errorf("%s: encoding the part: %w", in.Name, err)
	}
	return b, p.Bytes(), nil
}
