package snapshot

import "io"

// readAhead reads its source on a goroutine, a few chunks ahead of the
// decoder: the system calls (and the kernel's copy) of reading a big
// file then run on another core while the VM decodes what came before.
// Decode uses it where Concurrent allows and the input is big.
type readAhead struct {
	full chan []byte // chunks read, in order; closed after the last
	free chan []byte // chunks the reader may fill again
	stop chan struct{}
	// exited is closed when the goroutine is done; err is the read error
	// that ended it (io.EOF at the end), valid once full is closed.
	exited chan struct{}
	err    error
	failed any    // what the source's Read panicked with
	cur    []byte // what is left of the chunk being read
	last   []byte // that chunk, whole, to hand back
}

// Sizes of the read-ahead: chunks and the smallest input read ahead.
const (
	readAheadChunks = 4
	readAheadMin    = 16 << 20
)

// readAheadChunk is the bytes read into a chunk, after readAheadRoom bytes
// of room where the decoder's window (input.fillChunks) puts the bytes it
// has not read yet of the chunk before (variables for tests).
var readAheadChunk, readAheadRoom = 1 << 20, 64 << 10

// newReadAhead starts reading r.
func newReadAhead(r io.Reader) *readAhead {
	ra := &readAhead{full: make(chan []byte, readAheadChunks), free: make(chan []byte, readAheadChunks),
		stop: make(chan struct{}), exited: make(chan struct{})}
	for range readAheadChunks {
		ra.free <- make([]byte, readAheadRoom+readAheadChunk)
	}
	go func() {
		defer close(ra.exited)
		defer close(ra.full)
		defer func() {
			if r := recover(); r != nil {
				ra.failed = r // raised again by Read
			}
		}()
		for {
			var b []byte
			select {
			case b = <-ra.free:
			case <-ra.stop:
				return
			}
			n, err := r.Read(b[readAheadRoom:cap(b)])
			if n > 0 {
				select {
				case ra.full <- b[:readAheadRoom+n]:
				case <-ra.stop:
					return
				}
			} else {
				ra.free <- b
			}
			if err != nil {
				ra.err = err
				return
			}
		}
	}()
	return ra
}

// Read hands over the chunks in order, then the error that ended reading.
func (ra *readAhead) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(ra.cur) == 0 {
		if ra.last != nil {
			ra.free <- ra.last[:cap(ra.last)]
			ra.last = nil
		}
		b, ok := <-ra.full
		if !ok {
			if ra.failed != nil {
				panic(ra.failed)
			}
			if ra.err == nil {
				return 0, io.ErrClosedPipe // read after close
			}
			return 0, ra.err
		}
		ra.cur, ra.last = b[readAheadRoom:], b
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// take hands over what is left of the chunk Read was in, else the next
// chunk, whole: the bytes are chunk[at:], and chunk[:at] (at least
// readAheadRoom bytes) is free room. The caller owns the chunk until it
// hands it back with release. At the end, err is the error that ended
// reading (io.EOF at the end of the input).
func (ra *readAhead) take() (chunk []byte, at int, err error) {
	if len(ra.cur) > 0 {
		chunk, at = ra.last, len(ra.last)-len(ra.cur)
		ra.cur, ra.last = nil, nil
		return chunk, at, nil
	}
	if ra.last != nil {
		ra.free <- ra.last[:cap(ra.last)]
		ra.cur, ra.last = nil, nil
	}
	b, ok := <-ra.full
	if !ok {
		if ra.failed != nil {
			panic(ra.failed)
		}
		if ra.err == nil {
			return nil, 0, io.ErrClosedPipe // read after close
		}
		return nil, 0, ra.err
	}
	return b, readAheadRoom, nil
}

// release hands a chunk from take back to the reader.
func (ra *readAhead) release(chunk []byte) { ra.free <- chunk[:cap(chunk)] }

// close stops the goroutine and waits for it (it may be in the middle of
// one read of the source).
func (ra *readAhead) close() {
	close(ra.stop)
	<-ra.exited
}
