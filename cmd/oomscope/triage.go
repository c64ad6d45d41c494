package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"oomscope/estimator/triage"
	"oomscope/untrusted"
)

// maxTriageInput bounds what triage reads (a log, not a disk image).
const maxTriageInput = 64 << 20

// runTriage explains the out-of-memory messages in FILE (or stdin): every
// number, the cause with its rule, and the fixes. It exits 1 when the input
// holds no OOM message.
func runTriage(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("triage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	whenFlag := fs.String("when", "", "when it failed: load (or step0), after-steps, long-inputs, eval")
	setupFlag := fs.String("setup", "", "model and setup in /estimate query form, e.g. \"model=llama-3.1-8b&batch=4&seq=4096\": names the tensors whose size matches the failed request (keys: model, batch, seq, dtype, attn)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: oomscope triage [--json] [--when WHEN] [--setup QUERY] [FILE|-]\n\n"+
			"Reads an out-of-memory error (a whole traceback or log is fine) from FILE or stdin\n"+
			"and explains every message in it: the numbers, the cause and the fixes.\n"+
			"Exit codes: 0 found, 1 no OOM message found, 2 bad usage or input, 3 internal error.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	files, code, ok := parseInterspersed(fs, args, stdout)
	if !ok {
		return code
	}
	if len(files) > 1 {
		fmt.Fprintf(stderr, "oomscope triage: want one FILE (or -), got %d: %s\n", len(files), untrusted.Line(strings.Join(files, " ")))
		return exitBadInput
	}
	when, err := triage.ParseWhen(*whenFlag)
	if err != nil {
		fmt.Fprintf(stderr, "oomscope triage: %v\n", err)
		return exitBadInput
	}
	opt := triage.Options{When: when}
	if *setupFlag != "" {
		q, err := url.ParseQuery(*setupFlag)
		if err != nil {
			fmt.Fprintf(stderr, "oomscope triage: --setup: %v\n", err)
			return exitBadInput
		}
		r, err := triage.ParseSetup(q, true)
		if err == nil && r == nil {
			err = errors.New("a setup needs a model, e.g. model=llama-3.1-8b")
		}
		if err != nil {
			fmt.Fprintf(stderr, "oomscope triage: --setup: %v\n", err)
			return exitBadInput
		}
		opt.Setup = r
	}
	in, name := stdin, "stdin"
	if len(files) == 1 && files[0] != "-" {
		fh, err := os.Open(files[0])
		if err != nil {
			fmt.Fprintf(stderr, "oomscope triage: %s\n", untrusted.Line(err.Error()))
			return exitBadInput
		}
		defer fh.Close()
		in, name = fh, untrusted.Line(files[0])
	}
	if in == nil {
		fmt.Fprintln(stderr, "oomscope triage: no input (give a FILE or pipe the error into stdin)")
		return exitBadInput
	}
	data, err := io.ReadAll(io.LimitReader(in, maxTriageInput+1))
	if err != nil {
		fmt.Fprintf(stderr, "oomscope triage: reading %s: %v\n", name, err)
		return exitBadInput
	}
	if len(data) > maxTriageInput {
		fmt.Fprintf(stderr, "oomscope triage: %s is larger than %d MiB; paste the part around the error\n", name, maxTriageInput>>20)
		return exitBadInput
	}
	res := triage.Triage(string(data), opt)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(stderr, "oomscope triage: %v\n", err)
			return exitBadInput
		}
	} else {
		writeTriageText(stdout, res)
	}
	if len(res.Findings) == 0 {
		if !*asJSON {
			fmt.Fprintf(stderr, "oomscope triage: no out-of-memory message found in %s\n", name)
		}
		return exitCheck
	}
	return exitOK
}

// writeTriageText prints a Result for a terminal.
func writeTriageText(w io.Writer, res triage.Result) {
	if len(res.Findings) == 0 {
		fmt.Fprintln(w, "No out-of-memory message found.")
		return
	}
	plural := "s"
	if len(res.Findings) == 1 {
		plural = ""
	}
	fmt.Fprintf(w, "Found %d out-of-memory message%s.", len(res.Findings), plural)
	if res.Truncated {
		fmt.Fprint(w, " (More were left out.)")
	}
	fmt.Fprintln(w)
	for i, f := range res.Findings {
		fmt.Fprintf(w, "\n#%d %s", i+1, f.Kind)
		if f.Variant != "" {
			fmt.Fprintf(w, " [%s]", untrusted.Line(f.Variant))
		}
		if f.PyTorchVersion != "" {
			fmt.Fprintf(w, " PyTorch %s", f.PyTorchVersion)
		}
		fmt.Fprintf(w, ", bytes %d-%d of the input\n", f.Start, f.End)
		if f.DuplicateOf != nil {
			fmt.Fprintf(w, "  Same text as #%d.\n", *f.DuplicateOf+1)
		}
		fmt.Fprintf(w, "  %s\n", clip(oneLine(f.Text), 160))
		if len(f.Fields) > 0 {
			fmt.Fprintln(w, "  Numbers:")
			for _, fd := range f.Fields {
				val := untrusted.Line(fd.Printed)
				if fd.Bytes != nil {
					val = fmt.Sprintf("%s = %s B", val, fd.Bytes)
				}
				fmt.Fprintf(w, "    %-40s %-36s from %q\n", fd.Label, val, clip(oneLine(fd.Phrase), 70))
			}
		}
		if len(f.Derived) > 0 {
			fmt.Fprintln(w, "  Derived:")
			for _, d := range f.Derived {
				fmt.Fprintf(w, "    %-28s %14d B   %s\n", d.Name, d.Bytes, d.Formula)
			}
		}
		fmt.Fprintf(w, "  Cause: %s\n    Rule: %s\n    Why:  %s\n", f.Cause, f.Rule, untrusted.Line(f.Why))
		if m := f.TensorMatches; m != nil {
			fmt.Fprintln(w, "  Tensors of the setup matching the request:")
			for _, t := range m.Matches {
				fmt.Fprintf(w, "    %s: %s B (%s); %s\n", t.Name, fmt.Sprint(t.Bytes), t.Formula, t.Rounding)
			}
			if m.Note != "" {
				fmt.Fprintf(w, "    %s\n", m.Note)
			}
		}
		if l := f.Estimator; l != nil {
			fmt.Fprintf(w, "  Open in the estimator: /estimate?%s\n", l.Query)
			for i, p := range l.Params {
				fmt.Fprintf(w, "    %s=%s: %s\n", p[0], p[1], untrusted.Line(l.Reasons[i]))
			}
			for _, c := range l.Compare {
				fmt.Fprintf(w, "    Compare with the estimate's %s: %s printed %s\n", c.Key, c.Label, untrusted.Line(c.Printed))
			}
			for _, n := range l.Notes {
				fmt.Fprintf(w, "    Note: %s\n", untrusted.Line(n))
			}
		}
		fmt.Fprintln(w, "  Fixes, cheapest first:")
		for j, fx := range f.Fixes {
			fmt.Fprintf(w, "    %d. %s (%s)\n       %s\n", j+1, fx.Title, fx.Reason, fx.Why)
			for _, line := range strings.Split(fx.Code, "\n") {
				fmt.Fprintf(w, "         %s\n", line)
			}
		}
	}
}

// oneLine makes pasted text one line with single spaces, safe for a
// terminal (untrusted.Line).
func oneLine(s string) string { return strings.Join(strings.Fields(untrusted.Line(s)), " ") }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
