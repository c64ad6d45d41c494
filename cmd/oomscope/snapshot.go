package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"oomscope/bytesize"
	"oomscope/snapshot"
	"oomscope/snapshot/analysis"
	"oomscope/untrusted"
)

// snapshotFile is one analysed snapshot file.
type snapshotFile struct {
	name string
	an   *analysis.Analysis
	rep  *analysis.Report
}

// budgetResult is the --budget check, in the JSON output.
type budgetResult struct {
	BudgetBytes        int64 `json:"budget_bytes"`
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes"`
	Device             int   `json:"device"`
	OverByBytes        int64 `json:"over_by_bytes"`
	OK                 bool  `json:"ok"`
}

// snapshotJSON is the --json output for one file.
type snapshotJSON struct {
	File string `json:"file"`
	*analysis.Report
	Budget *budgetResult `json:"budget,omitempty"`
}

// compareJSON is the --json output for two files.
type compareJSON struct {
	Before     snapshotJSON        `json:"before"`
	After      snapshotJSON        `json:"after"`
	Comparison analysis.Comparison `json:"comparison"`
	Budget     *budgetResult       `json:"budget,omitempty"`
}

// runSnapshot analyses a torch.cuda.memory._dump_snapshot() pickle (or
// compares two). It exits 1 when --budget is exceeded and 2 on bad input.
func runSnapshot(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("snapshot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	asMarkdown := fs.Bool("markdown", false, "print a Markdown report for a bug tracker")
	device := fs.Int("device", -1, "analyse only this device ordinal (default: every device)")
	budgetFlag := fs.String("budget", "", "fail (exit 1) when the peak allocated memory exceeds SIZE, e.g. 40GiB")
	top := fs.Int("top", 10, "number of allocation sites to list")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: oomscope snapshot [--json|--markdown] [--device N] [--budget SIZE] FILE [FILE2]\n\n"+
			"Analyses a snapshot written by torch.cuda.memory._dump_snapshot(): the peak allocated and\n"+
			"reserved memory and when, what was live at the peak by category and by allocation site,\n"+
			"fragmentation and OOM events. With FILE2, compares the two (what grew). FILE may be - for stdin.\n"+
			"Exit codes: 0 ok, 1 peak over --budget, 2 bad usage or input, 3 internal error.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	files, code, ok := parseInterspersed(fs, args, stdout)
	if !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintln(stderr, "oomscope snapshot: "+untrusted.Line(fmt.Sprintf(format, a...)))
		return exitBadInput
	}
	switch {
	case len(files) == 0:
		fs.Usage()
		return exitBadInput
	case len(files) > 2:
		return fail("want FILE or FILE FILE2, got %d files", len(files))
	case *asJSON && *asMarkdown:
		return fail("--json and --markdown exclude each other")
	case *top < 1:
		return fail("--top must be at least 1")
	}
	var budget int64 = -1
	if *budgetFlag != "" {
		b, err := bytesize.Parse(*budgetFlag)
		if err != nil || b <= 0 {
			return fail("--budget %q: want a size such as 40GiB", *budgetFlag)
		}
		budget = b
	}

	var snaps []snapshotFile
	for _, name := range files {
		sf, err := loadSnapshot(name, stdin, *device, *top)
		if err != nil {
			return fail("%v", err)
		}
		snaps = append(snaps, sf)
	}
	last := snaps[len(snaps)-1]
	br := checkBudget(last.rep, budget)

	switch {
	case *asJSON:
		var v any = snapshotJSON{File: last.name, Report: last.rep, Budget: br}
		if len(snaps) == 2 {
			v = compareJSON{
				Before:     snapshotJSON{File: snaps[0].name, Report: snaps[0].rep},
				After:      snapshotJSON{File: snaps[1].name, Report: snaps[1].rep},
				Comparison: analysis.Compare(snaps[0].an, snaps[1].an, *top),
				Budget:     br,
			}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return fail("writing JSON: %v", err)
		}
	case *asMarkdown:
		if len(snaps) == 2 {
			fmt.Fprint(stdout, analysis.MarkdownComparison(analysis.Compare(snaps[0].an, snaps[1].an, *top)))
		} else {
			fmt.Fprint(stdout, analysis.Markdown(last.rep))
		}
	default:
		if len(snaps) == 2 {
			printComparison(stdout, snaps[0], snaps[1], analysis.Compare(snaps[0].an, snaps[1].an, *top))
		} else {
			printSnapshot(stdout, last)
		}
	}
	if br != nil {
		if !br.OK {
			fmt.Fprintf(stderr, "oomscope snapshot: peak allocated %s on device %d is over the budget %s by %s\n",
				bytesize.FormatGiB(br.PeakAllocatedBytes), br.Device, bytesize.FormatGiB(br.BudgetBytes), bytesize.FormatGiB(br.OverByBytes))
			return exitCheck
		}
		if !*asJSON {
			fmt.Fprintf(stdout, "\nBudget: peak %s is within %s (%s to spare).\n", bytesize.FormatGiB(br.PeakAllocatedBytes),
				bytesize.FormatGiB(br.BudgetBytes), bytesize.FormatGiB(br.BudgetBytes-br.PeakAllocatedBytes))
		}
	}
	return exitOK
}

