package load

import (
	"encoding/binary"
	"math/rand/v2"
)

// warmFile writes WarmUp's input in the layout torch's pickle.dump gives a
// snapshot (protocol 4; dicts, lists and strings memoized; a frame dict
// written once, then referenced): warmSegments segments and one device's
// trace of about 1.5 entries a step (an alloc, or a
// free_requested and free_completed pair of a live block), each with a
// stack of 20-70 frames among 300 shapes (repeated) or of 8-30 frames
// drawn anew (distinct), as gen's families. It is written here rather than
// by gen.WriteFamily (snapshot.Encode): three times faster, and the worker
// need not ship the encoder. pause is called every warmSlice bytes; it
// stops the writing (nil) when it says true. Each entry written is passed
// to entry (if not nil), for the tests.
func warmFile(distinct bool, steps int, pause func() bool, entry func(warmEntry)) []byte {
	w := &pickleWriter{memo: map[string]int{}}
	r := rand.New(rand.NewPCG(1, 2))
	const nFrames = 600
	files := []string{"/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", "/home/u/train.py",
		"/usr/lib/python3.11/site-packages/torch/_tensor.py", "/usr/lib/python3.11/site-packages/torch/optim/adamw.py"}
	names := []string{"forward", "_call_impl", "backward", "step", "_init_group", "main"}
	sizes := []int64{512, 4096, 1 << 20, 3 << 21, 1 << 24}
	frameMemo := make([]int, nFrames) // memo id of frame i's dict, 0 until written
	type frame struct {
		file, name string
		line       int64
	}
	frames := make([]frame, nFrames)
	for i := range frames {
		frames[i] = frame{files[r.IntN(len(files))], names[r.IntN(len(names))], int64(1 + r.IntN(900))}
	}
	var shapes [][]int
	if !distinct {
		for range 300 {
			s := make([]int, 20+r.IntN(51))
			for i := range s {
				s[i] = r.IntN(nFrames)
			}
			shapes = append(shapes, s)
		}
	}
	buf := make([]int, 0, 30)
	stack := func() []int {
		if !distinct {
			return shapes[r.IntN(len(shapes))]
		}
		buf = buf[:8+r.IntN(23)]
		for i := range buf {
			buf[i] = r.IntN(nFrames)
		}
		return buf
	}

	// writeStack writes a frame list: MARK, each frame (its dict the first
	// time, with torch's keys in torch's order), APPENDS.
	writeStack := func(st []int) {
		w.list()
		w.mark()
		for _, f := range st {
			if id := frameMemo[f]; id > 0 {
				w.get(id)
				continue
			}
			w.dict()
			frameMemo[f] = w.n - 1
			w.mark()
			w.str("name")
			w.str(frames[f].name)
			w.str("filename")
			w.str(frames[f].file)
			w.str("line")
			w.int(frames[f].line)
			w.b = append(w.b, 'u') // SETITEMS
		}
		w.b = append(w.b, 'e') // APPENDS
	}
	w.b = append(w.b, 0x80, 4) // PROTO 4
	w.dict()
	w.mark()
	// 200 segments of 64 MiB, each with a live block of 32 MiB and its
	// stack, and a free one.
	w.str("segments")
	w.list()
	w.mark()
	const base = 139800000000000
	for k := range warmSegments {
		addr := int64(base + k<<26)
		w.dict()
		w.mark()
		for _, kv := range []struct {
			k string
			v int64
		}{{"device", 0}, {"address", addr}, {"total_size", 1 << 26}, {"allocated_size", 1 << 25},
			{"active_size", 1 << 25}, {"requested_size", 1 << 25}, {"stream", 0}} {
			w.str(kv.k)
			w.int(kv.v)
		}
		w.str("segment_type")
		w.str("large")
		w.str("is_expandable")
		w.b = append(w.b, 0x89) // NEWFALSE
		w.str("blocks")
		w.list()
		w.mark()
		for i, state := range []string{"active_allocated", "inactive"} {
			w.dict()
			w.mark()
			w.str("address")
			w.int(addr + int64(i)<<25)
			w.str("size")
			w.int(1 << 25)
			w.str("requested_size")
			w.int(int64(1-i) << 25)
			w.str("state")
			w.str(state)
			w.str("frames")
			if i == 0 {
				writeStack(stack())
			} else {
				writeStack(nil)
			}
			w.b = append(w.b, 'u') // SETITEMS
		}
		w.b = append(w.b, 'e', 'u') // APPENDS (blocks), SETITEMS (segment)
	}
	w.b = append(w.b, 'e') // APPENDS (segments)
	w.str("device_traces")
	w.list()
	w.list()
	inBatch := 0
	write := func(e warmEntry, st []int) {
		if inBatch == 0 {
			w.mark()
		}
		w.dict()
		w.mark()
		w.str("action")
		w.str(e.action)
		w.str("addr")
		w.int(int64(e.addr))
		w.str("size")
		w.int(e.size)
		w.str("stream")
		w.int(0)
		w.str("time_us")
		w.int(e.time)
		w.str("frames")
		writeStack(st)
		w.b = append(w.b, 'u') // SETITEMS
		if inBatch++; inBatch == 1000 {
			w.b = append(w.b, 'e')
			inBatch = 0
		}
		if entry != nil {
			e.frames = append([]int(nil), st...)
			entry(e)
		}
	}
	type block struct {
		addr uint64
		size int64
	}
	var live []block
	var t int64
	next := warmSlice
	for i := range steps {
		if len(w.b) >= next {
			next = len(w.b) + warmSlice
			if pause() {
				return nil
			}
		}
		t += int64(1 + r.IntN(50))
		if len(live) > 0 && r.Float64() < 0.48 {
			k := r.IntN(len(live))
			b := live[k]
			live[k] = live[len(live)-1]
			live = live[:len(live)-1]
			write(warmEntry{"free_requested", b.addr, b.size, t, nil}, stack())
			write(warmEntry{"free_completed", b.addr, b.size, t, nil}, stack())
			continue
		}
		b := block{uint64(base + int64(i)<<25), sizes[r.IntN(len(sizes))]}
		live = append(live, b)
		write(warmEntry{"alloc", b.addr, b.size, t, nil}, stack())
	}
	if inBatch > 0 {
		w.b = append(w.b, 'e')
	}
	w.b = append(w.b, 'a', 'u', '.') // APPEND (the device's trace), SETITEMS, STOP
	return w.b
}

