package snapshot

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestEntryKeysMemoRewritten decodes trace entries whose keys and action
// are memo references (BINGET), until one entry stores other strings at
// the memo ids of "size" and "alloc" (BINPUT): the later entries' same
// references then mean "addr" and "free_completed". The fast decoder must
// agree with the reference decoder, which knows no shortcut.
func TestEntryKeysMemoRewritten(t *testing.T) {
	var b []byte
	str := func(s string) { b = append(b, opShortBinUni, byte(len(s))); b = append(b, s...) }
	memo := func() { b = append(b, opMemoize) }
	get := func(id byte) { b = append(b, opBinGet, id) }
	small := func(n byte) { b = append(b, opBinInt1, n) }
	b = append(b, opProto, 4, opEmptyDict)
	memo() // 0: the snapshot
	b = append(b, opMark)
	str("segments")
	b = append(b, opEmptyList)
	str("device_traces")
	memo() // 1
	b = append(b, opEmptyList)
	memo() // 2: device_traces
	b = append(b, opMark, opEmptyList)
	memo() // 3: device 0
	b = append(b, opMark)
	// The first entry memoizes its keys and action: 5 action, 6 alloc,
	// 7 addr, 8 size, 9 stream, 10 time_us.
	b = append(b, opEmptyDict)
	memo() // 4
	b = append(b, opMark)
	for _, k := range []string{"action", "alloc", "addr"} {
		str(k)
		memo()
	}
	small(16)
	str("size")
	memo()
	small(32)
	str("stream")
	memo()
	small(0)
	str("time_us")
	memo()
	small(5)
	b = append(b, opSetItems)
	entry := func(addr, size, t byte) {
		b = append(b, opEmptyDict)
		memo()
		b = append(b, opMark)
		get(5)
		get(6)
		get(7)
		small(addr)
		get(8)
		small(size)
		get(9)
		small(0)
		get(10)
		small(t)
		b = append(b, opSetItems)
	}
	for i := range byte(40) {
		entry(16+i, 32+i, 6+i)
	}
	// This entry stores "free_completed" at 6 and "addr" at 8.
	b = append(b, opEmptyDict)
	memo()
	b = append(b, opMark)
	get(5)
	str("free_completed")
	b = append(b, opBinPut, 6)
	str("addr")
	b = append(b, opBinPut, 8)
	small(99)
	get(10)
	small(50)
	b = append(b, opSetItems)
	for i := range byte(40) {
		entry(100+i, 200+i, 60+i)
	}
	b = append(b, opAppends, opAppends, opSetItems, opStop)

	ref, err := DecodeReferenceBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := DecodeBytes(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !Equal(fast, ref) {
		t.Fatalf("fast and reference differ: %s", Diff(ref, fast))
	}
	tr := fast.DeviceTraces[0]
	if tr.Len() != 82 || tr.Action(0) != ActionAlloc || tr.Size(1) != 32 || tr.Action(81) != ActionFreeCompleted || tr.Addr(81) != 239 || tr.Size(81) != 0 {
		t.Errorf("%d entries; first %s size %d; last %s addr %d size %d: not the entries written", tr.Len(), tr.Action(0), tr.Size(1),
			tr.Action(81), tr.Addr(81), tr.Size(81))
	}
}

// TestEntryKnownPairs decodes thousands of trace entries, written as torch
// writes them (keys and actions memo references after their first use),
// whose values take every integer opcode and width, negative ones (and
// addresses of 2^63 and more) among them, with actions of every kind,
// the stream changing now and then, and entries missing a key or with a
// rare one: the fast decoder (entryRun: the keys and actions of the entry
// before it) must agree with the reference decoder.
func TestEntryKnownPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	num := func() int64 {
		// 1 to 8 bytes, either sign.
		n := int64(rng.Uint64() >> (8 * rng.IntN(8)))
		if rng.IntN(3) == 0 {
			n = -n
		}
		if rng.IntN(4) == 0 {
			n = int64(rng.IntN(300)) - 50 // BININT1, BININT2
		}
		return n
	}
	actions := []Action{ActionAlloc, ActionFreeRequested, ActionFreeCompleted, ActionSegmentAlloc, ActionSegmentFree,
		ActionSegmentMap, ActionSnapshot, ActionOOM, "custom_action"}
	s := &Snapshot{}
	for i := range 50 {
		s.Frames = append(s.Frames, Frame{Name: fmt.Sprintf("f%d", i), Filename: "x.py", Line: int64(i)})
	}
	var stacks []StackID
	for k := range 20 {
		stacks = append(stacks, s.Stacks.Add(Stack{FrameID(k), FrameID(k + 1), FrameID(2 * k)}))
	}
	var tr Trace
	streams := []uint64{0, 7, 1 << 40}
	stream := uint64(0)
	for i := range 6000 {
		if rng.IntN(500) == 0 {
			stream = streams[rng.IntN(len(streams))]
		}
		e := TraceEntry{Action: actions[rng.IntN(len(actions))], Addr: uint64(num()), Size: num(), Stream: stream,
			TimeUS: num(), Frames: stacks[rng.IntN(len(stacks))]}
		if e.Action == ActionOOM {
			e.Addr = 0 // not written
		}
		switch {
		case i%997 == 5:
			e.Frames = NoStack
		case i%1201 == 7:
			e.DeviceFree = num()
		case i%1303 == 9:
			e.CompileContext = "ctx"
		}
		tr.Append(e)
	}
	s.DeviceTraces = []Trace{tr}
	for _, proto := range []int{2, 4, 5} {
		var buf bytes.Buffer
		if err := Encode(&buf, s, EncodeOptions{Protocol: proto, FreshStackLists: true}); err != nil {
			t.Fatal(err)
		}
		ref, err := DecodeReferenceBytes(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		fast, err := DecodeBytes(buf.Bytes(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !Equal(fast, ref) {
			t.Fatalf("protocol %d: fast and reference differ: %s", proto, Diff(ref, fast))
		}
		got := fast.DeviceTraces[0]
		for i := range tr.Len() {
			g, w := got.Entry(i), tr.Entry(i)
			if g.Action != w.Action || g.Addr != w.Addr || g.Size != w.Size || g.Stream != w.Stream || g.TimeUS != w.TimeUS {
				t.Fatalf("protocol %d entry %d: %+v, wrote %+v", proto, i, g, w)
			}
		}
	}
}
