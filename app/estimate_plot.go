package app

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/estimator"
)

// Feasible-region plot geometry (SVG user units).
const (
	plotW, plotH       = 560.0, 240.0
	plotLeft, plotTop  = 52.0, 12.0
	plotRight, plotBot = 12.0, 40.0
)

// plotPoint is one boundary point in SVG coordinates with what it means.
type plotPoint struct {
	X, Y       float64
	Seq, Batch int
}

// feasibleGeom places the feasible region's boundary on log₂ axes:
// sequence length across, micro-batch up (a batch of 0, nothing fits, on
// the floor). It returns the boundary points, the current setup's place,
// and the axes' top batch.
func feasibleGeom(pts []estimator.FeasiblePoint, seq, batch int) (bounds []plotPoint, cur plotPoint, topBatch int) {
	if len(pts) == 0 {
		return nil, plotPoint{}, 1
	}
	lo, hi := float64(pts[0].Seq), float64(pts[len(pts)-1].Seq)
	lo, hi = math.Min(lo, float64(max(seq, 1))), math.Max(hi, float64(max(seq, 1)))
	if hi <= lo {
		hi = lo * 2
	}
	need := max(batch, 2)
	for _, p := range pts {
		need = max(need, p.MaxBatch)
	}
	topBatch = 1
	for topBatch < need {
		topBatch *= 2
	}
	w, h := plotW-plotLeft-plotRight, plotH-plotTop-plotBot
	x := func(s int) float64 {
		return plotLeft + w*(math.Log2(float64(max(s, 1)))-math.Log2(lo))/(math.Log2(hi)-math.Log2(lo))
	}
	// Batch b sits at log₂(b) + 1 of log₂(top) + 1 steps: 0 on the floor.
	y := func(b int) float64 {
		steps := math.Log2(float64(topBatch)) + 1
		v := 0.0
		if b > 0 {
			v = math.Log2(float64(b)) + 1
		}
		return plotTop + h*(1-v/steps)
	}
	for _, p := range pts {
		bounds = append(bounds, plotPoint{X: x(p.Seq), Y: y(p.MaxBatch), Seq: p.Seq, Batch: p.MaxBatch})
	}
	return bounds, plotPoint{X: x(seq), Y: y(batch), Seq: seq, Batch: batch}, topBatch
}

