package estimator

import (
	"fmt"
	"math"
	"net/url"
	"sort"
	"strings"
)

// Request is one estimate request. Its field names (the json tags) are the
// shared vocabulary of the /estimate URL query, the `oomscope estimate`
// flags and JSON input: users share and embed them, so they do not change.
// The field table (Fields) describes each key: label, help, unit, the modes
// it applies to, and how its value is written.
//
// Model is a catalog id, or "custom" with Config holding the text of a
// Hugging Face config.json (inline JSON in URLs and JSON; the CLI's
// --config flag takes a file path and reads it into this field). GPU is a
// catalog id or a capacity such as "80GiB" (the total capacity PyTorch
// reports). Fields that do not apply to the mode are ignored.
type Request struct {
	Model           string  `json:"model"`
	Config          string  `json:"config,omitempty"`
	CheckpointBytes int64   `json:"checkpoint_bytes"`
	GPU             string  `json:"gpu"`
	Mode            string  `json:"mode"`
	Method          string  `json:"method"`
	Dtype           string  `json:"dtype"`
	Master          bool    `json:"master"`
	Autocast        bool    `json:"autocast"`
	Optimizer       string  `json:"optimizer"`
	OptimDtype      string  `json:"optim_dtype"`
	Batch           int     `json:"batch"`
	Seq             int     `json:"seq"`
	Accum           int     `json:"accum"`
	Ckpt            string  `json:"ckpt"`
	Attn            string  `json:"attn"`
	Logits          string  `json:"logits"`
	GPUs            int     `json:"gpus"`
	TP              int     `json:"tp"`
	Shard           string  `json:"shard"`
	Offload         string  `json:"offload"`
	LoraRank        int     `json:"lora_rank"`
	LoraTargets     string  `json:"lora_targets"`
	Quant           string  `json:"quant"`
	KVDtype         string  `json:"kv_dtype"`
	Engine          string  `json:"engine"`
	GPUMemoryUtil   float64 `json:"gpu_memory_utilization"`
	MaxModelLen     int     `json:"max_model_len"`
	MaxNumSeqs      int     `json:"max_num_seqs"`
	MaxBatchedToks  int     `json:"max_num_batched_tokens"`
	BlockSize       int     `json:"block_size"`
	Headroom        float64 `json:"headroom"`
	Activations     string  `json:"activations"`
}

// Values of the enumerated request fields.
const (
	ModeTrain = "train"
	ModeInfer = "infer"
	ModeServe = "serve"

	MethodFull  = "full"
	MethodLoRA  = "lora"
	MethodQLoRA = "qlora"

	DtypeFP32 = "fp32"
	DtypeBF16 = "bf16"
	DtypeFP16 = "fp16"

	OptAdamW       = "adamw"
	OptAdamW8bit   = "adamw-8bit"
	OptSGD         = "sgd"
	OptSGDMomentum = "sgd-momentum"
	OptAdafactor   = "adafactor"
	OptLion        = "lion"

	OptimDtypeAuto = "auto"
	OptimDtype8bit = "8bit"

	CkptNone      = "none"
	CkptFull      = "full"
	CkptSelective = "selective"

	AttnSDPA  = "sdpa"
	AttnEager = "eager"

	LogitsFP32    = "fp32"
	LogitsBF16    = "bf16"
	LogitsChunked = "chunked"

	ShardNone  = "none"
	ShardDDP   = "ddp"
	ShardZero1 = "zero1"
	ShardZero2 = "zero2"
	ShardZero3 = "zero3"

	OffloadNone      = "none"
	OffloadOptimizer = "optimizer"
	OffloadParams    = "params"

	QuantAuto = "auto"
	QuantNone = "none"
	QuantFP8  = "fp8"
	QuantInt8 = "int8"
	QuantInt4 = "int4"
	QuantAWQ  = "awq"
	QuantGPTQ = "gptq"
	QuantBnB  = "bitsandbytes"

	KVAuto = "auto"
	KVFP8  = "fp8"

	EngineVLLM   = "vllm"
	EngineSGLang = "sglang"

	TargetsAllLinear = "all-linear"
	TargetsAttention = "attention"

	ActivationsTally = "tally"
	ActivationsPaper = "paper"

	// ModelCustom is the model id of a request that carries a config.json.
	ModelCustom = "custom"
)

// Request limits.
const (
	MaxBatch    = 1 << 16
	MaxSeq      = 1 << 24
	MaxAccum    = 1 << 16
	MaxGPUs     = 1 << 14
	MaxTP       = 64
	MaxLoraRank = 1 << 13
	MaxNumSeqs  = 1 << 16
	MaxBlock    = 1 << 10
	// MaxCheckpointBytes is 64 TiB, above any published checkpoint.
	MaxCheckpointBytes = 64 << 40
)

// Keys lists the request vocabulary in its stable order: the order of the
// Request fields.
var Keys = fieldKeys()

// Choices lists the allowed values of every enumerated key, for forms,
// flag help and error messages (the field table's choices, values only).
var Choices = choiceValues()

// DefaultRequest is what an empty query means: full bf16 fine-tuning of
// Llama 3.1 8B with AdamW on one H100 SXM, micro-batch 1 × 2048 tokens; in
// serve mode vLLM's defaults (gpu_memory_utilization 0.9, block size 16,
// the model's full context).
func DefaultRequest() Request {
	return Request{
		Model: "llama-3.1-8b", GPU: "h100-sxm-80gb", Mode: ModeTrain, Method: MethodFull,
		Dtype: DtypeBF16, Optimizer: OptAdamW, OptimDtype: OptimDtypeAuto, Batch: 1, Seq: 2048, Accum: 1,
		Ckpt: CkptNone, Attn: AttnSDPA, Logits: LogitsFP32, GPUs: 1, TP: 1, Shard: ShardNone, Offload: OffloadNone,
		LoraRank: 16, LoraTargets: TargetsAllLinear, Quant: QuantAuto, KVDtype: KVAuto,
		Engine: EngineVLLM, GPUMemoryUtil: 0.9, BlockSize: 16,
		Headroom: 10, Activations: ActivationsTally,
	}
}

