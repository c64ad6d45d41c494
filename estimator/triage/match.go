package triage

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"oomscope/bytesize"
	"oomscope/estimator"
)

// Tensor is one tensor a model and setup create, with its exact size.
type Tensor struct {
	// Name says what the tensor is, e.g. "logits in fp32".
	Name string `json:"name"`
	// Bytes is the tensor's size.
	Bytes int64 `json:"bytes"`
	// Formula is the size as a product, symbols then numbers:
	// "b·s·V·4 = 1·2048·128256·4".
	Formula string `json:"formula"`
}

// Match is a tensor whose allocator request equals the failed request, to
// the precision the message printed.
type Match struct {
	Tensor
	// RequestBytes is what the allocator asks the device for when this
	// tensor is created (rounded up to its block sizes).
	RequestBytes int64 `json:"request_bytes"`
	// Rounding says how Bytes became RequestBytes.
	Rounding string `json:"rounding"`
}

// Near is a tensor that does not match, with how far it is.
type Near struct {
	Tensor
	// RequestBytes is the allocator request of the tensor.
	RequestBytes int64 `json:"request_bytes"`
	// Ratio is the printed request divided by RequestBytes.
	Ratio float64 `json:"ratio"`
}

// Matching is the answer of MatchTensors.
type Matching struct {
	// Matches are the tensors that fit the printed request, largest first.
	Matches []Match `json:"matches"`
	// Nearest lists, when nothing matches, the three tensors whose
	// allocator request is closest to the printed one, with the ratio
	// printed / request (2.00 means the failed request is twice that tensor:
	// twice the batch, say).
	Nearest []Near `json:"nearest,omitempty"`
	// Tolerance is the half-width of the printed rounding compared against.
	Tolerance int64 `json:"tolerance_bytes"`
	// Note explains an empty or ambiguous answer.
	Note string `json:"note,omitempty"`
}

// modelOf resolves the model of an estimator request.
func modelOf(r estimator.Request) (estimator.Model, error) {
	if r.Model == estimator.ModelCustom || r.Config != "" {
		return estimator.ParseConfig([]byte(r.Config))
	}
	m, ok := estimator.LookupModel(r.Model)
	if !ok {
		return estimator.Model{}, fmt.Errorf("triage: unknown model %q", r.Model)
	}
	return m, nil
}

// dtypeSize is the element size of an estimator dtype name.
func dtypeSize(d string) int64 {
	if d == estimator.DtypeFP32 {
		return 4
	}
	return 2
}

// Tensors lists the tensors of the request's model and setup that commonly
// fail to allocate: logits, eager attention scores and masks, MLP
// intermediates, hidden states, projections, the KV cache, and the largest
// weights with their fp32 copies.
func Tensors(r estimator.Request) ([]Tensor, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	m, err := modelOf(r)
	if err != nil {
		return nil, err
	}
	b, s := int64(r.Batch), int64(r.Seq)
	e := dtypeSize(r.Dtype)
	dt := r.Dtype
	h, a, kv, d := int64(m.Hidden), int64(m.Heads), int64(m.KVHeads), int64(m.HeadDim)
	I, V, L := int64(m.Intermediate), int64(m.Vocab), int64(m.Layers)
	var ts []Tensor
	add := func(name string, syms string, factors ...int64) {
		n := int64(1)
		strs := make([]string, len(factors))
		for i, f := range factors {
			if f <= 0 || n > math.MaxInt64/f {
				return
			}
			n *= f
			strs[i] = itoa(f)
		}
		ts = append(ts, Tensor{Name: name, Bytes: n, Formula: syms + " = " + strings.Join(strs, "·")})
	}
	add("logits in fp32 (or their softmax / gradient)", "b·s·V·4", b, s, V, 4)
	if e != 4 {
		add("logits in "+dt, "b·s·V·"+itoa(e), b, s, V, e)
	}
	add("attention scores, eager attention ("+dt+")", "b·a·s²·"+itoa(e), b, a, s, s, e)
	if e != 4 {
		add("attention softmax in fp32, eager attention", "b·a·s²·4", b, a, s, s, 4)
	}
	add("4-D attention mask (eager attention)", "b·s²·"+itoa(e), b, s, s, e)
	if I > 0 {
		add("MLP intermediate (gate/up output)", "b·s·I·"+itoa(e), b, s, I, e)
	}
	if m.Experts > 0 && m.ExpertIntermediate > 0 {
		add("expert intermediate (all tokens through one expert)", "b·s·I_expert·"+itoa(e), b, s, int64(m.ExpertIntermediate), e)
	}
	add("hidden states", "b·s·h·"+itoa(e), b, s, h, e)
	if e != 4 {
		add("hidden states in fp32", "b·s·h·4", b, s, h, 4)
	}
	if d > 0 {
		add("q/k/v projection output", "b·s·(a+2·kv)·d·"+itoa(e), b, s, a+2*kv, d, e)
		add("KV cache of one layer", "2·b·s·kv·d·"+itoa(e), 2, b, s, kv, d, e)
		add("KV cache of all layers", "2·L·b·s·kv·d·"+itoa(e), 2, L, b, s, kv, d, e)
	}
	add("embedding (or lm_head) weight", "V·h·"+itoa(e), V, h, e)
	if e != 4 {
		add("embedding (or lm_head) in fp32: master copy, gradient or one AdamW state", "V·h·4", V, h, 4)
	}
	seen := map[string]bool{}
	for _, k := range m.LayerKinds() {
		for _, l := range k.Linears {
			if seen[l.Name] {
				continue
			}
			seen[l.Name] = true
			in, out, c := int64(l.In), int64(l.Out), int64(l.Count)
			if c > 1 {
				add(l.Name+" weights of all "+itoa(c)+" experts, stacked", "n·in·out·"+itoa(e), c, in, out, e)
				continue
			}
			add(l.Name+" weight", "in·out·"+itoa(e), in, out, e)
			if e != 4 {
				add(l.Name+" in fp32 (master copy or AdamW state)", "in·out·4", in, out, 4)
			}
		}
	}
	return ts, nil
}

