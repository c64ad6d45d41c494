package estimator

import (
	"strconv"
	"strings"
)

// Bucket names, in display order. The first seven are what PyTorch's
// caching allocator hands out (torch.cuda.max_memory_allocated); the
// allocator bucket is what it reserves beyond that
// (max_memory_reserved − allocated); non_torch is what the driver holds
// outside it (nvidia-smi − reserved). See docs/estimator.md#3-readouts-allocated-reserved-device.
const (
	BucketWeights     = "weights"
	BucketGradients   = "gradients"
	BucketOptimizer   = "optimizer"
	BucketActivations = "activations"
	BucketLogits      = "logits"
	BucketKVCache     = "kv_cache"
	BucketWorkspace   = "workspace"
	BucketAllocator   = "allocator"
	BucketNonTorch    = "non_torch"
)

// BucketNames lists the buckets in display order.
var BucketNames = []string{BucketWeights, BucketGradients, BucketOptimizer, BucketActivations, BucketLogits, BucketKVCache, BucketWorkspace, BucketAllocator, BucketNonTorch}

// Term is one named part of a bucket with the rule that produced it.
type Term struct {
	Name    string `json:"name"`
	Bytes   int64  `json:"bytes"`
	Formula string `json:"formula"`
}

// Bucket is one kind of GPU memory with its bytes, a formula in words and
// the terms it sums.
type Bucket struct {
	Name    string `json:"name"`
	Bytes   int64  `json:"bytes"`
	Formula string `json:"formula"`
	Terms   []Term `json:"terms,omitempty"`
}

// Buckets holds the byte count of every bucket.
type Buckets struct {
	Weights     int64 `json:"weights"`
	Gradients   int64 `json:"gradients"`
	Optimizer   int64 `json:"optimizer"`
	Activations int64 `json:"activations"`
	Logits      int64 `json:"logits"`
	KVCache     int64 `json:"kv_cache"`
	Workspace   int64 `json:"workspace"`
	Allocator   int64 `json:"allocator"`
	NonTorch    int64 `json:"non_torch"`
}

// Get returns the bytes of the bucket with the given name.
func (b Buckets) Get(name string) int64 {
	if f := b.field(name); f != nil {
		return *f
	}
	return 0
}

// field points at the bucket with the given name, nil for no bucket.
func (b *Buckets) field(name string) *int64 {
	switch name {
	case BucketWeights:
		return &b.Weights
	case BucketGradients:
		return &b.Gradients
	case BucketOptimizer:
		return &b.Optimizer
	case BucketActivations:
		return &b.Activations
	case BucketLogits:
		return &b.Logits
	case BucketKVCache:
		return &b.KVCache
	case BucketWorkspace:
		return &b.Workspace
	case BucketAllocator:
		return &b.Allocator
	case BucketNonTorch:
		return &b.NonTorch
	}
	return nil
}

// Readouts are the three numbers a job prints, at the peak, per GPU:
// Allocated is what torch.cuda.max_memory_allocated() reports, Reserved
// what max_memory_reserved() reports, Device what nvidia-smi shows. Each
// is a running sum of the buckets (docs/estimator.md#3-readouts-allocated-reserved-device).
type Readouts struct {
	Allocated int64 `json:"allocated"`
	Reserved  int64 `json:"reserved"`
	Device    int64 `json:"device"`
	// Formulas says how each readout is built, keyed allocated, reserved,
	// device; Compare which log line it is to be compared with.
	Formulas map[string]string `json:"formulas"`
	Compare  map[string]string `json:"compare"`
}

// ReadoutNames lists the readouts in order.
var ReadoutNames = []string{"allocated", "reserved", "device"}

// Get returns a readout's bytes by name.
func (r Readouts) Get(name string) int64 {
	switch name {
	case "allocated":
		return r.Allocated
	case "reserved":
		return r.Reserved
	case "device":
		return r.Device
	}
	return 0
}

// Result is one estimate: every bucket with its formula, the three
// readouts, host RAM, the serving engine's numbers in serve mode, and the
// fit verdict on the chosen GPU.
type Result struct {
	Request Request `json:"request"`
	Model   Model   `json:"model"`
	GPU     GPU     `json:"gpu"`
	// Params is the model's parameter count; TrainableParams what trains.
	Params          int64 `json:"params"`
	TrainableParams int64 `json:"trainable_params"`
	// Buckets are the byte counts; Details the same with formulas, in
	// BucketNames order.
	Buckets Buckets  `json:"buckets"`
	Details []Bucket `json:"details"`
	// Formulas maps each bucket name to its formula in words.
	Formulas map[string]string `json:"formulas"`
	Readouts Readouts          `json:"readouts"`
	// TotalBytes is the device readout: what the job needs of the card,
	// per GPU, and what the verdict compares.
	TotalBytes int64 `json:"total_bytes"`
	// HostBytes is the host RAM the offloaded model states need on one
	// machine (all its GPUs' ranks), with its terms.
	HostBytes   int64  `json:"host_bytes"`
	HostFormula string `json:"host_formula,omitempty"`
	HostTerms   []Term `json:"host_terms,omitempty"`
	// Serving holds what a serving engine prints at start-up (mode serve).
	Serving *Serving `json:"serving,omitempty"`
	// UsableBytes is the GPU capacity less the headroom (in serve mode the
	// engine's budget); Fits compares.
	UsableBytes   int64  `json:"usable_bytes"`
	UsableFormula string `json:"usable_formula"`
	Fits          bool   `json:"fits"`
	// Verdict says why it fits or not in one sentence.
	Verdict string `json:"verdict"`
}

