package analysis

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"

	"oomscope/bytesize"
	"oomscope/estimator"
)

// Setup is the training setup the measured model state implies: parameter
// count, dtype and optimizer from the parameter, gradient and optimizer
// bytes; the catalog models of that size; and, for the closest one, the
// measured buckets beside the estimator's.
type Setup struct {
	// ParamBytes, GradientBytes and OptimizerBytes are the largest
	// parameter, gradient and optimizer-state bytes live at the peak of any
	// phase (the categories' rules say how each was recognised).
	ParamBytes     int64 `json:"param_bytes"`
	GradientBytes  int64 `json:"gradient_bytes"`
	OptimizerBytes int64 `json:"optimizer_bytes"`
	// Params is the inferred parameter count: ParamBytes over the bytes per
	// parameter of ParamDtype (buffers included).
	Params int64 `json:"params"`
	// ParamDtype is fp32 or bf16; Optimizer, Master, Method and Mode are in
	// the estimator's vocabulary (estimator.Request).
	ParamDtype string `json:"param_dtype"`
	Optimizer  string `json:"optimizer"`
	Master     bool   `json:"master"`
	Method     string `json:"method"`
	Mode       string `json:"mode"`
	// Why says how each was inferred, and what else the bytes allow.
	Why Text `json:"why"`
	// Models are the catalog models whose parameter count matches within
	// 3 %, closest first.
	Models []ModelMatch `json:"models"`
	// ActivationBytes is the most activation memory live at any phase's
	// peak, the measured side of the activations bucket.
	ActivationBytes int64 `json:"activation_bytes"`
	// Buckets compares the measured buckets with the estimator's for
	// Models[0]: empty as Analyze leaves it, so that the estimator's
	// formulas stay out of the page's worker; the CLI and the page fill it
	// with CompareBuckets.
	Buckets []BucketCompare `json:"buckets"`
	// Query is the /estimate query that carries the setup (and the model
	// when one matched).
	Query string `json:"query"`
}

// ModelMatch is a catalog model whose size matches the parameter bytes.
type ModelMatch struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Params int64  `json:"params"`
	// Dtype is the parameter dtype the match implies; OffPercent how far
	// the measured bytes are from params × bytes per parameter.
	Dtype      string  `json:"dtype"`
	OffPercent float64 `json:"off_percent"`
}

// BucketCompare is one bucket measured and estimated.
type BucketCompare struct {
	Bucket         string `json:"bucket"`
	MeasuredBytes  int64  `json:"measured_bytes"`
	EstimatedBytes int64  `json:"estimated_bytes"`
	// Why explains the difference.
	Why string `json:"why"`
}

// SetupRule states how the setup is inferred.
const SetupRule = "optimizer state ÷ parameter bytes: 2 = AdamW (two states in the parameter dtype), 1 = SGD with momentum or Lion " +
	"(one state), ≈ 0.5 (fp32) or ≈ 1 (bf16) = 8-bit AdamW, 6 / 4 / 3 = the same with fp32 master weights over bf16 parameters, " +
	"0 = plain SGD; gradients ≪ parameters (< 10 %) = LoRA; no gradients and no optimizer state = inference. The dtype comes " +
	"from a catalog model whose parameter count matches within 3 %; without one, fp32 is assumed"

// optimizerShape is an optimizer's state bytes per parameter byte.
type optimizerShape struct {
	id     string
	master bool
	ratio  func(pb float64) float64
}

var optimizerShapes = []optimizerShape{
	{estimator.OptAdamW, false, func(pb float64) float64 { return 2 }},
	{estimator.OptSGDMomentum, false, func(pb float64) float64 { return 1 }},
	{estimator.OptAdamW8bit, false, func(pb float64) float64 { return 2 / pb }},
	{estimator.OptAdamW, true, func(pb float64) float64 { return (4 + 8) / pb }},
	{estimator.OptSGDMomentum, true, func(pb float64) float64 { return (4 + 4) / pb }},
	{estimator.OptAdamW8bit, true, func(pb float64) float64 { return (4 + 2) / pb }},
	{estimator.OptSGD, true, func(pb float64) float64 { return 4 / pb }},
}

