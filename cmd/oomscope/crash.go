package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"syscall"

	"oomscope/untrusted"
)

// A crash is not a refusal: bad input exits 2 with a message that says
// what is wrong with the input, while a bug in oomscope (a panic, or a
// fatal runtime error such as running out of memory or stack) exits 3 with
// "internal error, please file an issue". Go itself exits 2 on a fatal
// error and cannot recover from one, so main runs the command in a child
// process (the same executable) and watches it: the child's runtime writes
// any crash report to a pipe (debug.SetCrashOutput), and the parent turns a
// child that crashed into exit 3. Panics on the command's own goroutine are
// recovered in run (recoverInternal), which knows which input was being
// read and how far.

// childEnv marks the child process that runs the command.
const childEnv = "OOMSCOPE_CLI_CHILD"

// supervise runs this command line in a child process and returns the exit
// code to use: the child's, or exitInternal when it crashed. ok is false
// when no child could be started (the caller then runs the command itself).
func supervise() (code int, ok bool) {
	if os.Getenv(childEnv) != "" || runtime.GOOS == "windows" {
		return 0, false // ExtraFiles (the crash pipe) needs a Unix
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, false
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return 0, false
	}
	defer pr.Close()
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{pw} // fd 3 in the child
	// Signals sent to this process go to the child; a Ctrl-C in a terminal
	// reaches both, and the child's exit decides.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		pw.Close()
		return 0, false
	}
	pw.Close()
	report := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(pr, 1<<20))
		report <- b
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for waiting := true; waiting; {
		select {
		case s := <-sigs:
			cmd.Process.Signal(s)
		case <-done:
			waiting = false
		}
	}
	crash := <-report
	st := cmd.ProcessState
	switch {
	case len(crash) > 0:
		// The runtime printed the crash report to stderr already.
		fmt.Fprintf(os.Stderr, "\noomscope: internal error, please file an issue with the command line and the report above (oomscope %s).\n", versionString())
		return exitInternal, true
	case st.Exited():
		return st.ExitCode(), true
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), true // as a shell reports it
	}
	return exitInternal, true
}

// watchCrashes, in the child, sends the runtime's crash reports to the
// parent's pipe (fd 3).
func watchCrashes() {
	if os.Getenv(childEnv) == "" {
		return
	}
	if f := os.NewFile(3, "crash-report"); f != nil {
		debug.SetCrashOutput(f, debug.CrashOptions{})
		f.Close()
	}
}

// input is the input being read, for the internal-error report (the
// snapshot command sets it from load.InternalError: repanic).
type input struct {
	name string
	n    atomic.Int64
}

var current atomic.Pointer[input]

// recoverInternal turns a panic of a command into exit 3 and a report that
// asks for an issue: the panic, where the input reading was, the version
// and the stack. Use it as defer recoverInternal(&code, stderr).
func recoverInternal(code *int, stderr io.Writer) {
	r := recover()
	if r == nil {
		return
	}
	where := ""
	if in := current.Load(); in != nil {
		where = fmt.Sprintf(" while reading %s (at byte %d of it, counting read-ahead)", untrusted.Line(in.name), in.n.Load())
	}
	fmt.Fprintf(stderr, "oomscope: internal error%s: %s\n\nPlease file an issue with the command line, this report and, if you can share it, the input (oomscope %s).\n\n%s",
		where, untrusted.Line(fmt.Sprint(r)), versionString(), debug.Stack())
	*code = exitInternal
}
