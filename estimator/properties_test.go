package estimator

import (
	"fmt"
	"testing"
)

// propertyRequests are varied setups the properties must hold for.
func propertyRequests() []Request {
	var rs []Request
	add := func(edit func(*Request)) {
		r := DefaultRequest()
		edit(&r)
		rs = append(rs, r)
	}
	add(func(r *Request) {})
	add(func(r *Request) { r.Attn, r.Ckpt = AttnEager, CkptSelective })
	add(func(r *Request) { r.Model, r.Attn, r.Dtype = "gpt2", AttnEager, DtypeFP32 })
	add(func(r *Request) { r.Model, r.Method, r.Ckpt = "qwen3-30b-a3b", MethodLoRA, CkptFull })
	add(func(r *Request) { r.Model, r.Method, r.Logits = "deepseek-v3", MethodQLoRA, LogitsChunked })
	add(func(r *Request) { r.Model, r.Method, r.LoraTargets = "gemma-3-4b", MethodLoRA, "q_proj,v_proj" })
	add(func(r *Request) { r.Model, r.GPUs, r.Shard = "llama-3.1-70b", 8, ShardZero3 })
	add(func(r *Request) { r.Model, r.Activations = "mixtral-8x7b", ActivationsPaper })
	add(func(r *Request) { r.Model, r.Mode = "gemma-2-9b", ModeInfer })
	add(func(r *Request) { r.Model, r.Mode, r.Attn, r.Quant = "gpt-oss-20b", ModeInfer, AttnEager, QuantInt4 })
	add(func(r *Request) {
		r.Activations, r.Master, r.Attn, r.Ckpt = ActivationsPaper, true, AttnEager, CkptSelective
	})
	add(func(r *Request) { r.Method, r.GPUs, r.Shard, r.GPU = MethodQLoRA, 2, ShardZero3, "t4-16gb" })
	add(func(r *Request) {
		r.Model, r.Method, r.GPUs, r.Shard, r.Dtype = "llama-3.2-1b", MethodLoRA, 4, ShardDDP, DtypeFP32
	})
	add(func(r *Request) {
		r.Model, r.Mode, r.KVDtype, r.Activations = "deepseek-v3", ModeInfer, KVFP8, ActivationsPaper
	})
	add(func(r *Request) { r.Model, r.Mode, r.Quant, r.GPU = "gemma-3-27b", ModeInfer, QuantFP8, "l40s-48gb" })
	return rs
}

func TestMonotonicInBatchAndSeq(t *testing.T) {
	for _, base := range propertyRequests() {
		for _, field := range []string{"batch", "seq"} {
			var prev *Result
			for _, v := range []int{1, 2, 3, 5, 8, 64, 1000, 4096, 40000} {
				r := base
				if field == "batch" {
					r.Batch = v
				} else {
					r.Seq = v
				}
				res := mustEstimate(t, r)
				if prev != nil {
					for _, name := range BucketNames {
						if res.Buckets.Get(name) < prev.Buckets.Get(name) {
							t.Errorf("%s: %s falls from %d to %d as %s grows to %d", base.QueryString(), name, prev.Buckets.Get(name), res.Buckets.Get(name), field, v)
						}
					}
					if res.TotalBytes <= prev.TotalBytes {
						t.Errorf("%s: total does not grow with %s = %d", base.QueryString(), field, v)
					}
				}
				prev = res
			}
		}
	}
}

