package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/load"
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

// runSnapshot analyses a torch.cuda.memory._dump_snapshot() pickle,
// compares two, or gives the overview of many (one per rank of a
// distributed job). It exits 1 when --budget is exceeded and 2 on bad
// input.
func runSnapshot(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	defer debug.SetGCPercent(debug.SetGCPercent(load.GCPercent))
	fs := flag.NewFlagSet("snapshot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	asMarkdown := fs.Bool("markdown", false, "print a Markdown report for a bug tracker")
	device := fs.Int("device", -1, "analyse only this device ordinal (default: every device)")
	budgetFlag := fs.String("budget", "", "fail (exit 1) when the peak allocated memory exceeds SIZE, e.g. 40GiB")
	top := fs.Int("top", load.TopSites, "number of allocation sites to list")
	ranks := fs.Bool("ranks", false, "give the overview of the files as ranks of one job even for one or two files")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: oomscope snapshot [--json|--markdown] [--device N] [--budget SIZE] FILE [FILE2]\n"+
			"       oomscope snapshot [--json] [--budget SIZE] [--ranks] FILE... | DIR\n\n"+
			"Analyses a snapshot written by torch.cuda.memory._dump_snapshot(): the peak allocated and\n"+
			"reserved memory and when, what was live at the peak by category and by allocation site,\n"+
			"fragmentation and OOM events. With FILE2, compares the two (what grew). FILE may be - for stdin.\n"+
			"With three files or more, a directory (its .pickle, .pkl and .gz files) or --ranks, treats the\n"+
			"files as the ranks of one job (one snapshot per rank) and prints the peak allocated and reserved\n"+
			"memory of each, marking the outliers.\n"+
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
	files, dirs, err := expandDirs(files)
	if err != nil {
		return fail("%v", err)
	}
	switch {
	case len(files) == 0 && dirs:
		return fail("the directory holds no .pickle, .pkl or .gz file")
	case len(files) == 0:
		fs.Usage()
		return exitBadInput
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
	if *ranks || dirs || len(files) > 2 {
		switch {
		case *asMarkdown:
			return fail("--markdown is for one or two files, not an overview of ranks")
		case *device >= 0:
			return fail("--device is for one or two files, not an overview of ranks")
		case slices.Contains(files, "-"):
			return fail("stdin (-) cannot be one of several ranks")
		}
		return runRanks(files, *asJSON, budget, stdout, stderr)
	}

	// A soft memory limit for the files' size, when every size is known
	// (not stdin or a pipe).
	var size int64
	for _, name := range files {
		st, err := os.Stat(name)
		if name == "-" || err != nil || !st.Mode().IsRegular() {
			size = -1
			break
		}
		size += st.Size()
	}
	// The heap keeps 4 KiB pages. Transparent huge pages (the CLI used to
	// madvise its heap for them) take fewer faults, but on a virtual
	// machine that reports free memory to its host (virtio-balloon free
	// page reporting) a free 2 MiB block is one the host took back, and
	// its first touch faults it in again from the host: 2.2-2.7 ms a MiB,
	// against 0.4-1.1 ms in 4 KiB pages, which come from memory the guest
	// kept. On the 1 GiB distinct-stacks file that was 1.1-1.55 s of
	// system time against 0.45-0.6 s.
	if size >= 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(load.MemoryLimit(size)))
	}
	var snaps []snapshotFile
	for _, name := range files {
		sf, closer, err := loadSnapshot(name, stdin, *device, *top)
		if err != nil {
			return fail("%v", err)
		}
		defer closer.Close()
		snaps = append(snaps, sf)
	}
	var cmp analysis.Comparison
	if len(snaps) == 2 {
		cmp = analysis.Compare(snaps[0].an, snaps[1].an, *top)
	}
	defer outputMemory(snaps, size)()
	last := snaps[len(snaps)-1]
	br := checkBudget(last.rep, budget)

	switch {
	case *asJSON:
		var err error
		if len(snaps) == 2 {
			err = writeJSON(stdout, compareJSON{
				Before:     snapshotJSON{File: snaps[0].name, Report: snaps[0].rep},
				After:      snapshotJSON{File: snaps[1].name, Report: snaps[1].rep},
				Comparison: cmp,
				Budget:     br,
			})
		} else {
			err = writeSnapshotJSON(stdout, snapshotJSON{File: last.name, Report: last.rep, Budget: br})
		}
		if err != nil {
			return fail("writing JSON: %v", err)
		}
	case *asMarkdown:
		if len(snaps) == 2 {
			fmt.Fprint(stdout, analysis.MarkdownComparison(cmp))
		} else {
			fmt.Fprint(stdout, analysis.Markdown(last.rep))
		}
	default:
		if len(snaps) == 2 {
			printComparison(stdout, snaps[0], snaps[1], cmp)
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

// outputMemory readies memory for writing the output of snaps (whose
// files are size bytes in all, -1 if unknown) and returns the function
// that restores the collector. The output needs the reports and the
// comparison, made before, not the analyses: they are dropped and, for a
// big input, collected at once (the heap in use after the 1 GiB
// distinct-stacks file's report, 410 MB, is 22 MB once they are). Then,
// where a soft memory limit bounds the process (the file sizes are
// known), collection is off until the output is written: what the JSON
// encoder allocates (its buffer doubling to 64 MB there) stays live until
// written, and a collection meanwhile stopped the encoder's goroutine for
// its stack again and again (runtime.suspendG: a preemption signal every
// few microseconds while the goroutine cleared or copied the buffer, not
// preemptible there), which took 0.1-0.2 s of both cores (perf).
func outputMemory(snaps []snapshotFile, size int64) (restore func()) {
	for i := range snaps {
		snaps[i].an = nil
	}
	if size < 0 || size > 64<<20 {
		runtime.GC()
	}
	if size < 0 {
		return func() {}
	}
	gc := debug.SetGCPercent(-1)
	return func() { debug.SetGCPercent(gc) }
}

// loadSnapshot reads, decodes and analyses one file ("-": stdin), keeping
// only the device asked for (-1: all). The file is decoded as it is read, so
// a 1 GB snapshot never sits in memory whole; close the closer when done.
// A bug met while loading panics again here (recoverInternal reports it,
// exit 3), with where the reading was.
func loadSnapshot(name string, stdin io.Reader, device, top int) (snapshotFile, io.Closer, error) {
	f, closer, err := load.OpenFile(name, stdin, load.Options{Analysis: analysis.Options{TopSites: top}})
	var ie *load.InternalError
	if errors.As(err, &ie) {
		repanic(name, ie)
	}
	if err != nil {
		return snapshotFile{}, nil, err
	}
	an, rep := f.Analysis, f.Report
	if device >= 0 {
		d := an.Device(device)
		if d == nil {
			closer.Close()
			var ids []string
			for _, dd := range an.Devices {
				ids = append(ids, fmt.Sprint(dd.ID))
			}
			return snapshotFile{}, nil, fmt.Errorf("%s has no device %d (devices with data: %s)", name, device, orNone(strings.Join(ids, ", ")))
		}
		an.Devices = []*analysis.Device{d}
		rep = an.Report()
	}
	return snapshotFile{name: name, an: an, rep: fillSetupBuckets(rep)}, closer, nil
}

// repanic raises a bug that load met (and recovered from, as the browser
// worker needs) again, for recoverInternal: the load's own stack goes to
// stderr first, and the position of the reading is where the report says.
func repanic(name string, ie *load.InternalError) {
	in := &input{name: name}
	in.n.Store(ie.Offset)
	current.Store(in)
	fmt.Fprintf(os.Stderr, "%s\n", ie.Stack)
	panic(ie.Value)
}

// expandDirs replaces each directory argument by its snapshot files
// (.pickle, .pkl, .gz), sorted; dirs reports whether there was one.
func expandDirs(args []string) (files []string, dirs bool, err error) {
	for _, a := range args {
		st, err := os.Stat(a)
		if a == "-" || err != nil || !st.IsDir() {
			files = append(files, a) // loading reports a missing file
			continue
		}
		dirs = true
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, true, err
		}
		for _, e := range ents {
			n := e.Name()
			if !e.IsDir() && load.IsSnapshotName(n) {
				files = append(files, filepath.Join(a, n))
			}
		}
	}
	return files, dirs, nil
}

// runRanks analyses files as the ranks of one job, several at a time, and
// prints the overview. A file that fails is a row with its error (exit 2
// after printing, 3 if it was a bug of ours).
func runRanks(files []string, asJSON bool, budget int64, stdout, stderr io.Writer) int {
	rows := make([]load.Rank, len(files))
	var internal atomic.Bool
	var wg sync.WaitGroup
	// Each analysis holds up to about its file's size until its row is
	// taken: two at a time keeps both cores busy, and the page's rule
	// (load.RankPool) keeps the files analysed at once under
	// load.RankBudget bytes, a bigger one alone.
	sched := load.RankPool{Workers: min(2, runtime.NumCPU(), len(files)), Budget: load.RankBudget}
	var mu sync.Mutex
	freed := sync.NewCond(&mu)
	for i := range files {
		size := int64(-1)
		if st, err := os.Stat(files[i]); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		mu.Lock()
		for !sched.CanStart(size) {
			freed.Wait()
		}
		sched.Start(size)
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer func() {
				mu.Lock()
				sched.Done(size)
				freed.Broadcast()
				mu.Unlock()
				wg.Done()
			}()
			f, closer, err := load.OpenFile(files[i], nil, load.Options{})
			if err != nil {
				var ie *load.InternalError
				if errors.As(err, &ie) {
					internal.Store(true)
					err = fmt.Errorf("%s: %w", files[i], err)
				}
				rows[i] = load.Rank{File: files[i], Rank: load.RankOf(files[i]), Error: err.Error()}
				return
			}
			closer.Close()
			rows[i] = load.FileRank(f)
		}()
	}
	wg.Wait()
	o := load.NewOverview(rows)
	var br *budgetResult
	if budget >= 0 {
		br = &budgetResult{BudgetBytes: budget, Device: -1}
		for _, r := range o.Ranks {
			for _, h := range r.Devices {
				if br.Device < 0 || h.PeakAllocatedBytes > br.PeakAllocatedBytes {
					br.Device, br.PeakAllocatedBytes = h.Device, h.PeakAllocatedBytes
				}
			}
		}
		br.OverByBytes = max(0, br.PeakAllocatedBytes-budget)
		br.OK = br.OverByBytes == 0
	}
	if asJSON {
		if err := writeJSON(stdout, struct {
			load.Overview
			Budget *budgetResult `json:"budget,omitempty"`
		}{o, br}); err != nil {
			fmt.Fprintf(stderr, "oomscope snapshot: writing JSON: %v\n", err)
			return exitBadInput
		}
	} else {
		printOverview(stdout, o)
	}
	for _, r := range o.Ranks {
		if r.Error != "" {
			fmt.Fprintf(stderr, "oomscope snapshot: %s\n", untrusted.Line(r.Error))
		}
	}
	if internal.Load() {
		fmt.Fprintf(stderr, "oomscope: internal error, please file an issue with the command line and the messages above (oomscope %s).\n", versionString())
		return exitInternal
	}
	for _, r := range o.Ranks {
		if r.Error != "" {
			return exitBadInput
		}
	}
	if br != nil && !br.OK {
		fmt.Fprintf(stderr, "oomscope snapshot: the highest peak allocated, %s, is over the budget %s by %s\n",
			bytesize.FormatGiB(br.PeakAllocatedBytes), bytesize.FormatGiB(br.BudgetBytes), bytesize.FormatGiB(br.OverByBytes))
		return exitCheck
	}
	return exitOK
}

// printOverview writes the overview of ranks as a table.
func printOverview(w io.Writer, o load.Overview) {
	n := 0
	for _, r := range o.Ranks {
		if r.Outlier {
			n++
		}
	}
	fmt.Fprintf(w, "%d files as ranks of one job: median peak allocated %s, median peak reserved %s; %d outlier(s)\n\n",
		len(o.Ranks), bytesize.FormatGiB(o.MedianAllocatedBytes), bytesize.FormatGiB(o.MedianReservedBytes), n)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  rank\tpeak allocated\tpeak at\tpeak reserved\tentries\tfile\t\n")
	for _, r := range o.Ranks {
		rank := "?"
		if r.Rank >= 0 {
			rank = fmt.Sprint(r.Rank)
		}
		if r.Error != "" {
			fmt.Fprintf(tw, "  %s\t-\t-\t-\t-\t%s\tnot analysed\n", rank, untrusted.Line(r.File))
			continue
		}
		entries := 0
		for _, h := range r.Devices {
			entries += h.Entries
		}
		mark := ""
		if r.Outlier {
			mark = "outlier: " + strings.Join(r.Why, "; ")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", rank, bytesize.FormatGiB(r.PeakAllocatedBytes), peakAt(r),
			bytesize.FormatGiB(r.PeakReservedBytes), bytesize.Commas(int64(entries)), untrusted.Line(r.File), mark)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nOutliers: %s.\nRun oomscope snapshot FILE for one rank's full analysis.\n", o.Rule)
}

// peakAt says when a rank reached its peak allocated: the seconds since
// its device's first trace entry, or the entry when the trace has no
// times ("-" if none).
func peakAt(r load.Rank) string {
	best := -1
	for i, h := range r.Devices {
		if best < 0 || h.PeakAllocatedBytes > r.Devices[best].PeakAllocatedBytes {
			best = i
		}
	}
	if best < 0 {
		return "-"
	}
	h := r.Devices[best]
	switch {
	case h.PeakIndex < 0:
		return "before the trace"
	case h.FirstTimeUS > 0 && h.PeakTimeUS >= h.FirstTimeUS:
		return strconv.FormatFloat(float64(h.PeakTimeUS-h.FirstTimeUS)/1e6, 'f', 3, 64) + " s"
	}
	return "entry " + bytesize.Commas(int64(h.PeakIndex))
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
		printDiagnosis(w, &d)
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
