package snapshot

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"time"
)

// Options controls decoding. A nil *Options means the zero value.
type Options struct {
	// Progress, when set, is called about every ProgressEvery input bytes
	// with the bytes read so far and the total (-1 if unknown); returning
	// false cancels decoding with ErrCanceled. In a browser (GOOS=js) the
	// callback is the place to post progress to the page and to yield to
	// the event loop.
	Progress func(done, total int64) bool
	// ProgressEvery is the number of input bytes between Progress calls
	// (default 1 MiB).
	ProgressEvery int64
	// MaxMemory bounds the memory that decoding and analysing the file may
	// take (see ErrTooLarge); 0 means DefaultMemoryLimit of the input size.
	MaxMemory int64
	// Summarize, when set, summarizes every stack as it is added to the
	// table (package analysis passes its own). With Source, it also lets
	// the decoder keep only the summary and the offset of stacks once the
	// held ones pass HoldFrames frame IDs, so that memory stays bounded
	// whatever the number of distinct stacks; their frames are read again
	// from Source when asked for.
	Summarize Summarizer
	// Fold, when set, is the Summarizer in the form the decoder applies as
	// it reads each frame list (no pass of its own over a new stack); it
	// takes the place of Summarize.
	Fold *StackFold
	// Source is the same bytes as the reader Decode reads, readable at any
	// offset (the open file, a browser File). It is used only for
	// uncompressed input and must stay readable while the snapshot is used.
	Source io.ReaderAt
	// Data, when set, is the whole input in memory, the very bytes r (and
	// Source) deliver: a file the caller mapped (the CLI, on Linux). The
	// decoders then take their windows from it instead of reading r, with
	// no copy and no read-ahead; it is never written to, and not used once
	// Decode returns (lazy stacks are read from Source). It is used only
	// when its length is Decode's size and the input is not
	// gzip-compressed; otherwise r is read as without it. A fault reading
	// it (a mapped file cut short meanwhile) is an ErrTruncated error.
	Data []byte
	// DataDone, when set with Data, is called with each stretch [from, to)
	// of Data that a decoder has moved past (about every 4 MiB, and the
	// rest once the decode is done), on the decoding goroutines (two at
	// once in a split decode): the caller may
	// let those bytes go from memory (a mapped file's pages), provided Data
	// still reads the same bytes if they are touched again.
	DataDone func(from, to int64)
	// HoldFrames is the number of frame IDs of held stacks after which new
	// stacks become lazy (0: max(1 Mi, input size / 256), or from 64 Ki on
	// as soon as the stacks held rarely repeat).
	HoldFrames int
	// Split, when set, hands a later stretch of the trace to a second
	// decoder (see Split). nil: Decode splits by itself (a goroutine) where
	// that pays: Concurrent(), Source set, uncompressed, size of SplitAt's
	// threshold or more.
	Split *Split
	// noSplit turns the split Decode does by itself off; splitSeed, when
	// set, is the stack table's hash seed (tests give both decoders of a
	// Split the same); splitInfo, when set, receives what the split did.
	noSplit   bool
	splitSeed *maphash.Seed
	splitInfo *splitInfo
	// noStackCache turns the stack cache off (tests compare both paths).
	noStackCache bool
	// stackCacheHits, when not nil, receives the stack cache's hits.
	stackCacheHits *int
	// recentBits sizes the table of recent lazy stacks (0: the default).
	recentBits int
	// stackWorker adds lazy stacks on a second goroutine (stackPipe) and
	// reads the input ahead on a third (readAhead, for inputs of
	// readAheadMin bytes or more or of unknown size): 0 where there is a
	// second core (the stack goroutine only without Fold), 1 always (any
	// size), -1 never.
	stackWorker int8
}