// TestZero3DividesModelStates: under zero3 on N GPUs weights (less the
// gather buffers and QLoRA's dequantization buffer), gradients and
// optimizer states are the single-GPU values ÷ N; activations and logits do
// not shrink.
func TestZero3DividesModelStates(t *testing.T) {
	for _, method := range []string{MethodFull, MethodLoRA, MethodQLoRA} {
		for _, master := range []bool{false, true} {
			r := DefaultRequest()
			r.Model, r.Method, r.Master = "llama-3.1-70b", method, master
			one := mustEstimate(t, r)
			for _, n := range []int{2, 3, 8, 64, 1000} {
				r.GPUs, r.Shard = n, ShardZero3
				res := mustEstimate(t, r)
				name := fmt.Sprintf("%s master=%v N=%d", method, master, n)
				N := int64(n)
				// QLoRA's dequantization buffer is per GPU: not sharded.
				dq := one.Term(BucketWeights, "dequant buffer")
				if got, want := res.Term(BucketWeights, "sharded weights"), ceilDiv(one.Buckets.Weights-dq, N); got != want {
					t.Errorf("%s: sharded weights %d, want %d / %d = %d", name, got, one.Buckets.Weights-dq, N, want)
				}
				if got := res.Term(BucketWeights, "dequant buffer"); got != dq {
					t.Errorf("%s: dequant buffer %d, want %d on every GPU", name, got, dq)
				}
				if res.Term(BucketWeights, "gather buffers") <= 0 {
					t.Errorf("%s: no gather buffers", name)
				}
				if got, want := res.Buckets.Gradients, ceilDiv(one.Buckets.Gradients, N); got != want {
					t.Errorf("%s: gradients %d, want %d", name, got, want)
				}
				if got, want := res.Buckets.Optimizer, ceilDiv(one.Buckets.Optimizer, N); got != want {
					t.Errorf("%s: optimizer %d, want %d", name, got, want)
				}
				if res.Buckets.Activations != one.Buckets.Activations || res.Buckets.Logits != one.Buckets.Logits {
					t.Errorf("%s: activations or logits changed under sharding", name)
				}
			}
		}
	}
}

func TestShardingStages(t *testing.T) {
	r := DefaultRequest()
	r.Master, r.GPUs = true, 4
	get := func(shard string) Buckets {
		r.Shard = shard
		return mustEstimate(t, r).Buckets
	}
	ddp, z1, z2 := get(ShardDDP), get(ShardZero1), get(ShardZero2)
	if ddp.Gradients != 2*z1.Gradients {
		t.Errorf("ddp gradients %d, want twice (buckets) the zero1 %d", ddp.Gradients, z1.Gradients)
	}
	if z1.Optimizer != ceilDiv(ddp.Optimizer, 4) || z1.Weights != ddp.Weights {
		t.Errorf("zero1 should shard only the optimizer: %+v vs %+v", z1, ddp)
	}
	if z2.Gradients != ceilDiv(z1.Gradients, 4) || z2.Weights != z1.Weights {
		t.Errorf("zero2 should also shard gradients: %+v vs %+v", z2, z1)
	}
	if get(ShardNone) != ddp {
		t.Errorf("shard=none on several GPUs should replicate like ddp")
	}
	r.Activations = ActivationsPaper
	if paper := get(ShardDDP); paper.Gradients != z1.Gradients {
		t.Errorf("paper mode counts DDP gradients once: %d, want %d", paper.Gradients, z1.Gradients)
	}
}

// TestSearches checks each answer against its definition.
func TestSearches(t *testing.T) {
	for _, base := range propertyRequests() {
		rep, err := Advise(base)
		if err != nil {
			t.Fatal(err)
		}
		name := base.QueryString()
		fits := func(edit func(*Request)) bool {
			r := base
			edit(&r)
			return mustEstimate(t, r).Fits
		}
		if b := rep.MaxBatch; b > 0 {
			if !fits(func(r *Request) { r.Batch = b }) || (b < MaxBatch && fits(func(r *Request) { r.Batch = b + 1 })) {
				t.Errorf("%s: max_batch %d is not the boundary", name, b)
			}
		} else if fits(func(r *Request) { r.Batch = 1 }) {
			t.Errorf("%s: max_batch 0 but batch 1 fits", name)
		}
		if s := rep.MaxSeq; s > 0 {
			if !fits(func(r *Request) { r.Seq = s }) || (s < MaxSeq && fits(func(r *Request) { r.Seq = s + 1 })) {
				t.Errorf("%s: max_seq %d is not the boundary", name, s)
			}
		} else if fits(func(r *Request) { r.Seq = 1 }) {
			t.Errorf("%s: max_seq 0 but seq 1 fits", name)
		}
		smallest := -1
		for i, g := range GPUs() {
			gid := g.ID
			if fits(func(r *Request) { r.GPU = gid }) {
				smallest = i
				break
			}
		}
		if smallest < 0 && rep.SmallestGPU != "" || smallest >= 0 && rep.SmallestGPU != GPUs()[smallest].ID {
			t.Errorf("%s: smallest_gpu %q, want index %d", name, rep.SmallestGPU, smallest)
		}
		if base.Mode == ModeTrain {
			if n := rep.GPUsNeeded; n > 0 {
				if !fits(func(r *Request) { r.GPUs, r.Shard = n, ShardZero3 }) || (n > 1 && fits(func(r *Request) { r.GPUs, r.Shard = n-1, ShardZero3 })) {
					t.Errorf("%s: gpus_needed %d is not the fewest", name, n)
				}
			}
		}
		// The fix ladder: cumulative totals, savings consistent, each rung
		// saves, and it stops at the first rung that fits.
		if rep.Fits && len(rep.Fixes) > 0 {
			t.Errorf("%s: fits, yet %d fixes are listed", name, len(rep.Fixes))
		}
		prev := rep.TotalBytes
		for i, f := range rep.Fixes {
			if f.SavesBytes <= 0 || f.Fits && i != len(rep.Fixes)-1 {
				t.Errorf("%s: fix %d %s saves %d (fits %v) in a ladder of %d", name, i, f.Name, f.SavesBytes, f.Fits, len(rep.Fixes))
			}
			if f.SavesBytes != prev-f.TotalBytes {
				t.Errorf("%s: fix %s saves %d, totals say %d", name, f.Name, f.SavesBytes, prev-f.TotalBytes)
			}
			res := mustEstimate(t, f.Request)
			if res.TotalBytes != f.TotalBytes || res.Fits != f.Fits {
				t.Errorf("%s: fix %s total %d does not match its request's %d", name, f.Name, f.TotalBytes, res.TotalBytes)
			}
			prev = f.TotalBytes
		}
	}
}