// warmSegments is the number of segments of warmFile's snapshots.
const warmSegments = 200

// warmEntry is a trace entry warmFile wrote: frames are frame indexes (in
// the order of their first use, the decoder's frame IDs).
type warmEntry struct {
	action     string
	addr       uint64
	size, time int64
	frames     []int
}

// pickleWriter writes pickle opcodes, numbering the memo as it goes.
type pickleWriter struct {
	b    []byte
	n    int            // memo entries so far
	memo map[string]int // memo id of each string written
}

// memoize memoizes the value on top of the stack.
func (w *pickleWriter) memoize() { w.b = append(w.b, 0x94); w.n++ }

// dict writes an empty dict, memoized.
func (w *pickleWriter) dict() { w.b = append(w.b, '}'); w.memoize() }

// list writes an empty list, memoized.
func (w *pickleWriter) list() { w.b = append(w.b, ']'); w.memoize() }

// mark writes MARK.
func (w *pickleWriter) mark() { w.b = append(w.b, '(') }

// get writes a reference to memo entry id.
func (w *pickleWriter) get(id int) {
	if id < 256 {
		w.b = append(w.b, 'h', byte(id))
		return
	}
	w.b = binary.LittleEndian.AppendUint32(append(w.b, 'j'), uint32(id))
}

// str writes s (shorter than 256 bytes) once, memoized, then references.
func (w *pickleWriter) str(s string) {
	if id, ok := w.memo[s]; ok {
		w.get(id)
		return
	}
	w.b = append(append(w.b, 0x8c, byte(len(s))), s...)
	w.memo[s] = w.n
	w.memoize()
}

// int writes a non-negative integer as pickle does.
func (w *pickleWriter) int(x int64) {
	switch {
	case x < 1<<8:
		w.b = append(w.b, 'K', byte(x))
	case x < 1<<16:
		w.b = binary.LittleEndian.AppendUint16(append(w.b, 'M'), uint16(x))
	case x < 1<<31:
		w.b = binary.LittleEndian.AppendUint32(append(w.b, 'J'), uint32(x))
	default:
		var le []byte
		for v := x; ; v >>= 8 {
			le = append(le, byte(v))
			if v < 0x80 { // the last byte's top bit is the sign
				break
			}
		}
		w.b = append(append(w.b, 0x8a, byte(len(le))), le...)
	}
}