// Bucket returns the detailed bucket by name.
func (r *Result) Bucket(name string) Bucket {
	for _, b := range r.Details {
		if b.Name == name {
			return b
		}
	}
	return Bucket{Name: name}
}

// Term returns the bytes of a named term of a bucket, 0 when absent.
func (r *Result) Term(bucket, term string) int64 {
	for _, t := range r.Bucket(bucket).Terms {
		if t.Name == term {
			return t.Bytes
		}
	}
	return 0
}

// Estimate computes the memory of one request. It returns an error naming
// what is wrong with a bad request, model, config or GPU.
func Estimate(r Request) (*Result, error) {
	p, err := newPlan(r)
	if err != nil {
		return nil, err
	}
	return p.compute(), nil
}

// compute fills every bucket. It cannot fail: newPlan validated everything.
func (p *plan) compute() *Result {
	res := &Result{Request: p.r, Model: p.m, GPU: p.g, Params: p.params, TrainableParams: p.trainableParams()}
	if p.serve() {
		p.computeServe(res)
	} else {
		p.computeJob(res)
	}
	res.Formulas = make(map[string]string, len(res.Details))
	for _, b := range res.Details {
		res.Formulas[b.Name] = b.Formula
		*res.Buckets.field(b.Name) = b.Bytes
	}
	return res
}

// readoutCompare says which log line each readout matches.
var readoutCompare = map[string]string{
	"allocated": "torch.cuda.max_memory_allocated(); torchtune's \"peak memory alloc\"; the Trainer's and PEFT's logged peaks; snapshot peaks",
	"reserved":  "torch.cuda.max_memory_reserved(); torchtune's \"peak memory resv\"; an OOM message's \"reserved by PyTorch\"",
	"device":    "nvidia-smi's memory used (per GPU); an OOM message's total minus \"free\"; what must fit the card",
}

// computeJob fills the buckets of a training or inference job.
func (p *plan) computeJob(res *Result) {
	weights, hostW := p.weights()
	grads, hostG := p.gradients()
	opt, hostO := p.optimizer()
	acts := p.activations()
	logits := p.logits()
	kv := p.kvCache()
	ws := p.workspace()
	allocated := sum(weights.Bytes, grads.Bytes, opt.Bytes, acts.Bytes, logits.Bytes, kv.Bytes, ws.Bytes)
	transient := sum(acts.Bytes, logits.Bytes)
	for _, b := range []Bucket{weights, grads} {
		for _, t := range b.Terms {
			switch t.Name {
			case "gather buffers", "dequant buffer", "gradient staging":
				transient = sum(transient, t.Bytes)
			}
		}
	}
	alloc := p.allocator(transient)
	reserved := sum(allocated, alloc.Bytes)
	nt := p.nonTorch()
	device := sum(reserved, nt.Bytes)
	res.Details = []Bucket{weights, grads, opt, acts, logits, kv, ws, alloc, nt}
	res.Readouts = Readouts{Allocated: allocated, Reserved: reserved, Device: device,
		Formulas: map[string]string{
			"allocated": "weights + gradients + optimizer + activations + logits + KV cache + cuBLAS workspaces: every tensor alive at the peak",
			"reserved":  "allocated + the allocator's block rounding and fragmentation (modelled rounding, fixed fragmentation allowance)",
			"device":    "reserved + CUDA context + libraries + NCCL communicators: everything on the card",
		}, Compare: readoutCompare}
	res.TotalBytes = device
	p.hostRAM(res, append(append(hostW, hostG...), hostO...))
	res.UsableBytes = min(fraction(p.g.CapacityBytes, 100-p.r.Headroom, 100), p.g.CapacityBytes)
	res.UsableFormula = p.say("%s capacity as PyTorch reports it (%s B) × (1 − %s %% headroom)",
		p.g.Name, num(p.g.CapacityBytes), strconv.FormatFloat(p.r.Headroom, 'f', -1, 64))
	res.Fits = res.TotalBytes <= res.UsableBytes
	if res.Fits {
		res.Verdict = "the device readout fits the usable memory"
	} else {
		res.Verdict = "the device readout exceeds the usable memory"
	}
}

// hostRAM totals the offloaded model states of every rank on one machine
// (up to 8 GPUs each).
func (p *plan) hostRAM(res *Result, terms []Term) {
	if len(terms) == 0 {
		return
	}
	var rank int64
	for _, t := range terms {
		rank = sum(rank, t.Bytes)
	}
	ranks := min(int64(max(1, p.r.GPUs)), 8)
	res.HostTerms = terms
	res.HostBytes = mul(rank, ranks)
	res.HostFormula = p.say("(%s) per rank × %d ranks on one machine", joinFormulas(terms...), ranks)
}

// bucket builds a Bucket from terms, dropping zero terms.
func bucket(name, formula string, terms ...Term) Bucket {
	b := Bucket{Name: name, Formula: formula}
	for _, t := range terms {
		if t.Bytes == 0 {
			continue
		}
		b.Bytes = sum(b.Bytes, t.Bytes)
		b.Terms = append(b.Terms, t)
	}
	if len(b.Terms) == 1 && b.Formula == "" {
		b.Formula = b.Terms[0].Formula
	}
	return b
}

// joinFormulas writes the terms' formulas as one sentence ("" when they
// have none: a quiet plan's).
func joinFormulas(terms ...Term) string {
	var parts []string
	any := false
	for _, t := range terms {
		if t.Bytes != 0 {
			any = true
			if t.Formula != "" {
				parts = append(parts, t.Formula)
			}
		}
	}
	if !any {
		return "none"
	}
	return strings.Join(parts, " + ")
}
