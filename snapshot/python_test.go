package snapshot

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// pyScript reads {"src", "proto"} lines, evaluates src as a Python literal
// (or loads the file named by "path") and prints the hex pickle.
const pyScript = `
import ast, json, pickle, sys
for line in sys.stdin:
    req = json.loads(line)
    if "path" in req:
        with open(req["path"], "rb") as f:
            v = pickle.load(f)
    else:
        v = ast.literal_eval(req["src"])
    print(pickle.dumps(v, protocol=req["proto"]).hex())
`

// python pickles each request with CPython, or skips the test when python3
// is not installed.
func python(t *testing.T, reqs []map[string]any) [][]byte {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	var in bytes.Buffer
	for _, r := range reqs {
		b, _ := json.Marshal(r)
		in.Write(append(b, '\n'))
	}
	cmd := exec.Command(py, "-c", pyScript)
	cmd.Stdin = &in
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("python3: %v\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(reqs) {
		t.Fatalf("python3 answered %d lines for %d requests", len(lines), len(reqs))
	}
	res := make([][]byte, len(lines))
	for i, l := range lines {
		if res[i], err = hex.DecodeString(l); err != nil {
			t.Fatal(err)
		}
	}
	return res
}

// pyLiteral writes v as Python source that ast.literal_eval reads back.
func pyLiteral(v Value) string {
	switch t := v.(type) {
	case nil:
		return "None"
	case bool:
		if t {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(t, 10)
	case *big.Int:
		return t.String()
	case float64:
		switch {
		case math.IsInf(t, 1):
			return "1e999"
		case math.IsInf(t, -1):
			return "-1e999"
		}
		return pyFloatRepr(t)
	case string:
		return strconv.QuoteToASCII(t)
	case []byte:
		var b strings.Builder
		b.WriteString(`b"`)
		for _, c := range t {
			fmt.Fprintf(&b, `\x%02x`, c)
		}
		return b.String() + `"`
	case List:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = pyLiteral(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case Tuple:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = pyLiteral(x)
		}
		if len(t) == 1 {
			return "(" + parts[0] + ",)"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case Dict:
		parts := make([]string, len(t))
		for i, it := range t {
			parts[i] = pyLiteral(it.Key) + ": " + pyLiteral(it.Value)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	panic(fmt.Sprintf("pyLiteral: %T", v))
}

// TestPythonPickles decodes values pickled by CPython at protocols 0-5
// with the fast decoder and (protocols 1-5) the gopickle reference.
func TestPythonPickles(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 14))
	var vals []Value
	var reqs []map[string]any
	for i := range 120 {
		proto := i % 6
		v := randomValue(r, 0, proto >= 3)
		vals = append(vals, v)
		reqs = append(reqs, map[string]any{"src": pyLiteral(v), "proto": proto})
	}
	for i, data := range python(t, reqs) {
		proto := reqs[i]["proto"].(int)
		got, err := DecodeValue(data)
		if err != nil {
			t.Fatalf("value %d protocol %d: %v", i, proto, err)
		}
		if !sameValue(got, vals[i]) {
			t.Fatalf("value %d protocol %d: decoded %v, want %v", i, proto, got, vals[i])
		}
		if proto == 0 {
			continue // gopickle v0.2.0 does not decode UNICODE's raw-unicode-escape
		}
		ref, err := referenceValue(data)
		if err != nil {
			t.Fatalf("value %d protocol %d: reference: %v", i, proto, err)
		}
		if !sameValue(ref, vals[i]) {
			t.Fatalf("value %d protocol %d: reference decoded %v", i, proto, ref)
		}
	}
}

// TestPythonRepickledSnapshots has CPython load each real snapshot and dump
// it again at protocols 0-5 (5 is Python 3.14's default): every version
// must decode to the same snapshot as the original file.
func TestPythonRepickledSnapshots(t *testing.T) {
	var reqs []map[string]any
	for _, rf := range realFiles {
		for proto := range 6 {
			reqs = append(reqs, map[string]any{"path": realDir + "/" + rf.name, "proto": proto})
		}
	}
	readReal(t, realFiles[0].name) // skip when the shared files are missing
	out := python(t, reqs)
	for i, data := range out {
		rf := realFiles[i/6]
		proto := i % 6
		want, err := DecodeBytes(readReal(t, rf.name), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeBytes(data, nil)
		if err != nil {
			t.Fatalf("%s protocol %d: %v", rf.name, proto, err)
		}
		want.Protocol = got.Protocol
		if !Equal(got, want) {
			t.Errorf("%s protocol %d: %s", rf.name, proto, Diff(want, got))
		}
		if proto >= 2 && got.Protocol != proto {
			t.Errorf("%s protocol %d: decoded protocol %d", rf.name, proto, got.Protocol)
		}
	}
}