// inferSetup reads the setup from the moments' model state.
func inferSetup(ms momentSet, activations int64, gpu string) *Setup {
	p := ms.maxOf(func(m *moment) int64 { return m.cats.Parameter })
	g := ms.maxOf(func(m *moment) int64 { return m.cats.Gradient })
	o := ms.maxOf(func(m *moment) int64 { return m.cats.OptimizerState })
	if p <= 0 {
		return nil
	}
	s := &Setup{ParamBytes: p, GradientBytes: g, OptimizerBytes: o, ActivationBytes: activations, Models: []ModelMatch{},
		Buckets: []BucketCompare{}, Mode: estimator.ModeTrain, Method: estimator.MethodFull}
	var sizes map[int64]int64
	for j := range ms {
		if ms[j].cats.Parameter == p {
			sizes = ms[j].params
		}
	}
	shapePB, side := squareDtype(sizes)
	for _, m := range estimator.Models() {
		n := m.Params()
		for _, dt := range []struct {
			name string
			pb   int64
		}{{estimator.DtypeFP32, 4}, {estimator.DtypeBF16, 2}} {
			off := 100 * (float64(p)/float64(n*dt.pb) - 1)
			if math.Abs(off) > 3 || shapePB != 0 && dt.pb != shapePB || shapeShare(&m, dt.pb, sizes, p) < 0.5 {
				continue
			}
			s.Models = append(s.Models, ModelMatch{ID: m.ID, Name: m.Name, Params: n, Dtype: dt.name, OffPercent: math.Round(off*10) / 10})
		}
	}
	slices.SortStableFunc(s.Models, func(x, y ModelMatch) int {
		return compareInt64(int64(math.Abs(x.OffPercent)*1000), int64(math.Abs(y.OffPercent)*1000))
	})
	var why []string
	pb := 4.0
	s.ParamDtype = estimator.DtypeFP32
	switch {
	case len(s.Models) > 0:
		if s.Models[0].Dtype == estimator.DtypeBF16 {
			pb, s.ParamDtype = 2, estimator.DtypeBF16
		}
		why = append(why, fmt.Sprintf("%s of parameters is %s × %d B (%s, %+.1f %%), and its weight shapes match the parameter blocks",
			sz(p), s.Models[0].Name, int(pb), s.ParamDtype, s.Models[0].OffPercent))
	case shapePB != 0:
		pb = float64(shapePB)
		if shapePB == 2 {
			s.ParamDtype = estimator.DtypeBF16
		}
		why = append(why, fmt.Sprintf("%s of parameters: %s parameters in %s (weight blocks of %d B × a square of a multiple of 64, e.g. %d², which no %d-byte size can be); no catalog model has this size and shape",
			sz(p), humanCount(p/shapePB), s.ParamDtype, shapePB, side, 6-shapePB))
	default:
		why = append(why, fmt.Sprintf("%s of parameters: %s parameters in fp32 (or %s in bf16; no catalog model has either size)",
			sz(p), humanCount(p/4), humanCount(p/2)))
	}
	s.Params = int64(float64(p) / pb)
	r := float64(o) / float64(p)
	switch {
	case o == 0 && g == 0:
		s.Mode, s.Method, s.Optimizer = estimator.ModeInfer, "", ""
		why = append(why, "no gradients and no optimizer state: inference")
	case o == 0:
		s.Optimizer = estimator.OptSGD
		why = append(why, "gradients but no optimizer state: plain SGD (or the trace ends before the first optimizer step)")
	default:
		best, bestD := optimizerShapes[0], math.Inf(1)
		for _, sh := range optimizerShapes {
			if sh.master && pb != 2 {
				continue
			}
			if d := math.Abs(math.Log(r / sh.ratio(pb))); d < bestD {
				best, bestD = sh, d
			}
		}
		s.Optimizer, s.Master = best.id, best.master
		w := fmt.Sprintf("optimizer state %s = %.2f × the parameter bytes: %s", sz(o), r, best.id)
		if best.master {
			w += " with fp32 master weights"
		}
		if bestD > math.Log(1.15) {
			w += " (the nearest shape; the ratio is off by more than 15 %: part of the state may be missing or mislabelled)"
		}
		why = append(why, w)
	}
	if s.Mode == estimator.ModeTrain && g > 0 && 10*g < p {
		s.Method = estimator.MethodLoRA
		why = append(why, fmt.Sprintf("gradients %s are %.1f %% of the parameter bytes: LoRA (a frozen base)", sz(g), 100*float64(g)/float64(p)))
	}
	s.Why = Text(strings.Join(why, "; "))
	req := estimator.DefaultRequest()
	req.Mode, req.Dtype, req.Master = s.Mode, s.ParamDtype, s.Master
	if s.Mode == estimator.ModeTrain {
		req.Method, req.Optimizer = s.Method, s.Optimizer
	}
	if gpu != "" {
		req.GPU = gpu
	}
	if len(s.Models) > 0 {
		req.Model = s.Models[0].ID
	}
	s.Query = req.QueryString()
	return s
}

