package hostile

import (
	"bytes"
	"strings"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// Snapshot returns a small generated snapshot (the generator's "oom"
// scenario: a training run whose last step runs out of memory) in which
// every user Python frame is renamed after one of Names, in turn: the
// function name becomes the hostile name, and the file name carries it as a
// directory. Its allocation sites, stacks, timeline bands and segment
// blocks all show hostile text. It also returns the snapshot pickled, for
// tests that read a file.
func Snapshot() (*snapshot.Snapshot, []byte, error) {
	s, _, err := gen.Snapshot(gen.Scenario("oom"))
	if err != nil {
		return nil, nil, err
	}
	names := Names()
	k := 0
	for i := range s.Frames {
		f := &s.Frames[i]
		if !strings.HasSuffix(f.Filename, ".py") || strings.Contains(f.Filename, "/torch/") {
			continue
		}
		n := names[k%len(names)].Text
		f.Name = n
		f.Filename = "/home/user/" + n + "/model.py"
		k++
	}
	var b bytes.Buffer
	if err := snapshot.Encode(&b, s, snapshot.EncodeOptions{Protocol: 4}); err != nil {
		return nil, nil, err
	}
	return s, b.Bytes(), nil
}
