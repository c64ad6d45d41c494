package snapshot

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"
)

// foldScanPlain is foldScan written plainly, one reference a round: the
// reference for TestFoldScan.
func foldScanPlain(dl []byte, p int, fm []uint64, seed uint64) (int, []FrameID, folded, int) {
	fs := folded{best: uint32(0xffff) << 16, h: xxStart(seed)}
	var ids []FrameID
	for {
		if p+5 > len(dl) {
			return p, ids, fs, scanOther
		}
		var id, next int
		switch dl[p] {
		case opBinGet:
			id, next = int(dl[p+1]), p+2
		case opLongBinGet:
			id, next = int(binary.LittleEndian.Uint32(dl[p+1:])), p+5
		case opAppends:
			return p, ids, fs, scanEnd
		default:
			return p, ids, fs, scanOther
		}
		var e uint64
		if id < len(fm) {
			e = fm[id]
		}
		if uint32(e) == 0 {
			return p, ids, fs, id
		}
		if len(ids) == foldMax {
			return p, ids, fs, scanFull
		}
		p = next
		f := FrameID(uint32(e) - 1)
		ids = append(ids, f)
		w := uint32(e >> 32)
		fs.all |= w
		if r := w &^ 0xffff; r < fs.best {
			fs.best, fs.site = r, f
		}
		if foldedHash {
			fs.h = xxStep(fs.h, f)
		}
	}
}

// TestFoldScan runs foldScan (two references a round, natively read from
// one 16-byte window, few bounds checks) and foldScanPlain over lists of
// memo references to frames: short and long (around foldMax, where the
// buffer is full), odd and even lengths, BINGET and LONG_BINGET mixed,
// ranks in any order and often equal (the first of the least counts),
// the least rank's first frame early or late in the list,
// ended by APPENDS, by a memo id not in the table (at any place), by
// another opcode or by the end of the input, or by a memo id beyond the
// table whose place modulo the table's length holds a frame (foldScan
// reads the table at id&(len-1)). With no table every reference misses.
// Every result must agree.
func TestFoldScan(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fm := make([]uint64, 1<<16)
	for id := range fm {
		if id%97 == 13 {
			continue // not a frame
		}
		word := uint64(r.Uint32()&0xffff | uint32(r.IntN(8))<<16) // few ranks: ties
		if r.IntN(3) == 0 {
			word |= 0xffff0000 // no rank
		}
		fm[id] = word<<32 | uint64(r.IntN(1<<20)+1)
	}
	lengths := []int{0, 1, 2, 3, 7, 40, foldMax - 2, foldMax - 1, foldMax, foldMax + 1, foldMax + 2}
	for k := range 400 {
		n := lengths[k%len(lengths)]
		if k >= 2*len(lengths) && n < 100 {
			n = r.IntN(60)
		}
		d := []byte{opMark}
		miss := -1
		if k%5 == 4 && n > 0 {
			miss = r.IntN(n)
		}
		late := 0 // before it, in one list in three, only frames of rank 4 or more
		if k%3 == 1 {
			late = r.IntN(n + 1)
		}
		for i := range n {
			var id int
			for {
				id = r.IntN(len(fm))
				if r.IntN(2) == 0 {
					id = r.IntN(256)
				}
				if i < late && i != miss && fm[id]>>48 < 4 {
					continue
				}
				if (fm[id] != 0) == (i != miss) {
					break // a frame, or at miss a memo id that is not one
				}
				if i == miss && r.IntN(3) == 0 && fm[id] != 0 {
					id += len(fm) << r.IntN(16) // beyond, on a frame's place
					break
				}
			}
			if id < 256 && r.IntN(4) != 0 {
				d = append(d, opBinGet, byte(id))
			} else {
				d = binary.LittleEndian.AppendUint32(append(d, opLongBinGet), uint32(id))
			}
		}
		switch k % 4 {
		case 0, 1:
			d = append(d, opAppends, opSetItems, 0, 0, 0, 0)
		case 2:
			d = append(d, opStop, 0, 0, 0, 0)
		case 3:
			// Cut off: the end within the last reference or two.
			d = d[:max(1, len(d)-r.IntN(6))]
		}
		seed := r.Uint64()
		tab := fm
		if k%23 == 22 {
			tab = nil
		}
		var buf [foldMax]FrameID
		p, got, fs, miss := foldScan(d, 1, tab, &buf, seed)
		wp, wids, wfs, wmiss := foldScanPlain(d, 1, tab, seed)
		if p != wp || got != len(wids) || fs != wfs || miss != wmiss {
			t.Fatalf("list %d (%d refs): foldScan p %d n %d %+v miss %d, plainly p %d n %d %+v miss %d",
				k, n, p, got, fs, miss, wp, len(wids), wfs, wmiss)
		}
		for i, f := range wids {
			if buf[i] != f {
				t.Fatalf("list %d: frame %d is %d, want %d", k, i, buf[i], f)
			}
		}
		// In WebAssembly foldScan is assembly: it must leave what
		// foldScanGo leaves, from any start, the buffer's other places
		// untouched (natively they are one).
		if runtime.GOARCH == "wasm" {
			start := 1 + r.IntN(3)
			var ids, wantIDs [foldMax]FrameID
			for i := range ids {
				ids[i] = FrameID(i)
				wantIDs[i] = FrameID(i)
			}
			p, m, fs, miss := foldScan(d, start, tab, &ids, seed)
			wp, wm, wfs, wmiss := foldScanGo(d, start, tab, &wantIDs, seed)
			if p != wp || m != wm || miss != wmiss || fs != wfs || ids != wantIDs {
				t.Fatalf("list %d from %d: foldScan p %d n %d miss %d %+v, foldScanGo p %d n %d miss %d %+v",
					k, start, p, m, miss, fs, wp, wm, wmiss, wfs)
			}
		}
	}
}

// BenchmarkFoldScan runs foldScan over lists of 19 memo references to
// frames (a distinct-stacks file's entries), BINGET and LONG_BINGET mixed,
// to frames of a table of 16 Ki memo ids (in cache): the loop's own cost,
// natively or in WebAssembly (GOOS=js GOARCH=wasm go test -c, then Node).
func BenchmarkFoldScan(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	fm := make([]uint64, 1<<14)
	for id := range fm {
		fm[id] = uint64(r.Uint32()&0xffff|uint32(r.IntN(8))<<16)<<32 | uint64(r.IntN(1<<20)+1)
	}
	var d []byte
	var starts []int
	for range 4096 {
		starts = append(starts, len(d))
		d = append(d, opMark)
		for range 19 {
			if id := r.IntN(len(fm)); id < 4096 {
				d = append(d, opBinGet, byte(id))
			} else {
				d = binary.LittleEndian.AppendUint32(append(d, opLongBinGet), uint32(id))
			}
		}
		d = append(d, opAppends, opSetItems)
	}
	d = append(d, opStop, 0, 0, 0, 0)
	var buf [foldMax]FrameID
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range starts {
			if _, n, _, miss := foldScan(d, s+1, fm, &buf, 5); n != 19 || miss != scanEnd {
				b.Fatal(n, miss)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(starts)*19), "ns/frame")
}
