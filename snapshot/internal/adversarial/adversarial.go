// Package adversarial builds hostile snapshot files for tests: one per
// class of attack on the decoder and the analysis (shared references that
// multiply work, quadratic parsing, decompression bombs, too many devices,
// unbounded strings and lines, deep nesting). Each is small (under 10 MB)
// and generated here rather than checked in. Tests assert that loading each
// stays within the memory bound (3× its size plus 100 MiB) and fails, when
// it fails, with the expected class of error; the fuzzers start from them.
package adversarial

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"strconv"
	"strings"
)

// Case is one hostile input.
type Case struct {
	// Name says what it does.
	Name string
	// Data is the file.
	Data []byte
	// Refused is true when loading must fail with snapshot.ErrTooLarge;
	// otherwise loading may succeed or fail with any class, within the
	// memory bound.
	Refused bool
}

// p builds a protocol 4 pickle without FRAME opcodes.
type p struct{ b bytes.Buffer }

func newP() *p {
	q := &p{}
	q.b.WriteString("\x80\x04")
	return q
}

func (q *p) op(s string) *p { q.b.WriteString(s); return q }

// str writes a short string.
func (q *p) str(s string) *p {
	q.b.WriteByte(0x8c)
	q.b.WriteByte(byte(len(s)))
	q.b.WriteString(s)
	return q
}

// int writes a small int.
func (q *p) int(n uint32) *p {
	q.b.WriteByte('J')
	q.b.Write(binary.LittleEndian.AppendUint32(nil, n))
	return q
}

// put stores the top of the stack at memo id; get pushes it again.
func (q *p) put(id uint32) *p {
	q.b.WriteByte('r')
	q.b.Write(binary.LittleEndian.AppendUint32(nil, id))
	return q
}

func (q *p) get(id uint32) *p {
	q.b.WriteByte('j')
	q.b.Write(binary.LittleEndian.AppendUint32(nil, id))
	return q
}

// entry writes a trace entry dict {action, addr, size, stream} with the
// given address.
func (q *p) entry(action string, addr uint32) *p {
	return q.op("}(").str("action").str(action).str("addr").int(addr).str("size").int(512).str("stream").int(0).op("u")
}

// items repeats item n times inside MARK … APPENDS batches of 1000.
func (q *p) items(n int, item func(i int)) *p {
	for i := 0; i < n; i += 1000 {
		q.op("(")
		for j := i; j < min(i+1000, n); j++ {
			item(j)
		}
		q.op("e")
	}
	return q
}

