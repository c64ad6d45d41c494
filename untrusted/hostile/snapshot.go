package hostile

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"oomscope/snapshot"
	"oomscope/snapshot/gen"
)

// Snapshot returns a small generated snapshot (the generator's "oom"
// scenario: a training run whose last step runs out of memory) in which
// every user Python frame is renamed with all of Names joined (but the
// very long one, and the one that is not UTF-8, which a pickled Python str
// cannot be), each frame starting with a different one: the function
// name becomes that text, and the file name carries it as a directory. So
// every allocation site, stack line, timeline band and segment block shows
// every attack. It also returns the snapshot pickled, for tests that read
// a file.
func Snapshot() (*snapshot.Snapshot, []byte, error) {
	s, _, err := gen.Snapshot(gen.Scenario("oom"))
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, n := range Names() {
		if len(n.Text) < 1000 && utf8.ValidString(n.Text) {
			names = append(names, n.Text)
		}
	}
	k := 0
	for i := range s.Frames {
		f := &s.Frames[i]
		if !strings.HasSuffix(f.Filename, ".py") || strings.Contains(f.Filename, "/torch/") {
			continue
		}
		j := k % len(names)
		n := strings.Join(append(names[j:j:j], append(names[j:], names[:j]...)...), " ")
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
