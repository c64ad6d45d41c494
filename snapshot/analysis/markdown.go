package analysis

import (
	"fmt"
	"strings"

	"oomscope/bytesize"
	"oomscope/untrusted"
)

// When says when trace entry idx happened, with its time relative to the
// first entry (t and first in µs, 0 when unknown); idx < 0 means before the
// trace began.
func When(idx int, t, first int64, entries int) string {
	if idx < 0 {
		return "before the first trace entry (already live when recording started)"
	}
	s := fmt.Sprintf("after entry %d of %d", idx, entries)
	if t > 0 && first > 0 {
		s += fmt.Sprintf(" (%.3f s into the trace)", float64(t-first)/1e6)
	}
	return s
}

// Markdown renders a report for a bug tracker: headline numbers, the
// category split, the top sites with stacks, fragmentation and OOMs.
func Markdown(r *Report) string {
	var b strings.Builder
	for i := range r.Devices {
		markdownDevice(&b, &r.Devices[i])
	}
	b.WriteString("_Analysed locally with OOMScope; allocated = requested bytes of live allocations (alloc → free_completed), " +
		"including allocations made before recording started. Categories are heuristics: each names the rule that set it._\n")
	return b.String()
}

func markdownDevice(b *strings.Builder, d *DeviceReport) {
	fmt.Fprintf(b, "## CUDA memory snapshot, device %d\n\n", d.Device)
	markdownDiagnosis(b, d)
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(b, "| Peak allocated | **%s** (%d B), %s |\n", bytesize.FormatGiB(d.PeakAllocatedBytes), d.PeakAllocatedBytes,
		When(d.PeakIndex, d.PeakTimeUS, d.FirstTimeUS, d.Entries))
	fmt.Fprintf(b, "| Peak reserved | **%s** (%d B), %s |\n", bytesize.FormatGiB(d.PeakReservedBytes), d.PeakReservedBytes,
		When(d.PeakReservedIndex, 0, 0, d.Entries))
	fmt.Fprintf(b, "| At the end | %s allocated, %s reserved |\n", bytesize.FormatGiB(d.FinalAllocatedBytes), bytesize.FormatGiB(d.FinalReservedBytes))
	fmt.Fprintf(b, "| Before recording | %s in %d allocations already live |\n", bytesize.FormatGiB(d.InitialAllocatedBytes), d.PreTraceAllocations)
	f := d.FragmentationAtPeak
	fmt.Fprintf(b, "| Free in reserved at peak | %s (rounding %s, between blocks %s; largest free block %s) |\n",
		bytesize.FormatGiB(f.FreeBytes), bytesize.FormatGiB(f.InternalFreeBytes), bytesize.FormatGiB(f.ExternalFreeBytes), bytesize.FormatGiB(f.LargestFreeBlockBytes))
	fmt.Fprintf(b, "| Trace | %d entries, %d allocations, %d stream(s)%s |\n\n", d.Entries, d.Allocations, d.Streams,
		map[bool]string{true: ", expandable segments", false: ""}[d.Expandable])

	b.WriteString("### What was live at the peak\n\n| category | bytes | share |\n|---|---:|---:|\n")
	total := d.CategoriesAtPeak.Total()
	for _, c := range Categories() {
		v := d.CategoriesAtPeak.Get(c)
		if v == 0 {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %.1f %% |\n", c, bytesize.FormatGiB(v), 100*float64(v)/float64(max(total, 1)))
	}
	b.WriteString("\n")

	if len(d.TopSites) > 0 {
		b.WriteString("### Top allocation sites at the peak\n\n| # | site | bytes | count | category |\n|---:|---|---:|---:|---|\n")
		for i, s := range d.TopSites {
			fmt.Fprintf(b, "| %d | %s | %s | %d | %s |\n", i+1, untrusted.TableCell(untrusted.CodeSpan(s.Label)), bytesize.FormatGiB(s.Bytes), s.Count, s.Category)
		}
		b.WriteString("\n")
		for i, s := range d.TopSites {
			if i == 3 {
				break
			}
			fmt.Fprintf(b, "<details><summary>#%d %s: stack of its largest allocation (%s)</summary>\n\n",
				i+1, untrusted.HTML(s.Label), bytesize.FormatGiB(s.LargestBytes))
			stack := s.Stack
			if len(stack) == 0 {
				stack = []string{NoStackExplanation}
			}
			b.WriteString(untrusted.CodeBlock(stack) + "</details>\n\n")
		}
	}

	if len(d.OOMEvents) > 0 {
		b.WriteString("### Out-of-memory events\n\n| entry | requested | device free | allocated | reserved | largest free block |\n|---:|---:|---:|---:|---:|---:|\n")
		for _, o := range d.OOMEvents {
			fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s |\n", o.Index, bytesize.FormatGiB(o.RequestedBytes), bytesize.FormatGiB(o.DeviceFreeBytes),
				bytesize.FormatGiB(o.AllocatedBytes), bytesize.FormatGiB(o.ReservedBytes), bytesize.FormatGiB(o.LargestFreeBlockBytes))
		}
		b.WriteString("\n")
	}
	if len(d.Warnings) > 0 {
		b.WriteString("### Warnings\n\n")
		for _, w := range d.Warnings {
			fmt.Fprintf(b, "- %s\n", untrusted.Text(w))
		}
		b.WriteString("\n")
	}
}

// MarkdownComparison renders a Comparison for a bug tracker.
func MarkdownComparison(c Comparison) string {
	var b strings.Builder
	for _, d := range c.Devices {
		fmt.Fprintf(&b, "## Snapshot comparison, device %d → device %d\n\n| | before | after | change |\n|---|---:|---:|---:|\n",
			d.DeviceBefore, d.DeviceAfter)
		row := func(name string, v Delta) {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, bytesize.FormatGiB(v.Before), bytesize.FormatGiB(v.After), bytesize.Signed(v.Delta, bytesize.Binary))
		}
		row("peak allocated", d.PeakAllocated)
		row("peak reserved", d.PeakReserved)
		for _, cd := range d.Categories {
			if cd.Bytes.Before != 0 || cd.Bytes.After != 0 {
				row(cd.Category+" at peak", cd.Bytes)
			}
		}
		if len(d.Sites) > 0 {
			b.WriteString("\n| site | before | after | change |\n|---|---:|---:|---:|\n")
			for _, s := range d.Sites {
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", untrusted.TableCell(untrusted.CodeSpan(s.Site)), bytesize.FormatGiB(s.Bytes.Before), bytesize.FormatGiB(s.Bytes.After), bytesize.Signed(s.Bytes.Delta, bytesize.Binary))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("_" + c.Rule + "._\n")
	return b.String()
}
