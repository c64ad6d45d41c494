package snapshot_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/gen"
)

// splitInputs returns the files the split tests decode: both families
// (the distinct one with several seeds, a few MiB) and the real
// snapshots.
func splitInputs(t *testing.T, mib int64, seeds ...uint64) map[string][]byte {
	t.Helper()
	inputs := map[string][]byte{}
	for _, fam := range []gen.Family{gen.DistinctStacks, gen.RealStacks} {
		for i, seed := range seeds {
			if fam == gen.RealStacks && i > 0 {
				break // its stacks repeat: one is enough
			}
			var buf bytes.Buffer
			if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: fam, TargetBytes: mib << 20, Seed: seed}); err != nil {
				t.Fatal(err)
			}
			inputs[fmt.Sprintf("%s-%d", fam, seed)] = buf.Bytes()
		}
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "snapshots", "*.pickle"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(f)] = data
	}
	return inputs
}

var sameCalls int

// sameDecode fails unless b equals a exactly: Equal (every entry's and
// block's frames), the same frames in the same order, the same entries,
// the same stack ID per entry and block, and the same stack table
// (summaries, depths, laziness).
func sameDecode(t *testing.T, a, b *snapshot.Snapshot) {
	t.Helper()
	// Equal reads every lazy stack again: once in 8 calls; the same
	// stacks in the same places (below) make the same frames.
	if sameCalls++; sameCalls%8 == 1 && !snapshot.Equal(a, b) {
		t.Fatalf("split decode differs: %s", snapshot.Diff(a, b))
	}
	if !snapshot.SameStackTables(&a.Stacks, &b.Stacks) {
		t.Fatal("the stack tables differ")
	}
	if len(a.DeviceTraces) != len(b.DeviceTraces) || len(a.Segments) != len(b.Segments) {
		t.Fatal("traces or segments differ")
	}
	if !slices.Equal(a.Frames, b.Frames) {
		t.Fatalf("frames differ: %d vs %d", len(a.Frames), len(b.Frames))
	}
	sameStackIDs(t, a, b)
	for d, tr := range a.DeviceTraces {
		for i := range tr.Len() {
			if tr.Entry(i) != b.DeviceTraces[d].Entry(i) {
				t.Fatalf("device %d entry %d: %+v, split %+v", d, i, tr.Entry(i), b.DeviceTraces[d].Entry(i))
			}
		}
	}
}

func splitOptions(data []byte, hold int) *snapshot.Options {
	return snapshot.WithoutSplit(&snapshot.Options{Source: bytes.NewReader(data), Fold: analysis.Fold(), HoldFrames: hold})
}

// TestSplitAnywhere splits every input at every 3 % of it and at edge
// cases (the first bytes, inside the prefix, the last entries, the end):
// the snapshot must equal the serial decode, and the split must have been
// taken at most places on the families.
func TestSplitAnywhere(t *testing.T) {
	defer snapshot.SetPartPrefix(64 << 10)()
	for name, data := range splitInputs(t, 2, 1, 2) {
		for _, hold := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s/hold%d", name, hold), func(t *testing.T) {
				size := int64(len(data))
				serial, err := snapshot.Decode(bytes.NewReader(data), size, splitOptions(data, hold))
				if err != nil {
					t.Fatal(err)
				}
				ats := []int64{0, 1, 100, 70 << 10, size - 2000, size - 300, size - 1}
				for i := int64(0); i < 34; i++ {
					ats = append(ats, size*i/33)
				}
				taken := 0
				for _, at := range ats {
					at = max(0, min(at, size-1))
					opt, res := snapshot.WithSplitAt(splitOptions(data, hold), data, at, nil)
					s, err := snapshot.Decode(bytes.NewReader(data), size, opt)
					if err != nil {
						t.Fatalf("at %d: %v", at, err)
					}
					snapshot.SplitOutcome(opt, res)
					sameDecode(t, serial, s)
					if res.Taken {
						taken++
					}
					if testing.Verbose() && !res.Taken {
						t.Logf("at %d: not taken (part: %v; %s)", at, res.PartErr, res.Why)
					}
				}
				t.Logf("split taken at %d of %d places", taken, len(ats))
				// The split must be taken at most places of the families
				// where every new stack is lazy (the distinct one always,
				// the real one with HoldFrames 1). The real torch files
				// meet new frames all along: their parts stop there.
				if (hold == 1 && !strings.HasPrefix(name, "pt") || strings.HasPrefix(name, "distinct")) && taken < len(ats)*2/3 {
					t.Errorf("split taken at only %d of %d places", taken, len(ats))
				}
			})
		}
	}
}

