package snapshot

import (
	"bytes"
	"hash/maphash"
	"slices"
	"time"
)

// WithoutStackCache returns a copy of opt (nil: the defaults) that decodes
// without the stack cache, the path every frame list took before it.
func WithoutStackCache(opt *Options) *Options {
	o := Options{}
	if opt != nil {
		o = *opt
	}
	o.noStackCache = true
	return &o
}

// CountStackCacheHits returns a copy of opt (nil: the defaults) that
// stores the number of frame lists the stack cache found in *hits.
func CountStackCacheHits(opt *Options, hits *int) *Options {
	o := Options{}
	if opt != nil {
		o = *opt
	}
	o.stackCacheHits = hits
	return &o
}

// WithRecentLazyStacks returns a copy of opt whose table of recent lazy
// stacks has 2^bits slots, so that repeated lazy stacks are merged after
// reading (Stacks.dedupeLazy) rather than as they are met.
func WithRecentLazyStacks(opt *Options, bits int) *Options {
	o := *opt
	o.recentBits = bits
	return &o
}

// IndexAppends is indexAppends, for its test.
var IndexAppends = indexAppends

// SetDedupeFragBits sets how many bits of a hash's fragment the merge of
// lazy stacks compares in a bucket, and returns a function that restores
// it.
func SetDedupeFragBits(n int) (restore func()) {
	old := dedupeFragMask
	dedupeFragMask = 1<<n - 1
	return func() { dedupeFragMask = old }
}

// WithStackWorker returns a copy of opt that adds lazy stacks on a second
// goroutine (on) or in the decoder's own (off), whatever the cores.
func WithStackWorker(opt *Options, on bool) *Options {
	o := *opt
	o.stackWorker = -1
	if on {
		o.stackWorker = 1
	}
	return &o
}

// SetStackBatch sets how many lazy stacks the decoder hands its stack
// goroutine at a time, and returns a function that restores it.
func SetStackBatch(n int) (restore func()) {
	old := stackBatchStacks
	stackBatchStacks = n
	return func() { stackBatchStacks = old }
}

// SetSeenBits makes the bitsets of seen stack hashes (kept by the stack
// goroutine for the merge) 2^bits slots whatever the input's size, and
// returns a function that restores their sizing.
func SetSeenBits(bits int) (restore func()) {
	old := seenBitsFor
	seenBitsFor = func(int64) int { return bits }
	return func() { seenBitsFor = old }
}

// SetSeenParts makes the merge of lazy stacks after the stack goroutine
// split the stacks into n parts (n goroutines) whatever their number and
// the cores, and returns a function that restores the choice.
func SetSeenParts(n int) (restore func()) {
	old := seenParts
	seenParts = n
	return func() { seenParts = old }
}

// SetReadAheadChunk makes the read-ahead's chunks chunk bytes after room
// bytes of room, and returns a function that restores them.
func SetReadAheadChunk(chunk, room int) (restore func()) {
	oc, or := readAheadChunk, readAheadRoom
	readAheadChunk, readAheadRoom = chunk, room
	return func() { readAheadChunk, readAheadRoom = oc, or }
}

// SetLazySoon sets where, with the default HoldFrames, the held stacks are
// first checked for repeats, and returns a function that restores it.
func SetLazySoon(frames int) (restore func()) {
	old := lazySoonFrames
	lazySoonFrames = frames
	return func() { lazySoonFrames = old }
}

// SplitResult says what a split decode did.
type SplitResult struct {
	Taken, Restarted bool
	Why              string
	PartErr          error
	Start            int64
}

// WithoutSplit turns off the split Decode does by itself.
func WithoutSplit(opt *Options) *Options {
	o := *opt
	o.noSplit = true
	return &o
}

