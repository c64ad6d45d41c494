package analysis

import (
	"fmt"
	"strings"

	"oomscope/bytesize"
	"oomscope/untrusted"
)

// maxStepRows is how many steps the Markdown step table lists; longer
// traces show the first and the last ones.
const maxStepRows = 24

// markdownDiagnosis writes the diagnosis of one device: the cause, the
// fixes with the bytes they save and their code, the leak with its stack,
// the steps and phases, the anomalies and the setup. Every text that can
// hold names from the file (sentences naming sites, sites, stacks) goes
// through package untrusted.
func markdownDiagnosis(b *strings.Builder, d *DeviceReport) {
	dg := d.Diagnosis
	if dg.Cause == "" {
		return
	}
	fmt.Fprintf(b, "### Diagnosis: %s\n\n%s.\n\n_Rule: %s._\n\n", dg.Cause, untrusted.Text(upperFirst(dg.Why.String())), untrusted.Text(dg.Rule.String()))
	if d.PeakPhase.Step >= 0 {
		fmt.Fprintf(b, "The peak falls in the **%s** phase of **step %d** (of %d).\n\n", d.PeakPhase.Phase, d.PeakPhase.Step, len(d.Steps))
	}
	if len(d.Fixes) > 0 {
		b.WriteString("**Fixes, cheapest first**\n\n| # | fix | saves | of | why |\n|---:|---|---:|---|---|\n")
		for i, f := range d.Fixes {
			fmt.Fprintf(b, "| %d | %s | %s | %s | %s |\n", i+1, untrusted.TableCell(untrusted.Text(f.Title)), bytesize.FormatGiB(f.SavesBytes), strings.ReplaceAll(f.Of, "_", " "), untrusted.TableCell(untrusted.Text(f.Why.String())))
		}
		b.WriteString("\n")
		for i, f := range d.Fixes {
			if i == 3 {
				break
			}
			// The code is the catalog's own, not the file's: a plain fence.
			fmt.Fprintf(b, "<details><summary>%d. %s (guide: %s)</summary>\n\n%s</details>\n\n", i+1, untrusted.HTML(f.Title), f.Guide,
				untrusted.CodeBlock(strings.Split(f.Code, "\n")))
		}
	}
	if lk := d.Leak; lk != nil {
		fmt.Fprintf(b, "**Leak: %s per step** (%s confidence, %d steps). %s.\n\n", bytesize.FormatGiB(lk.BytesPerStep), lk.Confidence, lk.Steps, untrusted.Text(upperFirst(lk.Why.String())))
		for i, s := range lk.Sites {
			if i == 3 {
				break
			}
			fmt.Fprintf(b, "<details><summary>%s: %s in %d block(s) per step</summary>\n\n", untrusted.HTML(s.Site), bytesize.FormatGiB(s.BytesPerStep), s.Blocks)
			stack := s.Stack
			if len(stack) == 0 {
				stack = []string{NoStackExplanation}
			}
			b.WriteString(untrusted.CodeBlock(stack) + "</details>\n\n")
		}
	}
	if len(d.Steps) > 0 {
		fmt.Fprintf(b, "**Steps** (%s; phases from %s)\n\n", untrusted.Text(d.StepInfo.Rule), untrusted.Text(d.StepInfo.Phases))
		b.WriteString("| step | entries | peak | at the end | forward | backward | optimizer | other |\n|---:|---|---:|---:|---:|---:|---:|---:|\n")
		for k, s := range d.Steps {
			if len(d.Steps) > maxStepRows && k == maxStepRows/2 {
				fmt.Fprintf(b, "| … | %d more steps | | | | | | |\n", len(d.Steps)-maxStepRows)
			}
			if len(d.Steps) > maxStepRows && k >= maxStepRows/2 && k < len(d.Steps)-maxStepRows/2 {
				continue
			}
			var cells [numPhases]string
			for _, p := range d.PhasePeaks {
				if p.Step == k && p.Phase < numPhases {
					cells[p.Phase] = bytesize.FormatGiB(p.PeakAllocatedBytes)
				}
			}
			note := ""
			if s.Partial {
				note = " (partial)"
			}
			fmt.Fprintf(b, "| %d%s | %d–%d | %s | %s | %s | %s | %s | %s |\n", k, note, s.FirstEntry, s.LastEntry,
				bytesize.FormatGiB(s.PeakAllocatedBytes), bytesize.FormatGiB(s.EndAllocatedBytes),
				orDash(cells[PhaseForward]), orDash(cells[PhaseBackward]), orDash(cells[PhaseOptimizer]), orDash(cells[PhaseOther]))
		}
		b.WriteString("\n")
	}
	an := d.Anomalies
	if len(an.PendingFrees)+len(an.LongLived) > 0 {
		b.WriteString("**Anomalies**\n\n| kind | site | bytes | what |\n|---|---|---:|---|\n")
		row := func(kind string, a AnomalySite) {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", kind, untrusted.TableCell(untrusted.CodeSpan(a.Site)), bytesize.FormatGiB(a.Bytes), untrusted.TableCell(untrusted.Text(a.Why.String())))
		}
		for _, a := range an.PendingFrees {
			row("pending free", a)
		}
		for _, a := range an.LongLived {
			row("long-lived", a)
		}
		b.WriteString("\n")
	}
	if s := d.Setup; s != nil {
		fmt.Fprintf(b, "**Setup for the estimator.** %s. Open %s in OOMScope to compare with the formulas.\n\n", untrusted.Text(upperFirst(s.Why.String())), untrusted.CodeSpan("/estimate?"+s.Query))
		if len(s.Buckets) > 0 {
			b.WriteString("| bucket | measured | estimated | why they differ |\n|---|---:|---:|---|\n")
			for _, c := range s.Buckets {
				fmt.Fprintf(b, "| %s | %s | %s | %s |\n", c.Bucket, bytesize.FormatGiB(c.MeasuredBytes), bytesize.FormatGiB(c.EstimatedBytes), untrusted.TableCell(untrusted.Text(c.Why)))
			}
			b.WriteString("\n")
		}
	}
}

// upperFirst capitalises the first letter of a sentence.
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
