// Command gensnapshot writes a synthetic CUDA memory snapshot from
// oomscope/snapshot/gen, with its known truth as JSON, for end-to-end tests
// and browser benchmarks.
//
// Usage:
//
//	gensnapshot [-scenario NAME] [-mb N] [-protocol P] [-seed S] [-truth FILE] -o FILE
//	gensnapshot -family real|distinct (-mb N | -n ITERATIONS) [-seed S] -o FILE
//	gensnapshot -list
//
// -family writes a benchmark file (gen.WriteFamily) as a stream: a 1 GB
// file needs little memory.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"oomscope/snapshot/gen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gensnapshot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scenario := fs.String("scenario", "training", "scenario name (see -list)")
	mb := fs.Int("mb", 0, "grow the run until the file is about this many MB (0: the scenario's size)")
	protocol := fs.Int("protocol", 0, "pickle protocol 1-5 (0: the scenario's, usually 4)")
	seed := fs.Uint64("seed", 0, "random seed (0: the scenario's)")
	out := fs.String("o", "", "output file (required)")
	truthFile := fs.String("truth", "", "also write the truth as JSON to this file")
	list := fs.Bool("list", false, "list the scenarios and exit")
	family := fs.String("family", "", "write a benchmark family file instead: real (300 repeated stacks) or distinct (nearly every stack distinct)")
	iterations := fs.Int("n", 0, "with -family: iterations (instead of -mb)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *list {
		for _, n := range gen.Scenarios() {
			fmt.Fprintln(stdout, n)
		}
		return 0
	}
	if *out == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "gensnapshot: -o FILE is required")
		fs.Usage()
		return 2
	}
	if *family != "" {
		return writeFamily(*out, gen.FamilyOptions{Family: gen.Family(*family), Iterations: *iterations,
			TargetBytes: int64(*mb) << 20, Seed: *seed}, stdout, stderr)
	}
	known := false
	for _, n := range gen.Scenarios() {
		known = known || n == *scenario
	}
	if !known {
		fmt.Fprintf(stderr, "gensnapshot: unknown scenario %q (see -list)\n", *scenario)
		return 2
	}
	opt := gen.Scenario(*scenario)
	if *mb > 0 {
		opt.TargetBytes = int64(*mb) << 20
	}
	if *protocol != 0 {
		opt.Protocol = *protocol
	}
	if *seed != 0 {
		opt.Seed = *seed
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(stderr, "gensnapshot:", err)
		return 1
	}
	truth, err := gen.Generate(f, opt)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(stderr, "gensnapshot:", err)
		return 1
	}
	if *truthFile != "" {
		b, err := json.MarshalIndent(truth, "", "  ")
		if err == nil {
			err = os.WriteFile(*truthFile, append(b, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintln(stderr, "gensnapshot:", err)
			return 1
		}
	}
	fmt.Fprintf(stdout, "%s: %d bytes, %d steps\n", *out, truth.Bytes, truth.Steps)
	return 0
}

// writeFamily writes a benchmark family file.
func writeFamily(out string, opt gen.FamilyOptions, stdout, stderr io.Writer) int {
	f, err := os.Create(out)
	if err != nil {
		fmt.Fprintln(stderr, "gensnapshot:", err)
		return 1
	}
	info, err := gen.WriteFamily(f, opt)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(stderr, "gensnapshot:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d bytes, %d iterations, %d entries\n", out, info.Bytes, info.Iterations, info.Entries)
	return 0
}
