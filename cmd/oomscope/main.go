// Command oomscope runs OOMScope's analyses from a terminal or CI job: the
// memory estimator, OOM message triage and snapshot analysis, over the same
// packages the web site uses.
//
// Usage:
//
//	oomscope <command> [flags] [args]
//
// Every command takes --json for machine-readable output. Exit codes: 0 ok,
// 1 a check failed (does not fit, over budget, no OOM found), 2 bad usage or
// bad input, 3 an internal error (a bug: please file an issue).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Exit codes shared by every subcommand.
const (
	exitOK       = 0
	exitCheck    = 1
	exitBadInput = 2
	exitInternal = 3
)

// command is one subcommand of the CLI.
type command struct {
	name    string
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"estimate", "estimate GPU memory for a model and a training or inference setup", runEstimate},
		{"triage", "explain a CUDA out-of-memory error message (FILE or - for stdin)", runTriage},
		{"snapshot", "analyse a torch.cuda.memory._dump_snapshot() pickle", runSnapshot},
		{"version", "print the version", runVersion},
	}
}

func main() {
	if code, ok := supervise(); ok {
		os.Exit(code)
	}
	watchCrashes()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches args to a subcommand and returns the process exit code;
// a panic in the subcommand becomes exitInternal (crash.go).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer recoverInternal(&code, stderr)
	if len(args) == 0 {
		usage(stderr)
		return exitBadInput
	}
	switch args[0] {
	case "-h", "--help", "help":
		usage(stdout)
		return exitOK
	case "-v", "--version":
		return runVersion(nil, stdin, stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "oomscope: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitBadInput
}

// parseInterspersed parses flags that may come before, between or after the
// positional arguments ("triage --json log.txt" and "triage log.txt --json"),
// which package flag alone stops at. It returns the positional arguments;
// when ok is false the caller returns code (0 after -h, 2 on a bad flag).
func parseInterspersed(fs *flag.FlagSet, args []string, stdout io.Writer) (positional []string, code int, ok bool) {
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stdout)
				fs.Usage()
				return nil, exitOK, false
			}
			return nil, exitBadInput, false
		}
		rest = fs.Args()
		if len(rest) == 0 {
			return positional, exitOK, true
		}
		positional = append(positional, rest[0])
		rest = rest[1:]
	}
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "OOMScope: find out why a GPU runs out of memory.\n\nUsage:\n  oomscope <command> [flags] [args]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'oomscope <command> -h' for the flags of a command. Every command takes --json.\nExit codes: 0 ok, 1 check failed, 2 bad usage or input, 3 internal error (please file an issue).\n")
}
