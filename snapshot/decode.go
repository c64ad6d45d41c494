package snapshot

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
)

// DecodeOptions controls DecodeWith.
type DecodeOptions struct {
	// Context cancels decoding when done (checked with Progress).
	Context context.Context
	// Progress, when set, is called about every ProgressEvery input bytes
	// with the bytes decoded so far and the total; returning false cancels
	// decoding with ErrCanceled. In a browser (GOOS=js) the callback is the
	// place to post progress to the page and to yield to the event loop
	// (for example time.Sleep(time.Millisecond) every ~50 ms), so that a
	// long decode does not freeze the page.
	Progress func(done, total int64) bool
	// ProgressEvery is the number of input bytes between Progress calls
	// (default 1 MiB).
	ProgressEvery int64
}

// Decode reads a whole pickled snapshot from r and decodes it. Gzip input
// (snapshot.pickle.gz) is decompressed transparently.
func Decode(r io.Reader) (*Snapshot, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading snapshot: %w", err)
	}
	return DecodeWith(b, DecodeOptions{})
}

// DecodeBytes decodes a pickled snapshot held in memory (b is not
// retained). Gzip input is decompressed transparently.
func DecodeBytes(b []byte) (*Snapshot, error) {
	return DecodeWith(b, DecodeOptions{})
}

// DecodeWith is DecodeBytes with progress reporting and cancellation.
//
// The decoder runs pickle protocols 0-5 but only the opcodes plain data
// needs; it refuses GLOBAL, REDUCE, BUILD, NEWOBJ, INST, OBJ, PERSID, EXT*
// and out-of-band buffers, so a hostile file cannot run code, and bounds
// every declared length by the bytes left. Errors wrap ErrEmpty,
// ErrNotPickle, ErrTruncated, ErrCorrupt, ErrUnsafe, ErrShape or
// ErrCanceled and give the byte offset where it went wrong.
func DecodeWith(b []byte, opt DecodeOptions) (*Snapshot, error) {
	b, err := gunzipIfNeeded(b)
	if err != nil {
		return nil, err
	}
	if err := sniff(b); err != nil {
		return nil, err
	}
	v := newVM(b, true, &opt)
	top, err := v.run()
	if err != nil {
		return nil, err
	}
	s, err := v.finish(top)
	if err != nil {
		return nil, err
	}
	canonicalize(s)
	if opt.Progress != nil && !opt.Progress(int64(len(b)), int64(len(b))) {
		return nil, &DecodeError{Offset: int64(len(b)), Msg: "the progress callback asked to stop", Kind: ErrCanceled}
	}
	return s, nil
}

// gunzipIfNeeded decompresses gzip input (magic 1f 8b).
func gunzipIfNeeded(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, &DecodeError{Offset: -1, Kind: ErrCorrupt, Msg: "the file is gzip-compressed but its header is broken: " + err.Error()}
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, &DecodeError{Offset: -1, Kind: ErrTruncated, Msg: "the file is gzip-compressed and does not decompress: " + err.Error()}
	}
	return out, nil
}

// DecodeValue decodes any pickle of plain data (dict, list, tuple, str,
// bytes, int, float, bool, None) generically, with the same opcode rules
// and limits as DecodeWith. It exists for tests and tools.
func DecodeValue(b []byte) (Value, error) {
	if len(b) == 0 {
		return nil, &DecodeError{Offset: -1, Msg: "nothing to decode", Kind: ErrEmpty}
	}
	v := newVM(b, false, nil)
	top, err := v.run()
	if err != nil {
		return nil, err
	}
	return v.value(top, 0)
}
