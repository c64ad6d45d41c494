package estimator

import (
	"oomscope/bytesize"

	"fmt"
	"strconv"
	"strings"
)

// Bucket names, in display order.
const (
	BucketWeights     = "weights"
	BucketGradients   = "gradients"
	BucketOptimizer   = "optimizer"
	BucketActivations = "activations"
	BucketLogits      = "logits"
	BucketKVCache     = "kv_cache"
	BucketOverhead    = "overhead"
)

// BucketNames lists the buckets in display order.
var BucketNames = []string{BucketWeights, BucketGradients, BucketOptimizer, BucketActivations, BucketLogits, BucketKVCache, BucketOverhead}

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
	Overhead    int64 `json:"overhead"`
}

// Get returns the bytes of the bucket with the given name.
func (b Buckets) Get(name string) int64 {
	switch name {
	case BucketWeights:
		return b.Weights
	case BucketGradients:
		return b.Gradients
	case BucketOptimizer:
		return b.Optimizer
	case BucketActivations:
		return b.Activations
	case BucketLogits:
		return b.Logits
	case BucketKVCache:
		return b.KVCache
	case BucketOverhead:
		return b.Overhead
	}
	return 0
}

// Result is one estimate: every bucket with its formula, the total, and the
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
	// TotalBytes is the sum of the buckets: the estimated peak per GPU.
	TotalBytes int64 `json:"total_bytes"`
	// UsableBytes is the GPU capacity less the headroom; Fits compares.
	UsableBytes   int64  `json:"usable_bytes"`
	UsableFormula string `json:"usable_formula"`
	Fits          bool   `json:"fits"`
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
	weights := p.weights()
	grads := p.gradients()
	opt := p.optimizer()
	acts := p.activations()
	logits := p.logits()
	kv := p.kvCache()
	allocated := sum(weights.Bytes, grads.Bytes, opt.Bytes, acts.Bytes, logits.Bytes, kv.Bytes)
	over := p.overhead(allocated)
	res.Details = []Bucket{weights, grads, opt, acts, logits, kv, over}
	res.Formulas = map[string]string{}
	for _, b := range res.Details {
		res.Formulas[b.Name] = b.Formula
	}
	res.Buckets = Buckets{weights.Bytes, grads.Bytes, opt.Bytes, acts.Bytes, logits.Bytes, kv.Bytes, over.Bytes}
	res.TotalBytes = sum(allocated, over.Bytes)
	res.UsableBytes = fraction(p.g.CapacityBytes, 100-p.r.Headroom, 100)
	res.UsableBytes = min(res.UsableBytes, p.g.CapacityBytes)
	res.UsableFormula = fmt.Sprintf("%s capacity as PyTorch reports it (%s B) × (1 − %s %% headroom)",
		p.g.Name, bytesize.Commas(p.g.CapacityBytes), strconv.FormatFloat(p.r.Headroom, 'f', -1, 64))
	res.Fits = res.TotalBytes <= res.UsableBytes
	return res
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

// joinFormulas writes the terms' formulas as one sentence.
func joinFormulas(terms ...Term) string {
	var parts []string
	for _, t := range terms {
		if t.Bytes != 0 {
			parts = append(parts, t.Formula)
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " + ")
}
