package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/untrusted"
)

// printDiagnosis writes a device's diagnosis first, as the page shows it:
// the cause, where the peak fell, the leak and the fixes with the bytes
// they save.
func printDiagnosis(w io.Writer, d *analysis.DeviceReport) {
	dg := d.Diagnosis
	if dg.Cause == "" {
		return
	}
	fmt.Fprintf(w, "  Diagnosis: %s. %s.\n", dg.Cause, untrusted.Line(dg.Why.String()))
	if d.PeakPhase.Step >= 0 {
		fmt.Fprintf(w, "  The peak falls in the %s phase of step %d of %d.\n", d.PeakPhase.Phase, d.PeakPhase.Step, len(d.Steps))
	}
	if lk := d.Leak; lk != nil {
		fmt.Fprintf(w, "  Leak: %s per step, %s confidence over %d steps, at %s.\n", bytesize.FormatGiB(lk.BytesPerStep), lk.Confidence, lk.Steps, untrusted.Line(lk.Sites[0].Site))
	}
	if len(d.Fixes) > 0 {
		fmt.Fprintf(w, "  Fixes, cheapest first (saving of this measured memory):\n")
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		for i, f := range d.Fixes {
			fmt.Fprintf(tw, "   %2d.\t%s\t%s\t%s\n", i+1, bytesize.FormatGiB(f.SavesBytes), strings.ReplaceAll(f.Of, "_", " "), f.Title)
		}
		tw.Flush()
	}
	if c := d.OOMCard; c != nil {
		fmt.Fprintf(w, "  At the OOM (entry %d): %s\n", c.Index, c.CapacityRule)
	}
}

// fillSetupBuckets sets each device's measured buckets beside the
// estimator's (the analysis leaves them out so that the page's worker does
// not carry the estimator's formulas).
func fillSetupBuckets(r *analysis.Report) *analysis.Report {
	for i := range r.Devices {
		if s := r.Devices[i].Setup; s != nil {
			s.Buckets = s.CompareBuckets("")
		}
	}
	return r
}