// allocatorRequest returns what the allocator of f's backend asks the
// device for when a tensor of n bytes is created, and how.
func allocatorRequest(f *Finding, n int64) (int64, string) {
	const small, large, round = 1 << 20, 10 << 20, 2 << 20
	switch {
	case f.Kind == KindCUDAAsync:
		return n, "cudaMallocAsync requests the tensor's size as is"
	case f.Backend.cachingAllocator():
		switch r := addSat(n, 511) / 512 * 512; {
		case r <= small:
			return 2 << 20, "a tensor ≤ 1 MiB is served from a 2 MiB small-pool segment"
		case r < large:
			return 20 << 20, "a 1–10 MiB tensor is served from a 20 MiB segment"
		default:
			return addSat(r, round-1) / round * round, "rounded up to 512 B, then to a multiple of 2 MiB (large-pool segment)"
		}
	}
	return n, "compared as is"
}

// printedTolerance is half the last printed digit of the tried size: a
// value printed as 2.50 GiB lies within ±0.005 GiB.
func printedTolerance(f *Finding) int64 {
	for _, fd := range f.Fields {
		if fd.Key != "tried_bytes" {
			continue
		}
		num, unit, _ := strings.Cut(fd.Printed, " ")
		mult, ok := unitBytes[unit]
		if !ok {
			return 0
		}
		dec := 0
		if _, frac, ok := strings.Cut(num, "."); ok {
			dec = len(frac)
		}
		return int64(math.Ceil(float64(mult) / math.Pow(10, float64(dec)) / 2))
	}
	return 0
}

// MatchTensors names the tensors of the request's model and setup whose
// allocator request matches the size f tried to allocate. The printed size
// is rounded (to 2 decimals of its unit) and the allocator rounds up (512 B,
// 2 MiB and 20 MiB segments, multiples of 2 MiB), so a match means "equal
// within the printed precision after the allocator's rounding".
func MatchTensors(f *Finding, r estimator.Request) (Matching, error) {
	if f.TriedBytes == nil {
		return Matching{Note: "the message does not print the size it tried to allocate"}, nil
	}
	ts, err := Tensors(r)
	if err != nil {
		return Matching{}, err
	}
	tried := f.TriedBytes.Int64()
	tol := printedTolerance(f)
	out := Matching{Tolerance: tol, Matches: []Match{}}
	segment := f.Backend.cachingAllocator() && f.Kind != KindCUDAAsync
	if segment && (tried == 2<<20 || tried == 20<<20) {
		out.Note = fmt.Sprintf("%s is one allocator segment: every tensor up to %s becomes a request of this size, so the size names no tensor; the card was already full (see the cause)",
			bytesize.Format(tried, bytesize.Binary), map[int64]string{2 << 20: "1 MiB", 20 << 20: "10 MiB"}[tried])
		return out, nil
	}
	for _, t := range ts {
		req, how := allocatorRequest(f, t.Bytes)
		if req >= addSat(tried, -tol) && req <= addSat(tried, tol) {
			out.Matches = append(out.Matches, Match{Tensor: t, RequestBytes: req, Rounding: how})
		}
	}
	if len(out.Matches) == 0 {
		out.Nearest = nearest(f, ts, tried, 3)
		out.Note = fmt.Sprintf("no tensor of %s at batch %d × %d tokens matches %s; a different batch, sequence length or a tensor outside the model (data, loss, optimizer buffers) may be the one",
			r.Model, r.Batch, r.Seq, f.TriedBytes.Human())
	}
	return out, nil
}

// nearest returns the n tensors whose allocator request is closest to tried
// on a log scale, largest first when equally close.
func nearest(f *Finding, ts []Tensor, tried int64, n int) []Near {
	var ns []Near
	for _, t := range ts {
		req, _ := allocatorRequest(f, t.Bytes)
		if req <= 0 {
			continue
		}
		ns = append(ns, Near{Tensor: t, RequestBytes: req, Ratio: float64(tried) / float64(req)})
	}
	dist := func(r float64) float64 { return math.Abs(math.Log(r)) }
	sort.SliceStable(ns, func(i, j int) bool { return dist(ns[i].Ratio) < dist(ns[j].Ratio) })
	if len(ns) > n {
		ns = ns[:n]
	}
	return ns
}