// renderFeasible draws the feasible region for the chosen card: the
// largest micro-batch at each sequence length (serving: the requests of
// each max_model_len at once), the current setup marked, and every
// boundary point a link that sets its values. The numbers are in a table
// under it.
func (p *EstimatePage) renderFeasible() app.UI {
	rep := p.rep
	pts := rep.Feasible
	if len(pts) == 0 {
		return app.Div()
	}
	serve := rep.Serving != nil
	seq, batch := rep.Request.Seq, rep.Request.Batch
	xName, yName := "sequence length", "micro-batch"
	if serve {
		seq, batch = rep.Serving.MaxModelLen, max(int(rep.Serving.MaxConcurrency), 0)
		xName, yName = "max_model_len", "requests at once"
	}
	bounds, cur, top := feasibleGeom(pts, seq, batch)
	floor := plotH - plotBot
	// The region: under the boundary's steps, down to the floor.
	var path strings.Builder
	fmt.Fprintf(&path, "M%.1f %.1f", bounds[0].X, floor)
	for i, b := range bounds {
		if i > 0 {
			fmt.Fprintf(&path, " H%.1f", b.X)
		}
		fmt.Fprintf(&path, " V%.1f", b.Y)
	}
	fmt.Fprintf(&path, " V%.1f Z", floor)

	// The drawing is one SVG; the boundary points are HTML links laid over
	// it, so they take the keyboard and navigate inside the app.
	var svg strings.Builder
	fmt.Fprintf(&svg, `<svg class="estimate-plot-svg" viewBox="0 0 %.0f %.0f" xmlns="http://www.w3.org/2000/svg" aria-hidden="true">`, plotW, plotH)
	fmt.Fprintf(&svg, `<path class="estimate-plot-region" d="%s"/>`, path.String())
	fmt.Fprintf(&svg, `<line class="estimate-plot-axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, plotLeft, floor, plotW-plotRight, floor)
	fmt.Fprintf(&svg, `<line class="estimate-plot-axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, plotLeft, plotTop, plotLeft, floor)
	for i, b := range bounds {
		if i%2 == 0 || len(bounds) <= 6 {
			fmt.Fprintf(&svg, `<text class="estimate-plot-tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, b.X, floor+14, shortCount(b.Seq))
		}
	}
	for b := 1; b <= top; b *= 4 {
		_, pt, _ := feasibleGeom(pts, seq, b)
		fmt.Fprintf(&svg, `<text class="estimate-plot-tick" x="%.1f" y="%.1f" text-anchor="end">%d</text>`, plotLeft-4, pt.Y+4, b)
	}
	fmt.Fprintf(&svg, `<text class="estimate-plot-label" x="%.1f" y="%.1f" text-anchor="middle">%s (log scale)</text>`, plotLeft+(plotW-plotLeft-plotRight)/2, plotH-4, xName)
	fmt.Fprintf(&svg, `<text class="estimate-plot-label" x="12" y="%.1f" text-anchor="middle" transform="rotate(-90 12 %.1f)">%s</text>`, plotTop+(floor-plotTop)/2, plotTop+(floor-plotTop)/2, yName)
	curCls := "ok"
	if !rep.Fits {
		curCls = "bad"
	}
	fmt.Fprintf(&svg, `<g class="estimate-plot-current %s"><circle cx="%.1f" cy="%.1f" r="7"/><text x="%.1f" y="%.1f">you</text></g>`, curCls, cur.X, cur.Y, cur.X+9, cur.Y-8)
	svg.WriteString(`</svg>`)

	pct := func(v, of float64) string { return strconv.FormatFloat(100*v/of, 'f', 2, 64) + "%" }
	overlay := []app.UI{app.Raw(svg.String())}
	for _, b := range bounds {
		next := rep.Request
		what := fmt.Sprintf("%s tokens: up to %d", bytesize.Commas(int64(b.Seq)), b.Batch)
		if serve {
			next.MaxModelLen = b.Seq
			what += " requests at once; use this max_model_len"
		} else {
			next.Seq, next.Batch = b.Seq, max(b.Batch, 1)
			what += " per micro-batch; use these values"
		}
		if b.Batch == 0 {
			what = fmt.Sprintf("%s tokens: nothing fits", bytesize.Commas(int64(b.Seq)))
		}
		overlay = append(overlay, app.A().Href(p.href(next)).Class("estimate-plot-point").Title(what).Aria("label", what).
			DataSet("seq", b.Seq).DataSet("batch", b.Batch).Style("left", pct(b.X, plotW)).Style("top", pct(b.Y, plotH)))
	}
	// role=img: a span may carry an aria-label only with a role (axe).
	overlay = append(overlay, app.Span().ID("est-plot-current").Class("estimate-plot-you").Role("img").DataSet("seq", cur.Seq).DataSet("batch", cur.Batch).
		Style("left", pct(cur.X, plotW)).Style("top", pct(cur.Y, plotH)).Aria("label", fmt.Sprintf("your setup: %s tokens, %d", bytesize.Commas(int64(cur.Seq)), cur.Batch)))

	var rows []app.UI
	for _, pt := range pts {
		rows = append(rows, app.Tr().Body(app.Td().Class("num").Text(bytesize.Commas(int64(pt.Seq))), app.Td().Class("num").Text(strconv.Itoa(pt.MaxBatch))))
	}
	title := fmt.Sprintf("What fits on %s: the largest %s at each %s", rep.GPU.Name, yName, xName)
	return app.Section().ID("est-feasible").Class("estimate-feasible").Aria("label", "Feasible region").Body(
		app.H2().Text("What fits"),
		app.P().Class("muted").Text(title+". Everything under the boundary fits; pick a point to use its values."),
		app.Div().ID("est-plot").Class("estimate-plot").Role("group").Aria("label", title).Body(overlay...),
		app.Details().Body(
			app.Summary().Text("The boundary as a table"),
			app.Table().ID("est-feasible-table").Class("estimate-table").Body(
				app.THead().Body(app.Tr().Body(app.Th().Scope("col").Class("num").Text(xName), app.Th().Scope("col").Class("num").Text("largest "+yName))),
				app.TBody().Body(rows...),
			),
		),
	)
}

// shortCount writes 4096 as 4k and 131072 as 128k for tick labels.
func shortCount(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "M"
	case n >= 1024 && n%1024 == 0:
		return strconv.Itoa(n>>10) + "k"
	}
	return strconv.Itoa(n)
}