// TestSplitPages splits a distinct-stacks file whose part holds several
// pages of rows and stacks (pageSize values), which the merge takes whole
// instead of copying, at places where the main decoder's row count falls
// anywhere in a page: the snapshot must equal the serial decode.
func TestSplitPages(t *testing.T) {
	var buf bytes.Buffer
	if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: gen.DistinctStacks, TargetBytes: 16 << 20, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	data, size := buf.Bytes(), int64(buf.Len())
	serial, err := snapshot.Decode(bytes.NewReader(data), size, splitOptions(data, 0))
	if err != nil {
		t.Fatal(err)
	}
	if n := serial.DeviceTraces[0].Len(); n < 4*snapshot.PageSize {
		t.Fatalf("%d entries: fewer than 4 pages", n)
	}
	for _, at := range []int64{size / 3, size/2 + 4321, size * 2 / 3} {
		opt, res := snapshot.WithSplitAt(splitOptions(data, 0), data, at, nil)
		s, err := snapshot.Decode(bytes.NewReader(data), size, opt)
		if err != nil {
			t.Fatal(err)
		}
		snapshot.SplitOutcome(opt, res)
		if !res.Taken {
			t.Fatalf("at %d: not taken (part: %v; %s)", at, res.PartErr, res.Why)
		}
		sameDecode(t, serial, s)
	}
}

// marshaled hands the part over as its binary form, as between workers.
func marshaled(t *testing.T) func(*snapshot.Split, *snapshot.Part, error) (*snapshot.Part, error) {
	return func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
		if err != nil {
			return p, err
		}
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var q snapshot.Part
		if err := q.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if q.Bytes() != p.Bytes() {
			t.Fatalf("part of %d bytes, %d once unmarshaled", p.Bytes(), q.Bytes())
		}
		sp.Part = func() (*snapshot.Part, error) { return &q, nil }
		return &q, nil
	}
}

// TestSplitMarshaled takes parts that went through MarshalBinary and
// UnmarshalBinary, as the browser's workers hand them over.
func TestSplitMarshaled(t *testing.T) {
	defer snapshot.SetPartPrefix(64 << 10)()
	for name, data := range splitInputs(t, 2, 3) {
		hold := 1
		t.Run(name, func(t *testing.T) {
			size := int64(len(data))
			serial, err := snapshot.Decode(bytes.NewReader(data), size, splitOptions(data, hold))
			if err != nil {
				t.Fatal(err)
			}
			taken := 0
			for i := int64(1); i < 8; i++ {
				opt, res := snapshot.WithSplitAt(splitOptions(data, hold), data, size*i/8, marshaled(t))
				s, err := snapshot.Decode(bytes.NewReader(data), size, opt)
				if err != nil {
					t.Fatal(err)
				}
				snapshot.SplitOutcome(opt, res)
				sameDecode(t, serial, s)
				if res.Taken {
					taken++
				}
			}
			if !strings.HasPrefix(name, "pt") && taken < 6 {
				t.Errorf("split taken at %d of 7 places", taken)
			}
		})
	}
}

// partReader reads a part's blob as the browser's analysis worker does
// (UnmarshalFrom over the part worker's buffer): it records its largest
// read and, once fail is set, fails.
type partReader struct {
	b       []byte
	largest int
	fail    bool
}