// Decode reads a pickled snapshot from r as it decodes it, keeping only a
// window of the input (4 MiB, or the largest single string) in memory.
// size is the number of bytes r will deliver (the file size; -1 if
// unknown): progress is reported against it, and it lets the decoder check
// declared lengths early and size its budget. Gzip input
// (snapshot.pickle.gz) is decompressed transparently.
//
// The decoder runs pickle protocols 0-5 but only the opcodes plain data
// needs; it refuses GLOBAL, REDUCE, BUILD, NEWOBJ, INST, OBJ, PERSID, EXT*
// and out-of-band buffers, so a hostile file cannot run code, and bounds
// every declared length, every string and line, and the memory the result
// will take. Errors are *DecodeError values wrapping ErrEmpty,
// ErrNotPickle, ErrTruncated, ErrCorrupt, ErrUnsafe, ErrShape, ErrTooLarge
// or ErrCanceled, with the byte offset where it went wrong.
func Decode(r io.Reader, size int64, opt *Options) (*Snapshot, error) {
	if opt == nil {
		opt = &Options{}
	}
	if whole := opt.Data; size > 0 && int64(len(whole)) == size && !isGzip(whole) {
		return decodeData(opt, size)
	}
	var ra *readAhead
	if (opt.stackWorker > 0 || opt.stackWorker == 0 && Concurrent() && (size < 0 || size >= readAheadMin)) && !splitsAlone(opt, size) {
		// Splitting, the decoder reads for itself: a read-ahead goroutine
		// would take time from the second decoder.
		ra = newReadAhead(r)
		defer ra.close()
		r = ra
	}
	cr := &countReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	head, err := br.Peek(512)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, &DecodeError{Offset: -1, Kind: ErrTruncated, Msg: "reading the file failed: " + err.Error()}
	}
	in := input{src: br, size: size}
	gz := len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b
	if gz {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &DecodeError{Offset: -1, Kind: ErrCorrupt, Msg: "the file is gzip-compressed but its header is broken: " + err.Error()}
		}
		in.src, in.size = &gzipErrReader{zr}, -1
	} else if ra != nil {
		// The decoder takes the read-ahead's chunks as its window, after
		// what the peek buffered.
		b, _ := br.Peek(br.Buffered())
		in.data, in.ra, in.taken = append(make([]byte, 0, len(b)), b...), ra, &cr.n
	}
	var late *readAhead
	defer func() {
		if late != nil {
			late.close()
		}
	}()
	var lateStart func()
	if ra == nil && splitsAlone(opt, size) {
		// Read ahead after all once there is no split (a gzip input, or
		// the second decoder gave up), below the buffered reader.
		lateStart = func() {
			if late == nil {
				late = newReadAhead(cr.r)
				cr.r = late
			}
		}
	}
	return decodeInput(in, gz, lateStart, func() int64 { return cr.n }, opt, size)
}

// decodeInput is Decode once its input is set up: in (gz: gzip-compressed
// behind it); readAhead, if set, starts reading ahead where the split
// decode gives up; rawDone, if set, counts the caller's bytes read (nil:
// the input's offset).
func decodeInput(in input, gz bool, readAhead func(), rawDone func() int64, opt *Options, size int64) (*Snapshot, error) {
	v := newVM(in, true)
	v.readAhead = readAhead
	if gz && readAhead != nil {
		v.readAhead()
	}
	if rawDone == nil {
		rawDone = func() int64 { return v.in.abs() }
	}
	v.configure(opt, rawDone, size)
	v.in.fill(512)
	if err := Sniff(v.in.data); err != nil {
		if v.in.readErr != nil {
			return nil, v.short("")
		}
		return nil, err
	}
	if opt.Source != nil && v.summarize != nil && !gz {
		v.lazyOK, v.lazySrc = true, opt.Source
		v.lazyAfter = opt.HoldFrames
		if v.lazyAfter <= 0 {
			v.lazyAfter = max(1<<20, int(min(size/256, math.MaxInt32)))
			v.lazySoon = min(lazySoonFrames, v.lazyAfter)
		}
		// With a Fold, a new stack costs little more than reading it
		// (lazyFrames): handing it to another goroutine costs more.
		if opt.stackWorker > 0 || opt.stackWorker == 0 && Concurrent() && opt.Fold == nil {
			v.pipe = &stackPipe{t: &v.snap.Stacks, summarize: v.summarize, seenBits: seenBitsFor(size)}
		}
	}
	if err := v.startSplit(opt, size, gz); err != nil {
		return nil, err
	}
	first := append([]byte(nil), v.in.data[:min(len(v.in.data), 512)]...)
	s, err := v.decode(opt)
	if err == nil {
		v.in.finish()
	}
	if err == errSplitRestart {
		// A part was taken and the rest of the file refers to its memo
		// ids: decode again, alone.
		if opt.splitInfo != nil {
			opt.splitInfo.restarted = true
		}
		o := *opt
		o.Split, o.noSplit, o.splitInfo = nil, true, nil
		return Decode(io.NewSectionReader(opt.Source, 0, size), size, &o)
	}
	return s, textHint(err, first)
}

