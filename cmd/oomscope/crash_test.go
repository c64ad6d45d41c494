package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"oomscope/snapshot/gen"
)

// asCLI makes the test binary act as the oomscope executable when set, so
// that the tests below run main() (and its child process) for real.
const asCLI = "OOMSCOPE_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLI) != "" {
		// crash-stack exists only here: a child that dies of a fatal runtime
		// error (stack overflow), which no recover can catch.
		if len(os.Args) > 1 && os.Args[1] == "crash-stack" && os.Getenv(childEnv) != "" {
			watchCrashes()
			debug.SetMaxStack(1 << 20)
			os.Exit(recurse(0))
		}
		main()
	}
	os.Exit(m.Run())
}

// recurse never returns: it overflows the stack, a fatal error.
func recurse(n int) int {
	if n < 0 {
		return 0
	}
	return recurse(n+1) + 1
}

// cli runs the test binary as oomscope with args and stdin.
func cli(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the crash supervisor needs a Unix")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// TestCrashIsNotRefusal: a fatal runtime error in the command exits 3 with
// a request to file an issue, while bad input and bad usage keep exit 2
// and a normal run keeps its code and output, through the child process.
func TestCrashIsNotRefusal(t *testing.T) {
	code, _, errs := cli(t, "", "crash-stack")
	if code != exitInternal || !strings.Contains(errs, "internal error, please file an issue") || !strings.Contains(errs, "stack overflow") {
		t.Errorf("fatal error: exit %d, stderr %.400q", code, errs)
	}
	code, _, errs = cli(t, "this is not a pickle\n", "snapshot", "-")
	if code != exitBadInput || !strings.Contains(errs, "not a readable memory snapshot") || strings.Contains(errs, "internal error") {
		t.Errorf("bad input: exit %d, stderr %q", code, errs)
	}
	code, _, errs = cli(t, "", "version", "--bogus")
	if code != exitBadInput {
		t.Errorf("bad flag: exit %d, stderr %q", code, errs)
	}
	code, out, errs := cli(t, "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity; 3.40 GiB already allocated; 4.00 MiB free; 3.45 GiB reserved in total by PyTorch)\n", "triage", "-")
	if code != exitOK || !strings.Contains(out, "Found 1 out-of-memory message") {
		t.Errorf("triage through stdin: exit %d, stdout %.200q, stderr %q", code, out, errs)
	}
	code, _, _ = cli(t, "no oom here\n", "triage", "-")
	if code != exitCheck {
		t.Errorf("triage without a message: exit %d, want %d", code, exitCheck)
	}
}

// panicReader delivers the first n bytes of data, then panics, as a bug
// in a reader or decoder would.
type panicReader struct {
	data []byte
	n    int
}

func (p *panicReader) Read(b []byte) (int, error) {
	if p.n <= 0 {
		panic("reader bug")
	}
	k := copy(b, p.data[:min(len(b), p.n, len(p.data))])
	p.data, p.n = p.data[k:], p.n-k
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

// TestPanicIsInternalError: a panic in a command is recovered at the top,
// exits 3, and says which input was being read and how far.
func TestPanicIsInternalError(t *testing.T) {
	var errb bytes.Buffer
	// A nil stdout makes the version command panic.
	if code := run([]string{"version"}, nil, nil, &errb); code != exitInternal || !strings.Contains(errb.String(), "internal error") {
		t.Errorf("panic in version: exit %d, stderr %q", code, errb.String())
	}
	data, _, err := gen.Bytes(gen.Scenario("training"))
	if err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	code := run([]string{"snapshot", "-"}, &panicReader{data: data, n: 3000}, io.Discard, &errb)
	msg := errb.String()
	if code != exitInternal || !strings.Contains(msg, "internal error while reading - (at byte 3000 of it") || !strings.Contains(msg, "reader bug") {
		t.Errorf("panic while decoding: exit %d, stderr %.300q", code, msg)
	}
	if !strings.Contains(msg, "please file an issue") && !strings.Contains(msg, "Please file an issue") {
		t.Errorf("the report does not ask for an issue: %.300q", msg)
	}
}
