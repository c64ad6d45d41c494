package snapshot_test

import (
	"bytes"
	"fmt"
	"testing"

	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
)

// TestReadAheadWindow decodes files through the read-ahead, whose chunks
// become the decoder's window (the unread bytes of one chunk copied into
// the room before the next, or gathered in a buffer of their own when
// they do not fit), with chunks and rooms from the default down to a few
// bytes: the snapshot must equal the one decoded from memory, with every
// stack held and with most stacks in the file, the progress must reach
// the whole file, and a truncated file must give the same error.
func TestReadAheadWindow(t *testing.T) {
	inputs := mixedInputs(t, "pt26_cs336_ctx128_forward.pickle", "pt20_flexgen_oom_snapshot.pickle")
	for _, size := range [][2]int{{1 << 20, 64 << 10}, {4096, 64}, {97, 13}, {7, 3}} {
		t.Run(fmt.Sprintf("chunks of %d, room %d", size[0], size[1]), func(t *testing.T) {
			defer snapshot.SetReadAheadChunk(size[0], size[1])()
			for name, data := range inputs {
				held, err := snapshot.DecodeBytes(data, nil)
				if err != nil {
					t.Fatal(err)
				}
				var done int64
				got, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), snapshot.WithStackWorker(&snapshot.Options{
					Progress: func(d, _ int64) bool { done = d; return true }}, true))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if done != int64(len(data)) {
					t.Fatalf("%s: the last progress is %d bytes, want all %d", name, done, len(data))
				}
				if !snapshot.Equal(held, got) {
					t.Fatalf("%s: decoded through the read-ahead, the snapshot differs: %s", name, snapshot.Diff(held, got))
				}
				lazy := func(worker bool) *snapshot.Snapshot {
					s, err := snapshot.Decode(bytes.NewReader(data), int64(len(data)), snapshot.WithStackWorker(&snapshot.Options{
						Summarize: analysis.Summarizer(), Source: bytes.NewReader(data), HoldFrames: 64}, worker))
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					return s
				}
				if a, b := lazy(false), lazy(true); !snapshot.Equal(a, b) {
					t.Fatalf("%s: with lazy stacks, decoded through the read-ahead, the snapshot differs: %s", name, snapshot.Diff(a, b))
				}
				cut := data[:len(data)*2/3]
				_, want := snapshot.DecodeBytes(cut, nil)
				_, err = snapshot.Decode(bytes.NewReader(cut), int64(len(cut)), snapshot.WithStackWorker(&snapshot.Options{}, true))
				if want == nil || err == nil || err.Error() != want.Error() {
					t.Fatalf("%s cut to 2/3: error %v through the read-ahead, want %v", name, err, want)
				}
			}
		})
	}
}