// startSplit sets up the split decode: with opt.Split, or by itself (a
// goroutine running DecodePart) where that pays.
func (v *vm) startSplit(opt *Options, size int64, gz bool) error {
	sp := opt.Split
	if gz || opt.Source == nil || opt.Fold == nil || v.pipe != nil || size <= 0 {
		if sp != nil && opt.splitInfo != nil {
			opt.splitInfo.why = "input not splittable"
		}
		return nil
	}
	if opt.splitInfo != nil {
		opt.splitInfo.t0 = time.Now()
	}
	t := &v.snap.Stacks
	var poll func() bool
	switch {
	case opt.splitSeed != nil:
		t.seed = *opt.splitSeed
		t.seed64 = maphash.Comparable(t.seed, 0)
	case sp != nil && foldedHash:
		t.seed64 = splitSeed64(size, sp.At)
	}
	if sp == nil {
		at := SplitAt(size)
		if opt.noSplit || !Concurrent() || at < 0 {
			return nil
		}
		sp, poll, v.splitCancel, v.splitWait = goSplit(opt.Source, size, at, opt, t.seed)
	}
	if sp.Start == nil || sp.Part == nil || sp.At < 0 {
		return nil
	}
	v.hook = &mainSplit{sp: sp, poll: poll, src: opt.Source, info: opt.splitInfo}
	if poll != nil {
		// Asked early whether the second decoder gave up (a file whose
		// stacks repeat): reading ahead then pays.
		v.setStop(min(sp.At, 4*partPrefix))
	} else {
		v.setStop(sp.At)
	}
	return nil
}

// isGzip reports whether b starts as gzip data does.
func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// DecodeBytes decodes a pickled snapshot held in memory (b is not
// retained; every stack is held). Gzip input is decompressed
// transparently. See Decode for the rules and the errors.
func DecodeBytes(b []byte, opt *Options) (*Snapshot, error) {
	if opt == nil {
		opt = &Options{}
	}
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		// Decompress as the decoder goes rather than all at once.
		o := *opt
		o.Source = nil
		return Decode(bytes.NewReader(b), int64(len(b)), &o)
	}
	if err := Sniff(b); err != nil {
		return nil, err
	}
	v := newVM(input{data: b, size: int64(len(b))}, true)
	v.configure(opt, func() int64 { return v.in.abs() }, int64(len(b)))
	s, err := v.decode(opt)
	return s, textHint(err, b)
}

// DecodeValue decodes any pickle of plain data (dict, list, tuple, str,
// bytes, int, float, bool, None) generically, with the same opcode rules
// and limits as DecodeBytes. It exists for tests and tools.
func DecodeValue(b []byte) (Value, error) {
	if len(b) == 0 {
		return nil, &DecodeError{Offset: -1, Msg: "nothing to decode", Kind: ErrEmpty}
	}
	v := newVM(input{data: b, size: int64(len(b))}, false)
	v.configure(&Options{}, func() int64 { return v.in.abs() }, int64(len(b)))
	top, err := v.run()
	if err != nil {
		return nil, err
	}
	return v.value(top, 0)
}

// configure applies the options: progress, budget and the summarizer.
func (v *vm) configure(opt *Options, done func() int64, total int64) {
	v.in.progress, v.in.every = opt.Progress, opt.ProgressEvery
	if v.in.every <= 0 {
		v.in.every = 1 << 20
	}
	v.in.nextStep, v.in.progAt = v.in.every, v.in.every
	v.in.rawDone, v.in.rawTotal = done, total
	v.budget = budget{limit: opt.MaxMemory, raw: func() (int64, int64) { return done(), total }}
	v.summarize = opt.Summarize
	if opt.Fold != nil {
		v.fold, v.summarize = opt.Fold, opt.Fold.Summarizer()
		v.snap.Stacks.init() // frameItemsFolded hashes with its seed
	}
	v.noStackCache = opt.noStackCache
	v.snap.Stacks.recentBits = opt.recentBits
}

// decode runs the VM to the end and builds the snapshot.
func (v *vm) decode(opt *Options) (*Snapshot, error) {
	if p := v.pipe; p != nil {
		defer p.abandon() // also when the VM panics
	}
	if v.splitCancel != nil {
		// The second decoder is done when this one is, also when it
		// fails or panics: it must not read Options.Data (a mapping the
		// caller lets go) or Source after Decode returned.
		defer func() {
			v.splitCancel()
			v.splitWait()
		}()
	}
	top, err := v.run()
	if v.pipe != nil {
		v.pipe.stop(v.snap.Frames)
		v.pipe = nil
	}
	if opt.stackCacheHits != nil {
		*opt.stackCacheHits = v.cacheHits
	}
	if err != nil {
		return nil, err
	}
	s, err := v.finish(top)
	if err != nil {
		return nil, err
	}
	var src *stackSource
	if s.Stacks.lazyFrom != 0 {
		src = v.source(opt)
	}
	// The memo and the containers are done with: let the merge of lazy
	// stacks reuse their memory (8 bytes per entry on a file of distinct
	// stacks).
	v.memo, v.memoWide, v.memoFar, v.objs, v.freeObjs, v.gens = memoTable{}, nil, nil, nil, nil, nil
	v.builders, v.stackCache, v.stack, v.scratch, v.frameMemo = nil, nil, nil, nil, nil
	if rep, from := s.Stacks.dedupeLazy(); rep != nil {
		s.remapStacks(v.rows, rep, from)
	}
	if v.summarize != nil {
		s.Stacks.summarized = true
	}
	s.Stacks.init()
	s.Stacks.done()
	s.Stacks.src = src
	if opt.Progress != nil && !opt.Progress(v.in.rawDone(), v.in.rawTotal) {
		return nil, &DecodeError{Offset: v.in.abs(), Msg: "the progress callback asked to stop", Kind: ErrCanceled}
	}
	return s, nil
}

