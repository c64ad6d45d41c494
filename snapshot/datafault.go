package snapshot

import (
	"runtime/debug"
	"unsafe"
)

// decodeData is Decode from the whole input in memory (Options.Data). A
// mapped file that shrinks while it is decoded faults where its pages are
// gone: that fault is an ErrTruncated error here, as a read would have
// reported, not a crash; any other panic goes on.
func decodeData(opt *Options, size int64) (s *Snapshot, err error) {
	defer catchDataFault(opt.Data, &err)()
	return decodeInput(wholeInput(opt.Data, opt.DataDone), false, nil, nil, opt, size)
}

// catchDataFault makes memory faults of the calling goroutine panics
// (debug.SetPanicOnFault) and returns what to defer: it restores that and
// turns a panic at an address within data into *err, an ErrTruncated
// error. Use it as defer catchDataFault(data, &err)().
func catchDataFault(data []byte, err *error) func() {
	was := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(was)
		r := recover()
		if r == nil {
			return
		}
		f, ok := r.(interface{ Addr() uintptr })
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
		if !ok || f.Addr() < lo || f.Addr()-lo >= uintptr(len(data)) {
			panic(r)
		}
		*err = &DecodeError{Offset: int64(f.Addr() - lo), Kind: ErrTruncated,
			Msg: "the file changed while it was read (it is shorter now?)"}
	}
}