// WithSplitAt decodes the part at `at` of data first (DecodePart, on the
// same stack hash seed: opt's if it has one, see WithSharedSeed) and returns options whose Split hands it over, and
// where the split's outcome is written. mangle, when set, may change the
// part or the Split (tests of lying and failing splits).
func WithSplitAt(opt *Options, data []byte, at int64, mangle func(*Split, *Part, error) (*Part, error)) (*Options, *SplitResult) {
	o := *opt
	if o.splitSeed == nil {
		seed := maphash.MakeSeed()
		o.splitSeed = &seed
	}
	res := &SplitResult{}
	o.splitInfo = &splitInfo{}
	start := int64(-1)
	part, err := DecodePart(bytes.NewReader(data), int64(len(data)), at, &o, func(s int64) { start = s })
	res.PartErr, res.Start = err, start
	sp := &Split{At: at,
		Start: func() (int64, error) {
			if start < 0 {
				return 0, err
			}
			return start, nil
		},
		Part: func() (*Part, error) { return part, err }}
	if mangle != nil {
		part, err = mangle(sp, part, err)
	}
	o.Split = sp
	return &o, res
}

// SplitOutcome copies what the split of opt (WithSplitAt) did into res.
func SplitOutcome(opt *Options, res *SplitResult) {
	res.Taken, res.Restarted, res.Why = opt.splitInfo.taken, opt.splitInfo.restarted, opt.splitInfo.why
}

// PartStart returns where a part starts; SetPartStart changes it.
func PartStart(p *Part) int64       { return p.start }
func SetPartStart(p *Part, s int64) { p.start = s }
func PartEnd(p *Part) int64         { return p.end }

// PageSize is the number of values in a column's page.
const PageSize = pageSize

// SetPartPrefix sets how far a part decodes the file's first bytes.
func SetPartPrefix(n int64) (restore func()) {
	old := partPrefix
	partPrefix = n
	return func() { partPrefix = old }
}

// WithSplitInfo returns opt with a place for what the split did.
func WithSplitInfo(opt *Options) (*Options, *splitInfo) {
	o := *opt
	o.splitInfo = &splitInfo{}
	return &o, o.splitInfo
}

// SkipPartChecksum lets UnmarshalBinary take a blob whatever its checksum.
func SkipPartChecksum() (restore func()) {
	checkWireSum = false
	return func() { checkWireSum = true }
}

// SameStackTables reports whether a and b hold the same stacks in the same
// places: a lazy stack at the same byte range, a held one with the same
// frames (with the same frame table, the same stacks whatever the source
// reads).
func SameStackTables(a, b *Stacks) bool {
	if a.count != b.count {
		return false
	}
	for id := range a.count {
		x, y := a.at.at(id), b.at.at(id)
		if x&lazyFlag != 0 || y&lazyFlag != 0 {
			if x != y {
				return false
			}
			continue
		}
		if !slices.Equal(a.MustFrames(StackID(id)), b.MustFrames(StackID(id))) {
			return false
		}
	}
	return true
}

// SplitTaken reports whether the split of WithSplitInfo's info was taken.
func SplitTaken(i *splitInfo) bool { return i.taken }

// WithSharedSeed returns a copy of opt with a stack hash seed of its own:
// Decode and DecodePart given copies of it hash stacks alike (in
// WebAssembly they do anyway).
func WithSharedSeed(opt *Options) *Options {
	o := *opt
	seed := maphash.MakeSeed()
	o.splitSeed = &seed
	return &o
}

// SetDedupeTwoMin sets from how many stacks the merge of lazy stacks runs
// on two goroutines.
func SetDedupeTwoMin(n int) (restore func()) {
	old := dedupeTwoMin
	dedupeTwoMin = n
	return func() { dedupeTwoMin = old }
}

// SetSplitMin sets the smallest input Decode splits by itself.
func SetSplitMin(n int64) (restore func()) {
	old := splitMin
	splitMin = n
	return func() { splitMin = old }
}

// SetStreamWindow sets how much of a streamed input is read at a time
// (and how far a whole input's window reaches, Options.Data).
func SetStreamWindow(n int) (restore func()) {
	old := streamWindow
	streamWindow = n
	return func() { streamWindow = old }
}

// SetWireChunk sets how many values of a part's column UnmarshalFrom and
// takePart read at a time, and how many bytes of the rest they read ahead.
func SetWireChunk(values, window int) (restore func()) {
	oc, ow := wireChunk, wireWindow
	wireChunk, wireWindow = values, window
	return func() { wireChunk, wireWindow = oc, ow }
}

// SplitMergeTime returns how long the main decoder took to take its part
// (takePart).
func SplitMergeTime(info *splitInfo) time.Duration { return time.Duration(info.merged - info.gotPart) }
