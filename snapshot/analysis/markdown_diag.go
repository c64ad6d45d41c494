package analysis

import (
	"fmt"
	"strings"

	"oomscope/bytesize"
)

// maxStepRows is how many steps the Markdown step table lists; longer
// traces show the first and the last ones.
const maxStepRows = 24

// markdownDiagnosis writes the diagnosis of one device: the cause, the
// fixes with the bytes they save and their code, the leak with its stack,
// the steps and phases, the anomalies and the setup. Every text that comes
// from the file (sites, stacks) goes through mdCell or a code fence.
func markdownDiagnosis(b *strings.Builder, d *DeviceReport) {
	dg := d.Diagnosis
	if dg.Cause == "" {
		return
	}
	fmt.Fprintf(b, "### Diagnosis: %s\n\n%s.\n\n_Rule: %s._\n\n", dg.Cause, upperFirst(mdCell(dg.Why)), mdCell(dg.Rule))
	if d.PeakPhase.Step >= 0 {
		fmt.Fprintf(b, "The peak falls in the **%s** phase of **step %d** (of %d).\n\n", d.PeakPhase.Phase, d.PeakPhase.Step, len(d.Steps))
	}
	if len(d.Fixes) > 0 {
		b.WriteString("#### Fixes, cheapest first\n\n| # | fix | saves | of | why |\n|---:|---|---:|---|---|\n")
		for i, f := range d.Fixes {
			fmt.Fprintf(b, "| %d | %s | %s | %s | %s |\n", i+1, mdCell(f.Title), bytesize.FormatGiB(f.SavesBytes), strings.ReplaceAll(f.Of, "_", " "), mdCell(f.Why))
		}
		b.WriteString("\n")
		for i, f := range d.Fixes {
			if i == 3 {
				break
			}
			fmt.Fprintf(b, "<details><summary>%d. %s (guide: %s)</summary>\n\n```%s\n%s\n```\n</details>\n\n", i+1, mdCell(f.Title), f.Guide, f.Lang, fenceSafe(f.Code))
		}
	}
	if lk := d.Leak; lk != nil {
		fmt.Fprintf(b, "#### Leak: %s per step (%s confidence, %d steps)\n\n%s.\n\n", bytesize.FormatGiB(lk.BytesPerStep), lk.Confidence, lk.Steps, upperFirst(mdCell(lk.Why)))
		for i, s := range lk.Sites {
			if i == 3 {
				break
			}
			fmt.Fprintf(b, "<details><summary>`%s`: %s in %d block(s) per step</summary>\n\n```\n", mdCell(s.Site), bytesize.FormatGiB(s.BytesPerStep), s.Blocks)
			for _, l := range s.Stack {
				b.WriteString(fenceSafe(l) + "\n")
			}
			b.WriteString("```\n</details>\n\n")
		}
	}
	if len(d.Steps) > 0 {
		fmt.Fprintf(b, "#### Steps\n\n_%s; phases from %s._\n\n", mdCell(d.StepInfo.Rule), mdCell(d.StepInfo.Phases))
		b.WriteString("| step | entries | peak | at the end | forward | backward | optimizer | other |\n|---:|---|---:|---:|---:|---:|---:|---:|\n")
		for k, s := range d.Steps {
			if len(d.Steps) > maxStepRows && k == maxStepRows/2 {
				fmt.Fprintf(b, "| … | %d more steps | | | | | | |\n", len(d.Steps)-maxStepRows)
			}
			if len(d.Steps) > maxStepRows && k >= maxStepRows/2 && k < len(d.Steps)-maxStepRows/2 {
				continue
			}
			cells := map[string]string{}
			for _, p := range d.PhasePeaks {
				if p.Step == k {
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
		b.WriteString("#### Anomalies\n\n")
		for _, a := range an.PendingFrees {
			fmt.Fprintf(b, "- Pending free at `%s`: %s.\n", mdCell(a.Site), mdCell(a.Why))
		}
		for _, a := range an.LongLived {
			fmt.Fprintf(b, "- Long-lived at `%s`: %s.\n", mdCell(a.Site), mdCell(a.Why))
		}
		b.WriteString("\n")
	}
	if s := d.Setup; s != nil {
		fmt.Fprintf(b, "#### Setup for the estimator\n\n%s. Open `/estimate?%s` in OOMScope to compare with the formulas.\n\n", upperFirst(mdCell(s.Why)), s.Query)
	}
}

// upperFirst capitalises the first letter of a sentence.
func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// fenceSafe keeps a line from closing a Markdown code fence.
func fenceSafe(s string) string { return strings.ReplaceAll(s, "```", "'''") }

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
