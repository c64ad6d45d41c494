package snapshot

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
)

// pk builds a protocol-4 pickle from opcode bytes and adds STOP.
func pk(parts ...string) []byte {
	return []byte("\x80\x04" + strings.Join(parts, "") + ".")
}

// minimal is the smallest valid snapshot: {'segments': []}.
var minimal = pk("}", "\x8c\x08segments", "]", "s")

func TestDecodeErrors(t *testing.T) {
	real := readReal(t, "pt26_cs336_ctx128_forward.pickle")
	tests := []struct {
		name string
		in   []byte
		kind error
		msg  string // substring of the message
	}{
		{"empty", nil, ErrEmpty, "empty"},
		{"json", []byte(` {"segments": []}`), ErrNotPickle, "JSON"},
		{"json list", []byte("[1,2]"), ErrNotPickle, "JSON"},
		{"html", []byte("<!DOCTYPE html><html>"), ErrNotPickle, "HTML"},
		{"zip", []byte("PK\x03\x04rest"), ErrNotPickle, "zip"},
		{"text", []byte("hello world"), ErrNotPickle, `"hello world"`},
		{"binary", []byte{0x01, 0x02, 0xfe}, ErrNotPickle, "0x01"},
		{"truncated header", []byte("\x80"), ErrTruncated, "needs 1 bytes"},
		{"truncated real file", real[:len(real)/2], ErrTruncated, "truncated"},
		{"truncated before stop", real[:len(real)-1], ErrTruncated, "truncated"},
		{"no stop", []byte("\x80\x02N"), ErrTruncated, "STOP"},
		{"truncated gzip", gz(real)[:1000], ErrTruncated, "gzip"},
		{"protocol 6", []byte("\x80\x06N."), ErrCorrupt, "protocol 6"},
		{"global", pk("c__builtin__\neval\n"), ErrUnsafe, "GLOBAL"},
		{"stack_global", pk("\x8c\x01a\x8c\x01b\x93"), ErrUnsafe, "STACK_GLOBAL"},
		{"reduce", pk("N)R"), ErrUnsafe, "REDUCE"},
		{"build", pk("}}b"), ErrUnsafe, "BUILD"},
		{"newobj", pk("N)\x81"), ErrUnsafe, "NEWOBJ"},
		{"newobj_ex", pk("N)}\x92"), ErrUnsafe, "NEWOBJ_EX"},
		{"inst", pk("(ia\nb\n"), ErrUnsafe, "INST"},
		{"obj", pk("(No"), ErrUnsafe, "OBJ"},
		{"persid", pk("P1\n"), ErrUnsafe, "PERSID"},
		{"binpersid", pk("NQ"), ErrUnsafe, "BINPERSID"},
		{"ext1", pk("\x82\x01"), ErrUnsafe, "EXT1"},
		{"bytearray8", pk("\x96\x00\x00\x00\x00\x00\x00\x00\x00"), ErrUnsafe, "BYTEARRAY8"},
		{"next_buffer", pk("\x97"), ErrUnsafe, "NEXT_BUFFER"},
		{"set", pk("\x8f"), ErrUnsafe, "EMPTY_SET"},
		{"unknown opcode", pk("\xff"), ErrCorrupt, "unknown opcode 0xff"},
		{"huge string length", pk("X\xff\xff\xff\x7f"), ErrTruncated, "needs 2147483647 bytes"},
		{"huge binunicode8", pk("\x8d\xff\xff\xff\xff\xff\xff\xff\xff"), ErrTruncated, "bytes"},
		{"huge frame", []byte("\x80\x04\x95\x00\x00\x00\x00\x00\x01\x00\x00N."), ErrTruncated, "frame of"},
		{"negative long4", pk("\x8b\xff\xff\xff\xff"), ErrCorrupt, "negative length"},
		{"bad utf8", pk("\x8c\x01\xff"), ErrCorrupt, "UTF-8"},
		{"stack underflow", pk("a"), ErrCorrupt, "underflow"},
		{"append to int", pk("K\x01K\x02a"), ErrCorrupt, "APPEND to a int"},
		{"setitem on list", pk("]K\x01K\x02s"), ErrCorrupt, "SETITEM on a list"},
		{"missing memo", pk("h\x05"), ErrCorrupt, "memo entry 5"},
		{"missing mark", pk("e"), ErrCorrupt, "no MARK"},
		{"two values at stop", pk("NN"), ErrCorrupt, "2 values"},
		{"open mark at stop", pk("(N"), ErrCorrupt, "open MARK"},
		{"deep marks", pk(strings.Repeat("(", maxMarks+1)), ErrCorrupt, "nested MARKs"},
		{"top int", pk("K\x01"), ErrShape, "single int"},
		{"top str", pk("\x8c\x01a"), ErrShape, "single str"},
		{"top empty dict", pk("}"), ErrShape, "empty dict"},
		{"no segments key", pk("}\x8c\x01aK\x01s"), ErrShape, "no 'segments' key (keys: a)"},
		{"segments not a list", pk("}\x8c\x08segmentsK\x01s"), ErrShape, "expected a list"},
		{"total_size a str", pk("}\x8c\x08segments](}(\x8c\x0atotal_size\x8c\x01xues"), ErrShape, `"total_size": expected an int, got str`},
		{"address too big", pk("}\x8c\x08segments](}(\x8c\x0atotal_size\x8a\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01ues"), ErrShape, "does not fit in 64 bits"},
		{"segment an int", pk("}\x8c\x08segments]K\x01as"), ErrShape, `"segments": expected a list of segment dicts, got int`},
		{"segment a list", pk("}\x8c\x08segments]]as"), ErrShape, `"segments": expected a list of segment dicts, got list`},
		{"blocks an int", pk("}\x8c\x08segments](}\x8c\x06blocksK\x01sas"), ErrShape, `"blocks": expected a list, got int`},
		{"generic segment total_size a str", pk("}\x8c\x08segments]}\x8c\x01xK\x01s\x8c\x0atotal_size\x8c\x01ysas"), ErrShape, `"total_size": expected an int, got str`},
		{"trace entry an int", pk("}(\x8c\x08segments]\x8c\x0ddevice_traces](]K\x01aeu"), ErrShape, `"device_traces": expected lists of trace-entry dicts, got int`},
		{"entry size a list", pk("}(\x8c\x08segments]\x8c\x0ddevice_traces](](}(\x8c\x06action\x8c\x05alloc\x8c\x04size]uaeaeu"), ErrShape, `"size": expected an int, got list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := DecodeBytes(tt.in, nil)
			if err == nil {
				t.Fatalf("no error, got %+v", s)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("error %q is not %v", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not mention %q", err, tt.msg)
			}
		})
	}
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func TestDecodeGzip(t *testing.T) {
	real := readReal(t, "pt26_cs336_ctx128_forward.pickle")
	want, err := DecodeBytes(real, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBytes(gz(real), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Segments) != len(want.Segments) || got.DeviceTraces[0].Len() != want.DeviceTraces[0].Len() {
		t.Errorf("gzip decode: %d segments %d entries, want %d %d", len(got.Segments), got.DeviceTraces[0].Len(),
			len(want.Segments), want.DeviceTraces[0].Len())
	}
}

func TestDecodeEdgeValues(t *testing.T) {
	// Trailing NUL padding after STOP is ignored, the 9-byte LONG1 2^64-1
	// reads as -1 in int64 fields and as 2^64-1 in address fields, a
	// negative address wraps, and the legacy bare-list form is accepted.
	long9 := "\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00"
	in := append(pk("}(\x8c\x08segments](}(",
		"\x8c\x07address", long9,
		"\x8c\x0atotal_size", long9,
		"\x8c\x06stream", "J\xff\xff\xff\xff",
		"\x8c\x06blocks](}(\x8c\x04size", long9, "\x8c\x05state\x8c\x08inactiveue",
		"ue",
		"\x8c\x0ddevice_traces](](}(\x8c\x06action\x8c\x03oom\x8c\x0bdevice_free\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80\x8c\x04size", long9, "ueeu"),
		0, 0, 0)
	s, err := DecodeBytes(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := s.Segments[0]
	if g.Address != ^uint64(0) || g.TotalSize != -1 || g.Stream != ^uint64(0) {
		t.Errorf("segment = %+v", g)
	}
	if b := g.Blocks[0]; !b.AddressComputed || b.Address != g.Address || b.Size != -1 {
		t.Errorf("block = %+v", b)
	}
	e := s.DeviceTraces[0].Entry(0)
	if e.Action != ActionOOM || e.DeviceFree != -1<<63 || e.Size != -1 || e.Frames != NoStack {
		t.Errorf("entry = %+v", e)
	}
	ref, err := DecodeReferenceBytes(in)
	if err != nil {
		t.Fatal(err)
	}
	if !Equal(ref, s) {
		t.Errorf("reference differs: %s", Diff(ref, s))
	}

	legacy, err := DecodeBytes(pk("](}(\x8c\x07addressK\x10\x8c\x0atotal_sizeK\x20ue"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !legacy.Legacy || len(legacy.Segments) != 1 || legacy.Segments[0].TotalSize != 32 {
		t.Errorf("legacy = %+v", legacy)
	}

	v, err := DecodeValue(pk(long9[:2] + "\x00\x00\x00\x00\x00\x00\x00\x00\x01"))
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := v.(*big.Int); !ok || b.String() != "18446744073709551616" {
		t.Errorf("2^64 decoded as %v", v)
	}
}

func TestDecodeProgressAndCancel(t *testing.T) {
	real := readReal(t, "pt26_cs336_ctx128_fullstep.pickle")
	var calls []int64
	s, err := DecodeBytes(real, &Options{ProgressEvery: 256 << 10, Progress: func(done, total int64) bool {
		if total != int64(len(real)) {
			t.Errorf("total = %d, want %d", total, len(real))
		}
		calls = append(calls, done)
		return true
	}})
	if err != nil || s == nil {
		t.Fatal(err)
	}
	if len(calls) < len(real)/(256<<10) || calls[len(calls)-1] != int64(len(real)) {
		t.Errorf("progress calls %v", calls)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i] <= calls[i-1] {
			t.Errorf("progress not increasing: %v", calls)
		}
	}

	n := 0
	_, err = DecodeBytes(real, &Options{ProgressEvery: 64 << 10, Progress: func(done, total int64) bool {
		n++
		return n < 3
	}})
	if !errors.Is(err, ErrCanceled) || n != 3 {
		t.Errorf("callback cancel: err %v after %d calls", err, n)
	}

}

// TestSharedReferencesDoNotExplode builds a list that contains the
// previous list twice, 60 levels deep (2^60 values if copied): decoding must
// fail fast, not hang.
func TestSharedReferencesDoNotExplode(t *testing.T) {
	var b strings.Builder
	b.WriteString("]\x940") // memo 0: []
	for i := range 60 {
		// [memo[i], memo[i]] -> memo i+1, popped but the last
		b.WriteString("](h" + string(rune(i)) + "h" + string(rune(i)) + "e\x94")
		if i < 59 {
			b.WriteString("0")
		}
	}
	in := pk(b.String())
	if _, err := DecodeValue(in); !errors.Is(err, ErrTooLarge) {
		t.Errorf("err = %v", err)
	}
	// Inside a snapshot's unknown key the same.
	if _, err := DecodeBytes(pk("}(\x8c\x08segments]\x8c\x01x", b.String(), "u"), nil); !errors.Is(err, ErrTooLarge) {
		t.Errorf("snapshot err = %v", err)
	}
}

// TestTextHint: a text file that starts like a protocol 0 pickle ('(')
// fails as a corrupt pickle and says it looks like text.
func TestTextHint(t *testing.T) {
	for _, in := range []string{"(see the notes below)\nmore text\n", "]not a pickle"} {
		_, err := DecodeBytes([]byte(in), nil)
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), "looks like text") {
			t.Errorf("%q: %v", in, err)
		}
		_, err = Decode(strings.NewReader(in), -1, nil)
		if !strings.Contains(fmt.Sprint(err), "looks like text") {
			t.Errorf("%q streamed: %v", in, err)
		}
	}
	if _, err := DecodeBytes([]byte("\x80\x04N"), nil); strings.Contains(err.Error(), "looks like text") {
		t.Errorf("a binary pickle got the text hint: %v", err)
	}
}