// FieldError is a problem with one field: Key names it in the vocabulary,
// Msg says what is wrong in words a user reads next to the control.
type FieldError struct {
	Key string
	Msg string
}

func (e *FieldError) Error() string { return e.Key + ": " + e.Msg }

// Errors collects the problems of a request, one per field or rule; its
// Error joins them with "; ".
type Errors []*FieldError

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// err returns es as an error, nil when empty.
func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

func (es *Errors) add(key, format string, args ...any) {
	*es = append(*es, &FieldError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Validate checks every field and returns an Errors naming each problem.
// It does not resolve the model, config or GPU; Estimate does.
func (r Request) Validate() error {
	var errs Errors
	for i := range fields {
		f := &fields[i]
		if msg := f.check(&r); msg != "" {
			errs.add(f.Key, "%s", msg)
		}
	}
	if strings.TrimSpace(r.Model) == "" {
		errs.add("model", "empty (use a catalog id such as llama-3.1-8b, or custom with a config)")
	}
	if r.Model == ModelCustom && strings.TrimSpace(r.Config) == "" {
		errs.add("config", "model=custom needs a config.json: paste or drop one")
	}
	if r.Config != "" && r.Model != ModelCustom {
		errs.add("config", "a config.json is given, so model must be %q, not %q", ModelCustom, r.Model)
	}
	if strings.TrimSpace(r.GPU) == "" {
		errs.add("gpu", "empty (use a catalog id such as h100-sxm-80gb or a capacity such as 80GiB)")
	}
	if strings.TrimSpace(r.LoraTargets) == "" {
		errs.add("lora_targets", "empty (use all-linear, attention or module names such as q_proj,v_proj)")
	}
	if r.Mode == ModeTrain {
		if r.Autocast && r.Dtype == DtypeFP32 {
			errs.add("autocast", "autocast computes in dtype over fp32 weights, so dtype must be bf16 or fp16")
		}
		if r.Master && r.Dtype == DtypeFP32 {
			errs.add("master", "fp32 master weights need 16-bit weights (dtype bf16 or fp16)")
		}
		if r.Master && r.Autocast {
			errs.add("master", "autocast already keeps fp32 weights; use master=true or autocast=true, not both")
		}
		if r.TP > 0 && r.GPUs > 0 && r.GPUs%r.TP != 0 {
			errs.add("gpus", "%d GPUs cannot be split into tensor-parallel groups of %d: use a multiple of tp", r.GPUs, r.TP)
		}
	}
	return errs.err()
}

// pageKey reports whether k is a query parameter that belongs to the page,
// not the request:
// ParseQuery skips them, so an embedded or shared link is never an error.
func pageKey(k string) bool {
	switch k {
	case "unit", "embed", "fbclid", "gclid", "ref":
		return true
	}
	return strings.HasPrefix(k, "utm_")
}

// ParseQuery reads a URL query (or any key/value list in the vocabulary) on
// top of DefaultRequest and validates the result. Unknown keys, repeated
// keys and bad values are errors that name the key; the page's own keys
// (unit, embed) and tracking parameters (utm_*, fbclid, gclid, ref) are
// skipped. A config key (even empty) without a model implies model=custom,
// so an empty config is an error rather than the default model.
func ParseQuery(q url.Values) (Request, error) {
	r := DefaultRequest()
	var errs Errors
	for _, k := range sortedKeys(q) {
		if pageKey(k) {
			continue
		}
		vs := q[k]
		if len(vs) > 1 {
			errs.add(k, "given %d times", len(vs))
			continue
		}
		if err := r.Set(k, vs[0]); err != nil {
			errs = append(errs, err.(*FieldError))
		}
	}
	if len(errs) > 0 {
		return r, errs
	}
	if q.Has("config") && !q.Has("model") {
		r.Model = ModelCustom
	}
	return r, r.Validate()
}

func sortedKeys(q url.Values) []string {
	var ks []string
	// Vocabulary keys first in their order, then the rest alphabetically.
	for _, k := range Keys {
		if _, ok := q[k]; ok {
			ks = append(ks, k)
		}
	}
	var rest []string
	for k := range q {
		if fieldOf(k) == nil {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(ks, rest...)
}

// Query returns the request as URL values holding only the fields that
// differ from DefaultRequest; Encode() sorts them, and Pairs gives the
// vocabulary order.
func (r Request) Query() url.Values {
	q := url.Values{}
	for _, kv := range r.Pairs() {
		q.Set(kv[0], kv[1])
	}
	return q
}

// Pairs returns the non-default fields as key/value pairs in the stable
// vocabulary order (Keys), for building URLs and command lines that read in
// a predictable order. A custom model's "model=custom" is implied by config
// and left out.
func (r Request) Pairs() [][2]string {
	d := DefaultRequest()
	var out [][2]string
	for _, k := range Keys {
		v := r.Get(k)
		if v == d.Get(k) {
			continue
		}
		if k == "model" && r.Model == ModelCustom && r.Config != "" {
			continue
		}
		out = append(out, [2]string{k, v})
	}
	return out
}

// QueryString encodes Pairs as a URL query in vocabulary order.
func (r Request) QueryString() string {
	var b strings.Builder
	for i, kv := range r.Pairs() {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(kv[0]))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(kv[1]))
	}
	return b.String()
}

// finite reports a usable float.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
