package snapshot

import "testing"

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