func (r *partReader) ReadAt(p []byte, off int64) (int, error) {
	if r.fail {
		return 0, errors.New("the buffer is gone")
	}
	r.largest = max(r.largest, len(p))
	return bytes.NewReader(r.b).ReadAt(p, off)
}

// TestSplitUnmarshalFrom takes parts read from their blob a few values
// at a time (UnmarshalFrom, small chunks and window): the snapshot must be
// the serial decode's and the split taken, no read larger than a chunk of
// a column; a source that fails once the part is checked makes Decode
// start again alone, with the same snapshot.
func TestSplitUnmarshalFrom(t *testing.T) {
	defer snapshot.SetPartPrefix(64 << 10)()
	const chunk, window = 1000, 40
	defer snapshot.SetWireChunk(chunk, window)()
	for name, data := range splitInputs(t, 2, 3) {
		if strings.HasPrefix(name, "pt") || strings.HasPrefix(name, "real") {
			continue // no part: its stacks repeat
		}
		t.Run(name, func(t *testing.T) {
			size := int64(len(data))
			serial, err := snapshot.Decode(bytes.NewReader(data), size, splitOptions(data, 1))
			if err != nil {
				t.Fatal(err)
			}
			for _, fail := range []bool{false, true} {
				var r *partReader
				opt, res := snapshot.WithSplitAt(splitOptions(data, 1), data, size/2, func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
					if err != nil {
						t.Fatal(err)
					}
					b, err := p.MarshalBinary()
					if err != nil {
						t.Fatal(err)
					}
					r = &partReader{b: b}
					var q snapshot.Part
					if err := q.UnmarshalFrom(r, int64(len(b))); err != nil {
						t.Fatal(err)
					}
					r.fail = fail
					sp.Part = func() (*snapshot.Part, error) { return &q, nil }
					return &q, nil
				})
				s, err := snapshot.Decode(bytes.NewReader(data), size, opt)
				if err != nil {
					t.Fatal(err)
				}
				snapshot.SplitOutcome(opt, res)
				if !snapshot.Equal(serial, s) {
					t.Fatalf("fail %v: split decode differs: %s", fail, snapshot.Diff(serial, s))
				}
				if fail != res.Restarted || !fail && !res.Taken {
					t.Errorf("fail %v: taken %v, restarted %v (%s)", fail, res.Taken, res.Restarted, res.Why)
				}
				if r.largest > 8*chunk || len(r.b) <= 8*chunk {
					t.Errorf("a read of %d bytes from a blob of %d", r.largest, len(r.b))
				}
			}
		})
	}
}