// squareDtype reads the parameter dtype from square weights: a block of
// pb × d² bytes with d a multiple of 64 (≥ 256) is a d × d matrix in a
// pb-byte dtype, and a size cannot be that for both 2 and 4 bytes. It
// returns the bytes per element holding most such blocks' bytes (0 when
// there are none or both are close) and the side d of the largest.
func squareDtype(sizes map[int64]int64) (pb int64, side int64) {
	var by [5]int64
	var sides [5]int64
	for size, bytes := range sizes {
		for _, b := range []int64{2, 4} {
			if size%b != 0 {
				continue
			}
			d := int64(math.Round(math.Sqrt(float64(size / b))))
			if d*d == size/b && d%64 == 0 && d >= 256 {
				by[b] += bytes
				sides[b] = max(sides[b], d)
			}
		}
	}
	switch {
	case by[4] > 0 && by[4] >= 4*by[2]:
		return 4, sides[4]
	case by[2] > 0 && by[2] >= 4*by[4]:
		return 2, sides[2]
	}
	return 0, 0
}

// shapeShare is the share of the parameter bytes in blocks whose size is
// one of model m's weight tensors (a linear, a fused q/k/v, the embedding or
// the lm_head) at pb bytes per element; 1 when the sizes are unknown.
func shapeShare(m *estimator.Model, pb int64, sizes map[int64]int64, total int64) float64 {
	if len(sizes) == 0 || total <= 0 {
		return 1
	}
	want := map[int64]bool{int64(m.Vocab) * int64(m.Hidden) * pb: true}
	for _, k := range m.LayerKinds() {
		var qkvOut int64
		for _, l := range k.Linears {
			want[int64(l.In)*int64(l.Out)*pb] = true
			want[int64(l.In)*int64(l.Out)*int64(l.Count)*pb] = true
			if l.Group == "attention" && l.Name != "o_proj" && l.Name != "out_proj" && l.Name != "dense" {
				qkvOut += int64(l.Out)
			}
		}
		if len(k.Linears) > 0 {
			want[int64(k.Linears[0].In)*qkvOut*pb] = true
		}
	}
	var hit int64
	for size, bytes := range sizes {
		if want[size] {
			hit += bytes
		}
	}
	return float64(hit) / float64(total)
}

// CompareBuckets sets the measured model state and activations beside the
// estimator's buckets for the setup's request with the given catalog
// model ("": the matched one; none without a match, or for an unknown
// model).
func (s *Setup) CompareBuckets(model string) []BucketCompare {
	q, err := url.ParseQuery(s.Query)
	if err != nil {
		return []BucketCompare{}
	}
	req, err := estimator.ParseQuery(q)
	if model != "" {
		req.Model = model
	} else if len(s.Models) == 0 {
		return []BucketCompare{}
	}
	if err != nil {
		return []BucketCompare{}
	}
	res, err := estimator.Estimate(req)
	if err != nil {
		return []BucketCompare{}
	}
	p, g, o, act := s.ParamBytes, s.GradientBytes, s.OptimizerBytes, s.ActivationBytes
	row := func(name string, measured int64, why string) BucketCompare {
		return BucketCompare{Bucket: name, MeasuredBytes: measured, EstimatedBytes: res.Buckets.Get(name), Why: why}
	}
	out := []BucketCompare{
		row(estimator.BucketWeights, p, "measured parameters include buffers (rotary tables, masks) and any tensor the stack rules took for a parameter; the estimate counts the architecture's weights"),
		row(estimator.BucketGradients, g, "measured at the phase where most gradients were alive; gradients freed layer by layer or kept in a different dtype move it"),
		row(estimator.BucketOptimizer, o, "measured after the first optimizer step created the state; an optimizer that creates state lazily, or a trace that starts later, shifts it"),
	}
	if act > 0 {
		out = append(out, row(estimator.BucketActivations, act, fmt.Sprintf("batch and sequence length are not in the snapshot: the estimate assumes batch %d × %d tokens; set yours in the estimator", req.Batch, req.Seq)))
	}
	return out
}

// humanCount renders a parameter count as 3.4B or 125M.
func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0fM", float64(n)/1e6)
	}
	return bytesize.Commas(n)
}