// loadSnapshot reads, decodes and analyses one file ("-": stdin). The file
// is decoded as it is read, so a 1 GB snapshot never sits in memory whole.
func loadSnapshot(name string, stdin io.Reader, device, top int) (snapshotFile, error) {
	r, size := stdin, int64(-1)
	if name == "-" {
		if stdin == nil {
			return snapshotFile{}, fmt.Errorf("no input on stdin")
		}
	} else {
		f, err := os.Open(name)
		if err != nil {
			return snapshotFile{}, err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return snapshotFile{}, err
		}
		if st.IsDir() {
			return snapshotFile{}, fmt.Errorf("%s is a directory: expected a pickle written by torch.cuda.memory._dump_snapshot()", name)
		}
		r, size = f, st.Size()
	}
	if size == 0 {
		return snapshotFile{}, fmt.Errorf("%s is empty: expected a pickle written by torch.cuda.memory._dump_snapshot()", name)
	}
	s, err := snapshot.DecodeReader(tracked(name, r), size, snapshot.DecodeOptions{})
	if err != nil {
		return snapshotFile{}, fmt.Errorf("%s is not a readable memory snapshot: %v", name, err)
	}
	an := analysis.Analyze(s, analysis.Options{TopSites: top})
	if device >= 0 {
		d := an.Device(device)
		if d == nil {
			var ids []string
			for _, dd := range an.Devices {
				ids = append(ids, fmt.Sprint(dd.ID))
			}
			return snapshotFile{}, fmt.Errorf("%s has no device %d (devices with data: %s)", name, device, orNone(strings.Join(ids, ", ")))
		}
		an.Devices = []*analysis.Device{d}
	}
	if len(an.Devices) == 0 {
		return snapshotFile{}, fmt.Errorf("%s holds no trace and no segments: was _record_memory_history() enabled before _dump_snapshot()?", name)
	}
	return snapshotFile{name: name, an: an, rep: an.Report()}, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// checkBudget compares the highest device peak with the budget; nil when
// no budget was given.
func checkBudget(r *analysis.Report, budget int64) *budgetResult {
	if budget < 0 {
		return nil
	}
	br := &budgetResult{BudgetBytes: budget, Device: -1}
	for _, d := range r.Devices {
		if br.Device < 0 || d.PeakAllocatedBytes > br.PeakAllocatedBytes {
			br.Device, br.PeakAllocatedBytes = d.Device, d.PeakAllocatedBytes
		}
	}
	br.OverByBytes = max(0, br.PeakAllocatedBytes-budget)
	br.OK = br.OverByBytes == 0
	return br
}

// printSnapshot writes the human-readable summary of one file.
func printSnapshot(w io.Writer, sf snapshotFile) {
	fmt.Fprintf(w, "%s (pickle protocol %d)\n", untrusted.Line(sf.name), sf.rep.PickleProtocol)
	for _, d := range sf.rep.Devices {
		fmt.Fprintf(w, "\nDevice %d: %d trace entries, %d allocations, %d stream(s)%s\n", d.Device, d.Entries, d.Allocations,
			d.Streams, map[bool]string{true: ", expandable segments", false: ""}[d.Expandable])
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		fmt.Fprintf(tw, "  Peak allocated\t%s\t(%d B) %s\n", bytesize.FormatGiB(d.PeakAllocatedBytes), d.PeakAllocatedBytes,
			analysis.When(d.PeakIndex, d.PeakTimeUS, d.FirstTimeUS, d.Entries))
		fmt.Fprintf(tw, "  Peak reserved\t%s\t(%d B) %s\n", bytesize.FormatGiB(d.PeakReservedBytes), d.PeakReservedBytes,
			analysis.When(d.PeakReservedIndex, 0, 0, d.Entries))
		fmt.Fprintf(tw, "  At the end\t%s\tallocated, %s reserved\n", bytesize.FormatGiB(d.FinalAllocatedBytes), bytesize.FormatGiB(d.FinalReservedBytes))
		fmt.Fprintf(tw, "  Before recording\t%s\tin %d allocations already live at the first entry\n",
			bytesize.FormatGiB(d.InitialAllocatedBytes), d.PreTraceAllocations)
		f := d.FragmentationAtPeak
		fmt.Fprintf(tw, "  Free at peak\t%s\tof reserved: %s rounding inside blocks, %s between blocks, largest free block %s\n",
			bytesize.FormatGiB(f.FreeBytes), bytesize.FormatGiB(f.InternalFreeBytes), bytesize.FormatGiB(f.ExternalFreeBytes), bytesize.FormatGiB(f.LargestFreeBlockBytes))
		tw.Flush()

		fmt.Fprintf(w, "\n  Live at the peak by category (heuristic; rule that fired in brackets):\n")
		tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
		for _, c := range analysis.Categories() {
			v := d.CategoriesAtPeak.Get(c)
			if v == 0 {
				continue
			}
			var rs []string
			for _, r := range d.CategoryRules {
				if r.Category == c.String() {
					rs = append(rs, r.Rule)
				}
			}
			fmt.Fprintf(tw, "    %s\t%s\t%5.1f %%\t\t[%s]\n", c, bytesize.FormatGiB(v),
				100*float64(v)/float64(max(d.PeakAllocatedBytes, 1)), strings.Join(rs, ", "))
		}
		tw.Flush()

		fmt.Fprintf(w, "\n  Top allocation sites at the peak:\n")
		tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		for i, s := range d.TopSites {
			fmt.Fprintf(tw, "   %2d.\t%s\t%d×\t%s\t%s\n", i+1, bytesize.FormatGiB(s.Bytes), s.Count, s.Category, untrusted.Line(s.Label))
		}
		tw.Flush()

		if len(d.OOMEvents) > 0 {
			fmt.Fprintf(w, "\n  Out-of-memory events:\n")
			for _, o := range d.OOMEvents {
				fmt.Fprintf(w, "    entry %d: asked for %s with %s free on the device; %s allocated, %s reserved, largest free block %s\n",
					o.Index, bytesize.FormatGiB(o.RequestedBytes), bytesize.FormatGiB(o.DeviceFreeBytes), bytesize.FormatGiB(o.AllocatedBytes),
					bytesize.FormatGiB(o.ReservedBytes), bytesize.FormatGiB(o.LargestFreeBlockBytes))
			}
		}
		for _, wn := range d.Warnings {
			fmt.Fprintf(w, "  Warning: %s\n", untrusted.Line(wn))
		}
	}
	fmt.Fprintf(w, "\nRun with --json for stacks and the rule behind every number, --markdown for a bug report.\n")
}

// printComparison writes the human-readable comparison of two files.
func printComparison(w io.Writer, before, after snapshotFile, c analysis.Comparison) {
	fmt.Fprintf(w, "Before: %s\nAfter:  %s\n", untrusted.Line(before.name), untrusted.Line(after.name))
	for _, d := range c.Devices {
		fmt.Fprintf(w, "\nDevice %d → %d\n", d.DeviceBefore, d.DeviceAfter)
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "  \tbefore\tafter\tchange\t\n")
		row := func(name string, v analysis.Delta) {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t\n", name, bytesize.FormatGiB(v.Before), bytesize.FormatGiB(v.After), bytesize.Signed(v.Delta, bytesize.Binary))
		}
		row("peak allocated", d.PeakAllocated)
		row("peak reserved", d.PeakReserved)
		for _, cd := range d.Categories {
			if cd.Bytes.Before != 0 || cd.Bytes.After != 0 {
				row(cd.Category, cd.Bytes)
			}
		}
		tw.Flush()
		if len(d.Sites) > 0 {
			fmt.Fprintf(w, "\n  Sites that changed most at the peak:\n")
			tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
			for _, s := range d.Sites {
				fmt.Fprintf(tw, "    %s\t%s → %s\t%s\n", bytesize.Signed(s.Bytes.Delta, bytesize.Binary), bytesize.FormatGiB(s.Bytes.Before), bytesize.FormatGiB(s.Bytes.After), untrusted.Line(s.Site))
			}
			tw.Flush()
		}
	}
}