// TestSplitLying hands over splits that lie or fail: the snapshot must be
// the serial decode's, and the split not taken.
func TestSplitLying(t *testing.T) {
	defer snapshot.SetPartPrefix(64 << 10)()
	inputs := splitInputs(t, 2, 4, 5)
	data, other := inputs["distinct-4"], inputs["distinct-5"]
	size := int64(len(data))
	serial, err := snapshot.Decode(bytes.NewReader(data), size, splitOptions(data, 0))
	if err != nil {
		t.Fatal(err)
	}
	at := size / 2
	_, good := snapshot.WithSplitAt(splitOptions(data, 0), data, at, nil)
	if good.PartErr != nil {
		t.Fatal(good.PartErr)
	}
	otherOpt, _ := snapshot.WithSplitAt(splitOptions(other, 0), other, at, nil)
	otherPart, otherErr := otherOpt.Split.Part()
	if otherErr != nil {
		t.Fatal(otherErr)
	}
	// A part decoded with other options (every stack lazy from the first)
	// on the same hash seed as the main decoder.
	seeded := snapshot.WithSharedSeed(splitOptions(data, 0))
	hold1 := *seeded
	hold1.HoldFrames = 1
	holdOpt, _ := snapshot.WithSplitAt(&hold1, data, at, nil)
	holdPart, holdErr := holdOpt.Split.Part()
	if holdErr != nil {
		t.Fatal(holdErr)
	}
	cases := map[string]func(*snapshot.Split, *snapshot.Part, error) (*snapshot.Part, error){
		"start late": func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
			s, _ := sp.Start()
			sp.Start = func() (int64, error) { return s + 1, nil }
			return p, err
		},
		"start early": func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
			s, _ := sp.Start()
			sp.Start = func() (int64, error) { return s - 1, nil }
			return p, err
		},
		"start before At": func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
			sp.Start = func() (int64, error) { return 10, nil }
			return p, err
		},
		"start fails": func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
			sp.Start = func() (int64, error) { return 0, fmt.Errorf("no") }
			return p, err
		},
		"part fails": func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
			sp.Part = func() (*snapshot.Part, error) { return nil, fmt.Errorf("no") }
			return p, err
		},
		"part nil": func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
			sp.Part = func() (*snapshot.Part, error) { return nil, nil }
			return p, err
		},
		"part of another file": func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
			sp.Start = func() (int64, error) { return snapshot.PartStart(otherPart), nil }
			sp.Part = func() (*snapshot.Part, error) { return otherPart, nil }
			return p, err
		},
		"part decoded with other options": func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
			sp.Start = func() (int64, error) { return snapshot.PartStart(holdPart), nil }
			sp.Part = func() (*snapshot.Part, error) { return holdPart, nil }
			return p, err
		},
		"part starts elsewhere": func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
			q := *p
			snapshot.SetPartStart(&q, snapshot.PartStart(p)+1)
			sp.Part = func() (*snapshot.Part, error) { return &q, nil }
			return p, err
		},
		"part empty": func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
			sp.Part = func() (*snapshot.Part, error) { return &snapshot.Part{}, nil }
			return p, err
		},
		"no functions": func(sp *snapshot.Split, p *snapshot.Part, err error) (*snapshot.Part, error) {
			sp.Start, sp.Part = nil, nil
			return p, err
		},
	}
	for name, mangle := range cases {
		t.Run(name, func(t *testing.T) {
			opt, res := snapshot.WithSplitAt(seeded, data, at, mangle)
			s, err := snapshot.Decode(bytes.NewReader(data), size, opt)
			if err != nil {
				t.Fatal(err)
			}
			snapshot.SplitOutcome(opt, res)
			if res.Taken || s.SplitBytes() != 0 {
				t.Fatalf("a lying split was taken (%d split bytes)", s.SplitBytes())
			}
			sameDecode(t, serial, s)
		})
	}
	// The same part, taken twice: the second time it is refused.
	opt, _ := snapshot.WithSplitAt(splitOptions(data, 0), data, at, nil)
	for i := range 2 {
		o, info := snapshot.WithSplitInfo(opt)
		s, err := snapshot.Decode(bytes.NewReader(data), size, o)
		if err != nil {
			t.Fatal(err)
		}
		sameDecode(t, serial, s)
		if snapshot.SplitTaken(info) != (i == 0) {
			t.Fatalf("decode %d: split taken %v", i, snapshot.SplitTaken(info))
		}
		if p, _ := opt.Split.Part(); (s.SplitBytes() == p.Bytes()) != (i == 0) || p.Bytes() == 0 {
			t.Fatalf("decode %d: %d split bytes, the part covers %d", i, s.SplitBytes(), p.Bytes())
		}
	}
	// A part taken is not marshaled; damaged blobs are refused.
	p, _ := opt.Split.Part()
	if _, err := p.MarshalBinary(); err == nil {
		t.Fatal("a taken part was marshaled")
	}
	opt, _ = snapshot.WithSplitAt(splitOptions(data, 0), data, at, nil)
	p, _ = opt.Split.Part()
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 9, 20, len(b) / 3, len(b) / 2, len(b) - 9, len(b) - 1} {
		c := append([]byte(nil), b...)
		c[i] ^= 0x10
		var q snapshot.Part
		if err := q.UnmarshalBinary(c); err == nil {
			t.Errorf("a blob damaged at byte %d of %d was taken", i, len(b))
		}
	}
	for _, n := range []int{0, 5, 8, 100, len(b) - 1} {
		var q snapshot.Part
		if err := q.UnmarshalBinary(b[:n]); err == nil {
			t.Errorf("a blob cut at %d bytes was taken", n)
		}
	}
}

