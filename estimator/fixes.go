package estimator

import "fmt"

// Fix is one rung of the fix ladder: a change to the request, the bytes it
// saves against the rung before, and the total after it. Fixes apply
// cumulatively, cheapest first; each saves bytes, and the last one listed is
// the first that fits (or none fits, when even the whole ladder falls short).
type Fix struct {
	// Name is a short label, e.g. "activation checkpointing".
	Name string `json:"name"`
	// Change says what the fix changes, e.g. "ckpt none → full".
	Change string `json:"change"`
	// SavesBytes is the previous total minus TotalBytes.
	SavesBytes int64 `json:"saves_bytes"`
	// TotalBytes is the estimate with this and every earlier fix applied.
	TotalBytes int64 `json:"total_bytes"`
	// Fits reports whether TotalBytes fits the chosen GPU.
	Fits bool `json:"fits"`
	// Query is the request after the fix, as a URL query.
	Query string `json:"query"`
	// Request is the request after the fix.
	Request Request `json:"-"`
}

// rung is a candidate fix: apply edits the request and says what changed,
// or returns "" when it does not apply.
type rung struct {
	name  string
	apply func(p *plan) string
}

// swap is a rung that sets the field named by key to the value to: from
// any other value, or, when from is not "", only from that value. Its change
// reads "key old → to".
func swap(name, key, from, to string) rung {
	return rung{name, func(p *plan) string {
		old := p.r.Get(key)
		if old == to || from != "" && old != from || p.r.Set(key, to) != nil {
			return ""
		}
		return key + " " + old + " → " + to
	}}
}

// noting adds a detail of the changed request, in parentheses, to what the
// rung says it changed.
func (rg rung) noting(detail func(r *Request) string) rung {
	apply := rg.apply
	rg.apply = func(p *plan) string {
		change := apply(p)
		if change != "" {
			change += " (" + detail(&p.r) + ")"
		}
		return change
	}
	return rg
}

// trainLadder is the training fix ladder, ordered by cost to the user: a
// flag first, numerics next, then a different method, then more hardware.
var trainLadder = []rung{
	{"micro-batch + accumulation", func(p *plan) string {
		if p.r.Batch == 1 {
			return ""
		}
		old, oldAcc := p.r.Batch, p.r.Accum
		p.r.Batch, p.r.Accum = 1, min(MaxAccum, p.r.Accum*old)
		return fmt.Sprintf("batch %d → 1, accum %d → %d (same global batch)", old, oldAcc, p.r.Accum)
	}},
	{"mixed precision", func(p *plan) string {
		if p.r.Dtype != DtypeFP32 || p.r.Autocast {
			return ""
		}
		p.r.Dtype, p.r.Autocast = DtypeBF16, true
		if !p.g.BF16 {
			p.r.Dtype = DtypeFP16
		}
		return fmt.Sprintf("fp32 → %s autocast (fp32 weights, 16-bit activations)", p.r.Dtype)
	}},
	swap("activation checkpointing", "ckpt", "", CkptFull),
	swap("chunked cross-entropy", "logits", "", LogitsChunked),
	swap("8-bit optimizer", "optimizer", OptAdamW, OptAdamW8bit),
	swap("LoRA", "method", MethodFull, MethodLoRA).noting(func(r *Request) string {
		return fmt.Sprintf("rank %d, %s", r.LoraRank, r.LoraTargets)
	}),
	swap("QLoRA", "method", MethodLoRA, MethodQLoRA).noting(func(*Request) string { return "NF4 base" }),
	{"ZeRO-3 sharding", func(p *plan) string {
		// Shard over the GPUs given, or over as many as ZeRO-3 needs
		// when that is more.
		n := max(p.r.GPUs, p.gpusNeeded())
		if n <= 1 || p.r.Shard == ShardZero3 && n == p.r.GPUs {
			return ""
		}
		oldN, old := p.r.GPUs, p.r.Shard
		p.r.GPUs, p.r.Shard = n, ShardZero3
		return fmt.Sprintf("shard %s → zero3, gpus %d → %d", old, oldN, n)
	}},
}

// inferLadder is the inference fix ladder.
var inferLadder = []rung{
	swap("smaller batch", "batch", "", "1"),
	swap("fp8 KV cache", "kv_dtype", "", KVFP8),
	swap("8-bit weights", "quant", QuantNone, QuantInt8),
	swap("4-bit weights", "quant", "", QuantInt4),
}

// fixes applies the ladder cumulatively to a request whose estimate is
// start. A rung is listed only when it lowers the total, so the totals fall
// rung by rung, and the ladder stops at the first rung that fits: it is empty
// when the request already fits.
func (p *plan) fixes(start *Result) []Fix {
	ladder := trainLadder
	if !p.train() {
		ladder = inferLadder
	}
	cur := *p
	prevTotal, fits := start.TotalBytes, start.Fits
	out := []Fix{} // JSON [] rather than null when nothing is needed
	for _, rg := range ladder {
		if fits {
			break
		}
		next := cur
		change := rg.apply(&next)
		if change == "" {
			continue
		}
		res := next.compute()
		if res.TotalBytes >= prevTotal {
			continue // e.g. full checkpointing after selective with eager s² scores
		}
		out = append(out, Fix{
			Name: rg.name, Change: change,
			SavesBytes: prevTotal - res.TotalBytes, TotalBytes: res.TotalBytes, Fits: res.Fits,
			Query: next.r.QueryString(), Request: next.r,
		})
		prevTotal, fits = res.TotalBytes, res.Fits
		cur = next
	}
	return out
}