func TestFixLadderOrder(t *testing.T) {
	r := DefaultRequest()
	r.Model, r.Dtype, r.Batch, r.Seq = "llama-3.1-70b", DtypeFP32, 4, 4096
	rep, err := Advise(r)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range rep.Fixes {
		names = append(names, f.Name)
		if f.SavesBytes <= 0 {
			t.Errorf("fix %s saves %d bytes", f.Name, f.SavesBytes)
		}
	}
	// Mixed precision is left out: on 70B fp32 weights, autocast's 16-bit
	// weight copies (141 GB) outweigh the halved activations.
	want := []string{"micro-batch + accumulation", "activation checkpointing", "chunked cross-entropy", "8-bit optimizer", "LoRA", "QLoRA"}
	if fmt.Sprint(names[:len(want)]) != fmt.Sprint(want) {
		t.Errorf("ladder %v, want it to start %v", names, want)
	}
	if len(rep.Fixes) == 0 || !rep.Fixes[len(rep.Fixes)-1].Fits {
		t.Errorf("the full ladder should fit 70B on an H100: %+v", rep.Fixes)
	}
	if r := rep.Fixes[0].Request; r.Batch != 1 || r.Accum != 4 {
		t.Errorf("first fix keeps the global batch: batch %d accum %d", r.Batch, r.Accum)
	}
}

// TestQuietProbeAgrees: the searches' quiet probes skip only words; every
// number, the verdict and the engine's error are the same as a full
// compute's.
func TestQuietProbeAgrees(t *testing.T) {
	reqs := propertyRequests()
	for _, q := range []string{"mode=serve", "mode=serve&model=gpt-oss-120b&gpu=a100-80gb&tp=4", "mode=serve&model=llama-3.1-8b&gpu=rtx-4090-24gb",
		"mode=serve&engine=sglang&model=qwen3-32b&tp=2", "offload=params&gpus=8&shard=zero3&model=llama-3.1-70b", "tp=4&gpus=8&model=qwen2.5-72b&ckpt=full"} {
		reqs = append(reqs, queryRequest(t, q))
	}
	for _, r := range reqs {
		p, err := newPlan(r)
		if err != nil {
			t.Fatal(err)
		}
		full, quiet := p.compute(), p.probe()
		if full.Buckets != quiet.Buckets || full.Fits != quiet.Fits || full.HostBytes != quiet.HostBytes ||
			full.Readouts.Allocated != quiet.Readouts.Allocated || full.Readouts.Reserved != quiet.Readouts.Reserved || full.Readouts.Device != quiet.Readouts.Device {
			t.Errorf("%s: probe differs:\n%+v\n%+v", r.QueryString(), full.Buckets, quiet.Buckets)
		}
		if full.Serving != nil {
			f, q := *full.Serving, *quiet.Serving
			f.Formulas, q.Formulas = nil, nil
			if fmt.Sprint(f) != fmt.Sprint(q) {
				t.Errorf("%s: serving differs:\n%+v\n%+v", r.QueryString(), f, q)
			}
		}
	}
}