// FuzzPartUnmarshal: UnmarshalBinary never panics, and a part it takes
// (the checksum skipped) never makes Decode panic or fail.
func FuzzPartUnmarshal(f *testing.F) {
	var buf bytes.Buffer
	if _, err := gen.WriteFamily(&buf, gen.FamilyOptions{Family: gen.DistinctStacks, Iterations: 3000}); err != nil {
		f.Fatal(err)
	}
	data := buf.Bytes()
	size := int64(len(data))
	restore := snapshot.SetPartPrefix(16 << 10)
	opt, _ := snapshot.WithSplitAt(splitOptions(data, 0), data, size/2, nil)
	restore()
	p, err := opt.Split.Part()
	if err != nil {
		f.Fatal(err)
	}
	b, err := p.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte("OOMSPRT1"))
	serial, err := snapshot.Decode(bytes.NewReader(data), size, splitOptions(data, 0))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, blob []byte) {
		defer snapshot.SkipPartChecksum()()
		var q snapshot.Part
		if q.UnmarshalBinary(blob) != nil {
			return
		}
		o := *opt
		sp := *o.Split
		sp.Part = func() (*snapshot.Part, error) { return &q, nil }
		o.Split = &sp
		s, err := snapshot.Decode(bytes.NewReader(data), size, &o)
		if err != nil {
			t.Fatalf("with a fuzzed part: %v", err)
		}
		if bytes.Equal(blob, b) && !snapshot.Equal(serial, s) {
			t.Fatal("the part as marshaled gives another snapshot")
		}
	})
}