// source keeps what reading a lazy stack again needs: the frames in the
// memo (a lazy list only refers to frames decoded before it), as the
// objects and memo entries a stack's decoder starts with, and the input.
func (v *vm) source(opt *Options) *stackSource {
	src := &stackSource{r: opt.Source, seed: map[int64]val{}, frames: v.snap.Frames, summarize: v.summarize}
	add := func(id int64, x val) {
		if x.k == kObj && v.objs[x.n].kind == oFrame {
			src.objs = append(src.objs, obj{kind: oFrame, idx: v.objs[x.n].idx, memo: shared})
			src.seed[id] = val{k: kObj, n: int64(len(src.objs) - 1)}
		}
	}
	// (A part's memo ids are unset here; the slots in runs hold no frame.)
	lo, hi := v.memo.len(), v.memo.len()
	if v.holeHi > v.holeLo {
		lo, hi = int(v.holeLo), int(v.holeHi)
	}
	each := func(id int, u uint32) {
		x := unpack(u)
		if x.k == kWide {
			x = v.memoWide[int64(id)]
		}
		add(int64(id), x)
	}
	v.memo.each(0, lo, each)
	v.memo.each(hi, v.memo.len(), each)
	for id, x := range v.memoFar {
		add(id, x)
	}
	return src
}

// decodeStack decodes the frame list encoded in b (found at byte off). Its
// VM starts with the frames' objects (a copy: a VM writes to its objects)
// and finds them through memoSeed, which it only reads.
func (src *stackSource) decodeStack(b []byte, off int64) (Stack, error) {
	v := newVM(input{data: b, size: int64(len(b)), base: off, every: math.MaxInt64 / 2, nextStep: math.MaxInt64 / 2}, true)
	v.partial = true
	v.budget.limit = math.MaxInt64
	v.snap.Frames = src.frames
	v.objs = append(make([]obj, 0, len(src.objs)+16), src.objs...)
	v.memoSeed = src.seed
	top, err := v.run()
	if err != nil {
		return nil, err
	}
	if top.k == kObj && v.objs[top.n].kind == oFramesB {
		return v.builders[v.objs[top.n].idx].ids, nil
	}
	return nil, &DecodeError{Offset: off, Kind: ErrCorrupt, Msg: "the bytes there are not a frame list"}
}

// remapStacks replaces every stack ID from `from` on, in the trace
// entries (store e) and the segments, blocks and block histories, by
// rep[id-from] (see Stacks.dedupeLazy).
func (s *Snapshot) remapStacks(e *entryStore, rep []StackID, from StackID) {
	f := func(id StackID) StackID {
		if id >= from {
			return rep[id-from]
		}
		return id
	}
	for _, p := range e.stack.pages {
		for i, id := range p {
			if id >= from {
				p[i] = rep[id-from]
			}
		}
	}
	s.MapSegmentStacks(f)
}

// MapSegmentStacks replaces the stack ID of every segment, block and
// block history entry, device and host segments alike, by f(id).
func (s *Snapshot) MapSegmentStacks(f func(StackID) StackID) {
	for _, segs := range [][]Segment{s.Segments, s.HostSegments} {
		for i := range segs {
			sg := &segs[i]
			sg.Frames = f(sg.Frames)
			for j := range sg.Blocks {
				b := &sg.Blocks[j]
				b.Frames = f(b.Frames)
				for k := range b.History {
					b.History[k].Frames = f(b.History[k].Frames)
				}
			}
		}
	}
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

// splitsAlone reports whether Decode will split by itself (a goroutine
// running DecodePart) given these options and size (gzip aside).
func splitsAlone(opt *Options, size int64) bool {
	return opt.Split == nil && !opt.noSplit && opt.Source != nil && opt.Fold != nil && Concurrent() && SplitAt(size) >= 0
}
