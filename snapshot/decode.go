package snapshot

import (
	"bufio"
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

// Decode reads a pickled snapshot from r as it decodes it (the file is
// never held in memory whole). Gzip input (snapshot.pickle.gz) is
// decompressed transparently.
func Decode(r io.Reader) (*Snapshot, error) {
	return DecodeReader(r, -1, DecodeOptions{})
}

// DecodeReader is Decode with progress and cancellation. size is the
// number of bytes r will deliver (the file size; -1 if unknown): Progress
// reports bytes read from r against it, and it lets the decoder size its
// tables and check declared lengths early. Streaming keeps only a window
// of the input (4 MiB, or the largest single string) in memory, which
// matters for 1 GB files in a browser.
func DecodeReader(r io.Reader, size int64, opt DecodeOptions) (*Snapshot, error) {
	cr := &countReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	head, err := br.Peek(512)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, &DecodeError{Offset: -1, Kind: ErrTruncated, Msg: "reading the file failed: " + err.Error()}
	}
	var src io.Reader = br
	exact := size
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &DecodeError{Offset: -1, Kind: ErrCorrupt, Msg: "the file is gzip-compressed but its header is broken: " + err.Error()}
		}
		src, exact = &gzipErrReader{zr}, -1
	}
	v := newStreamVM(src, exact, true, &opt)
	v.rawDone, v.rawTotal = func() int64 { return cr.n }, size
	v.fill(512)
	if err := sniff(v.data); err != nil {
		if v.readErr != nil {
			return nil, v.short("")
		}
		return nil, err
	}
	return v.decode(&opt, func() int64 { return cr.n })
}

// decode runs the VM to the end and builds the snapshot.
func (v *vm) decode(opt *DecodeOptions, done func() int64) (*Snapshot, error) {
	top, err := v.run()
	if err != nil {
		return nil, err
	}
	s, err := v.finish(top)
	if err != nil {
		return nil, err
	}
	canonicalize(s)
	if opt.Progress != nil && !opt.Progress(done(), v.rawTotal) {
		return nil, &DecodeError{Offset: v.abs(), Msg: "the progress callback asked to stop", Kind: ErrCanceled}
	}
	return s, nil
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// gzipErrReader marks decompression errors as such.
type gzipErrReader struct{ zr *gzip.Reader }

func (g *gzipErrReader) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("the file is gzip-compressed and does not decompress: %w", err)
	}
	return n, err
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
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		// Decompress as the decoder goes rather than all at once.
		return DecodeReader(bytes.NewReader(b), int64(len(b)), opt)
	}
	if err := sniff(b); err != nil {
		return nil, err
	}
	v := newVM(b, true, &opt)
	return v.decode(&opt, func() int64 { return int64(len(b)) })
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