// holeFile returns a file of two devices written with each stack once
// (later uses refer to it by memo): device 1 reuses the stacks of device
// 0's last entries, so that a decoder that took a part of device 0's
// trace meets memo ids it does not know and must decode again alone.
// It also has rare keys (compile_context, user_metadata, device_free) and
// a stream and an action first met late.
func holeFile(t *testing.T, back bool) []byte {
	t.Helper()
	s := &snapshot.Snapshot{Protocol: 4}
	for i := range 40 {
		s.Frames = append(s.Frames, snapshot.Frame{Filename: fmt.Sprintf("f%d.py", i%7), Line: int64(i), Name: fmt.Sprintf("fn%d", i)})
	}
	all := make(snapshot.Stack, 40)
	for i := range all {
		all[i] = snapshot.FrameID(i)
	}
	var e0, e1 []snapshot.TraceEntry
	e0 = append(e0, snapshot.TraceEntry{Action: snapshot.ActionAlloc, Addr: 1, Size: 1, Frames: s.Stacks.Add(all)})
	const n = 6000
	ids := make([]snapshot.StackID, n)
	for i := range n {
		st := snapshot.Stack{snapshot.FrameID(i % 40), snapshot.FrameID(i / 40 % 40), snapshot.FrameID(i / 1600), snapshot.FrameID(i % 13)}
		ids[i] = s.Stacks.Add(st)
		e := snapshot.TraceEntry{Action: snapshot.ActionAlloc, Addr: uint64(i) << 9, Size: int64(i), TimeUS: 1e12 + int64(i), Frames: ids[i]}
		switch {
		case i == n-500:
			e.Stream, e.Action, e.CompileContext, e.UserMetadata, e.DeviceFree = 77, "weird_action", "ctx", "meta", 5
		case i%997 == 0:
			e.CompileContext = "c"
		}
		e0 = append(e0, e)
	}
	for i := range 50 {
		id := ids[n-1-i]
		if !back {
			id = s.Stacks.Add(snapshot.Stack{snapshot.FrameID(i % 40), 3, 2, 1, 0}) // 5 frames: none of device 0's
		}
		e1 = append(e1, snapshot.TraceEntry{Action: snapshot.ActionFreeRequested, Addr: uint64(i), Size: 1, Frames: id})
	}
	s.DeviceTraces = []snapshot.Trace{snapshot.TraceOf(e0...), snapshot.TraceOf(e1...)}
	var buf bytes.Buffer
	if err := snapshot.Encode(&buf, s, snapshot.EncodeOptions{Protocol: 4, Format: snapshot.Format210}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSplitHole: a part taken, then a memo id of it met: the decoder must
// decode the file again alone and give the serial result; and with device
// 1 not referring back (a part taken at the end of device 0), the rare
// keys, the late stream and action come through the part.
func TestSplitHole(t *testing.T) {
	defer snapshot.SetPartPrefix(16 << 10)()
	for _, back := range []bool{true, false} {
		t.Run(fmt.Sprintf("back%v", back), func(t *testing.T) { splitHole(t, holeFile(t, back), back) })
	}
}

func splitHole(t *testing.T, data []byte, back bool) {
	size := int64(len(data))
	serial, err := snapshot.Decode(bytes.NewReader(data), size, splitOptions(data, 1))
	if err != nil {
		t.Fatal(err)
	}
	restarted, taken := 0, 0
	for i := int64(1); i < 20; i++ {
		for _, wire := range []bool{false, true} {
			var mangle func(*snapshot.Split, *snapshot.Part, error) (*snapshot.Part, error)
			if wire {
				mangle = marshaled(t)
			}
			opt, res := snapshot.WithSplitAt(splitOptions(data, 1), data, size*i/20, mangle)
			s, err := snapshot.Decode(bytes.NewReader(data), size, opt)
			if err != nil {
				t.Fatal(err)
			}
			snapshot.SplitOutcome(opt, res)
			sameDecode(t, serial, s)
			if (s.SplitBytes() > 0) != (res.Taken && !res.Restarted) {
				t.Fatalf("%d split bytes, taken %v, restarted %v", s.SplitBytes(), res.Taken, res.Restarted)
			}
			if res.Restarted {
				restarted++
			} else if res.Taken {
				taken++
			}
		}
	}
	t.Logf("%d restarted, %d taken", restarted, taken)
	if back && restarted == 0 {
		t.Error("no split met its hole")
	}
	if !back && (restarted > 0 || taken < 20) {
		t.Errorf("%d splits restarted, %d taken, on a file that does not refer back", restarted, taken)
	}
}

// TestSplitByItself: Decode splits by itself (a goroutine running
// DecodePart, its own hash seed shared) on two cores, and the snapshot is
// the serial one; on the real family (stacks that repeat) it is not taken.
func TestSplitByItself(t *testing.T) {
	if !snapshot.Concurrent() {
		t.Skip("one core")
	}
	defer snapshot.SetSplitMin(1 << 20)()
	defer snapshot.SetPartPrefix(256 << 10)()
	for name, data := range splitInputs(t, 3, 6) {
		if strings.HasPrefix(name, "pt") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			size := int64(len(data))
			serial, err := snapshot.Decode(bytes.NewReader(data), size, splitOptions(data, 0))
			if err != nil {
				t.Fatal(err)
			}
			opt, info := snapshot.WithSplitInfo(&snapshot.Options{Source: bytes.NewReader(data), Fold: analysis.Fold()})
			s, err := snapshot.Decode(bytes.NewReader(data), size, opt)
			if err != nil {
				t.Fatal(err)
			}
			sameDecode(t, serial, s)
			if want := strings.HasPrefix(name, "distinct"); snapshot.SplitTaken(info) != want {
				t.Errorf("split taken: %v, want %v", snapshot.SplitTaken(info), want)
			}
		})
	}
}
