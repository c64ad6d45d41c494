package snapshot

import "runtime"

// stackPipe adds lazy stacks to the table on a second goroutine while the
// VM reads on: hashing and summarizing a new lazy stack (a third of the
// decoder's time on a file of distinct stacks) runs on another core. The
// VM numbers each lazy stack itself (the next ID) and hands its frames and
// place over in batches; the goroutine hashes, summarizes and pushes them
// in order, exactly as Stacks.intern would but without the table of recent
// lazy stacks: a stack met again gets a new ID, and dedupeLazy merges it
// into the first once the file is read, which gives every stack the ID
// that merging as met gives (TestStackWorker compares both).
//
// While batches are out, the goroutine owns the table: the VM touches it
// only after sync, which waits for them (a held stack, a stack the cache
// knows, a list materialized). It runs only where a second core exists
// (not in WebAssembly, not with GOMAXPROCS 1) and the Summarizer is not a
// StackFold (Options.Fold: a new stack then costs little more than reading
// it, less than handing it over); elsewhere the decoder takes the
// sequential path.
type stackPipe struct {
	t         *Stacks
	summarize Summarizer
	// active is set while the VM numbers stacks (next) and the table may
	// be behind.
	active bool
	next   StackID
	cur    *stackBatch
	spare  []*stackBatch
	made   int
	// out counts the batches sent and not yet back.
	out        int
	work, back chan *stackBatch
	// failed is what the goroutine panicked with (read after a batch
	// comes back).
	failed any
	// seenBits sizes the table's bitsets of seen hashes (Stacks.seen).
	seenBits int
}

// stackBatch is lazy stacks handed to the goroutine: their frames one
// after another (ends[k] ends stack k) and their places; frames is the
// frame table when it was sent (the stacks refer only to frames before).
type stackBatch struct {
	frames []Frame
	ids    []FrameID
	ends   []int32
	at     []uint64
}

// Sizes of the pipe: stacks per batch (tests make it small) and batches
// at most.
var stackBatchStacks = 4096

const stackBatches = 8

// Concurrent reports whether decoding and analysis may run work on other
// goroutines by default: there is a second core and it is not WebAssembly
// (whose Go runtime is single-threaded: there goroutines only add cost).
func Concurrent() bool { return runtime.GOARCH != "wasm" && runtime.GOMAXPROCS(0) > 1 }

// run adds the stacks of each batch, as Stacks.intern adds a new lazy
// stack.
func (p *stackPipe) run() {
	for b := range p.work {
		if p.failed == nil {
			p.addBatch(b)
		}
		p.back <- b
	}
}

// addBatch adds the stacks of batch b. A panic (a bug) is kept in failed
// for sync to raise again on the VM's goroutine, where the caller's
// recover sees it; later batches are handed back untouched.
func (p *stackPipe) addBatch(b *stackBatch) {
	defer func() {
		if r := recover(); r != nil {
			p.failed = r
		}
	}()
	t := p.t
	start := int32(0)
	for k, end := range b.ends {
		st := Stack(b.ids[start:end])
		start = end
		id := StackID(t.count)
		t.push(b.at[k], t.sumIndex(p.summarize(b.frames, st)), t.hash(st))
		if t.lazyFrom == 0 {
			t.lazyFrom = id
		}
	}
	// Mark the hashes of these stacks and of the held ones the VM added
	// since, for dedupeSeen.
	if t.seen == nil {
		t.initSeen(p.seenBits)
	}
	t.markUpTo(t.count)
}

// add numbers the lazy stack st at place at and queues it. frames is the
// frame table.
func (p *stackPipe) add(frames []Frame, st Stack, at uint64) StackID {
	if p.work == nil {
		p.work, p.back = make(chan *stackBatch, stackBatches), make(chan *stackBatch, stackBatches)
		go p.run()
	}
	if !p.active {
		p.t.init()
		p.next, p.active = StackID(p.t.count), true
	}
	b := p.cur
	if b == nil {
		switch {
		case len(p.spare) > 0:
			b = p.spare[len(p.spare)-1]
			p.spare = p.spare[:len(p.spare)-1]
		case p.made < stackBatches:
			b = &stackBatch{}
			p.made++
		default:
			b = <-p.back
			p.out--
		}
		b.ids, b.ends, b.at = b.ids[:0], b.ends[:0], b.at[:0]
		p.cur = b
	}
	b.ids = append(b.ids, st...)
	b.ends = append(b.ends, int32(len(b.ids)))
	b.at = append(b.at, at)
	id := p.next
	p.next++
	if len(b.ends) >= stackBatchStacks {
		p.send(frames)
	}
	return id
}

// send hands the current batch over.
func (p *stackPipe) send(frames []Frame) {
	p.cur.frames = frames
	p.work <- p.cur
	p.out++
	p.cur = nil
}

// sync sends what is queued and waits until the table has every stack
// numbered so far: the VM may then use the table.
func (p *stackPipe) sync(frames []Frame) {
	if !p.active {
		return
	}
	if p.cur != nil && len(p.cur.ends) > 0 {
		p.send(frames)
	}
	for ; p.out > 0; p.out-- {
		b := <-p.back
		b.frames = nil
		p.spare = append(p.spare, b)
	}
	p.active = false
	if p.failed != nil {
		panic(p.failed)
	}
}

// stop ends the goroutine once the table is complete.
func (p *stackPipe) stop(frames []Frame) {
	defer p.abandon()
	p.sync(frames)
	p.spare, p.cur = nil, nil
}

// abandon ends the goroutine (after what it was sent) without waiting.
func (p *stackPipe) abandon() {
	if p.work != nil {
		close(p.work)
		p.work = nil
	}
}

// syncStacks brings the stack table up to date before the VM uses it.
func (v *vm) syncStacks() {
	if v.pipe != nil {
		v.pipe.sync(v.snap.Frames)
	}
}

// stackLazy reports whether stack id is lazy.
func (v *vm) stackLazy(id StackID) bool {
	v.syncStacks()
	return v.snap.Stacks.Lazy(id)
}