func (q *p) bytes() []byte { return append(q.b.Bytes(), '.') }

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// Corpus returns the hostile inputs.
func Corpus() []Case {
	var cs []Case
	add := func(name string, refused bool, data []byte) { cs = append(cs, Case{name, data, refused}) }

	// One entry dict referenced 3 million times (2 bytes each): 3 M
	// entries to store and replay from 6 MB.
	q := newP().op("}(").str("segments").op("]").str("device_traces").op("]]").entry("alloc", 4096).put(1).op("a")
	q.items(3_000_000, func(int) { q.get(1) })
	add("one entry referenced 3M times", true, q.op("au").bytes())

	// One trace list of 20 000 entries referenced by 1 000 devices.
	q = newP().op("}(").str("segments").op("]").str("device_traces").op("]").op("]").put(1)
	q.items(20_000, func(i int) { q.entry("alloc", uint32(i)*512) })
	q.op("a(")
	for range 999 {
		q.get(1)
	}
	add("one trace list for 1000 devices", true, q.op("eu").bytes())

	// One block list of 20 000 blocks shared by 1 000 segments.
	q = newP().op("}(").str("segments").op("](")
	for s := range 1000 {
		q.op("}(").str("device").int(0).str("address").int(uint32(s) << 20).str("total_size").int(1 << 20).str("blocks")
		if s == 0 {
			q.op("]").put(1)
			q.items(20_000, func(i int) {
				q.op("}(").str("size").int(512).str("requested_size").int(512).str("state").str("active_allocated").op("u")
			})
		} else {
			q.get(1)
		}
		q.op("u")
	}
	add("one block list for 1000 segments", true, q.op("e").str("device_traces").op("]u").bytes())

	// Decimal integers of a million digits (quadratic to parse).
	add("a million-digit INT", true, []byte("\x80\x02I"+strings.Repeat("7", 1_000_000)+"\n."))
	add("a million-digit LONG in gzip", true, gz([]byte("\x80\x02L"+strings.Repeat("9", 1_000_000)+"L\n.")))

	// A string declaring a terabyte, and a line without end, where the
	// size is unknown (gzip).
	add("a terabyte string in gzip", true, gz(append([]byte("\x80\x04\x8d"), binary.LittleEndian.AppendUint64(nil, 1<<40)...)))
	add("an endless UNICODE line in gzip", true, gz([]byte("\x80\x02V"+strings.Repeat("x", 40<<20))))

	// 4 million full entries compressed a thousandfold: 240 MB of valid
	// snapshot from a fraction of a megabyte.
	var raw bytes.Buffer
	raw.WriteString("\x80\x04}(\x8c\x08segments]\x8c\x0ddevice_traces]]")
	e := newP().entry("alloc", 4096).b.Bytes()[2:]
	batch := bytes.Repeat(e, 1000)
	for range 4000 {
		raw.WriteByte('(')
		raw.Write(batch)
		raw.WriteByte('e')
	}
	raw.WriteString("au.")
	add("4M entries in a gzip bomb", true, gz(raw.Bytes()))

	// 100 000 devices: empty traces, and segments on distinct devices.
	q = newP().op("}(").str("segments").op("]").str("device_traces").op("]")
	q.items(100_000, func(int) { q.op("]") })
	add("100000 device traces", true, q.op("u").bytes())
	q = newP().op("}(").str("segments").op("]")
	q.items(100_000, func(i int) {
		q.op("}(").str("device").int(uint32(i)).str("address").int(0).str("total_size").int(512).str("blocks").op("]u")
	})
	add("segments on 100000 devices", true, q.op("u").bytes())

	// 300 distinct unknown actions, and 70 000 streams.
	q = newP().op("}(").str("segments").op("]").str("device_traces").op("]]")
	q.items(300, func(i int) { q.entry("action_"+strconv.Itoa(i), uint32(i)) })
	add("300 unknown actions", true, q.op("au").bytes())
	q = newP().op("}(").str("segments").op("]").str("device_traces").op("]]")
	q.items(70_000, func(i int) {
		q.op("}(").str("action").str("alloc").str("addr").int(uint32(i)).str("size").int(512).str("stream").int(uint32(i)).op("u")
	})
	add("70000 streams", true, q.op("au").bytes())

	// Deep nesting: lists in lists, and MARKs.
	add("nested lists 200000 deep", false, []byte("\x80\x04"+strings.Repeat("]", 200_000)+strings.Repeat("a", 199_999)+"."))
	add("200000 open MARKs", false, []byte("\x80\x04"+strings.Repeat("(", 200_000)+"."))

	// A list doubling by shared references 60 times (2^60 values if
	// copied) under an unknown key.
	var b strings.Builder
	b.WriteString("]\x940")
	for i := range 60 {
		b.WriteString("](h" + string(rune(i)) + "h" + string(rune(i)) + "e\x94")
		if i < 59 {
			b.WriteString("0")
		}
	}
	add("a list doubling 60 times under an unknown key", true, []byte("\x80\x04}(\x8c\x08segments]\x8c\x01x"+b.String()+"u."))

	// Memo ids far apart: a million PUTs to ids up to 2^32.
	q = newP().op("N")
	for i := range 1_000_000 {
		q.put(uint32(i) * 4093)
	}
	add("a million far memo ids", false, q.op("0").op("}(").str("segments").op("]u").bytes())
	return cs
}
