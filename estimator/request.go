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
//
// Model is a catalog id, or "custom" with Config holding the text of a
// Hugging Face config.json (inline JSON in URLs and JSON; the CLI's -config
// flag takes a file path and reads it into this field). GPU is a catalog id
// or a capacity such as "80GiB" (the total capacity PyTorch reports).
// Fields that do not apply to the mode are ignored: quant and kv_dtype only
// matter for mode=infer; method, optimizer, master, autocast, accum, ckpt,
// logits, gpus, shard and the lora fields only for mode=train (inference
// is sized for one GPU).
type Request struct {
	Model       string  `json:"model"`
	Config      string  `json:"config,omitempty"`
	GPU         string  `json:"gpu"`
	Mode        string  `json:"mode"`
	Method      string  `json:"method"`
	Dtype       string  `json:"dtype"`
	Master      bool    `json:"master"`
	Autocast    bool    `json:"autocast"`
	Optimizer   string  `json:"optimizer"`
	Batch       int     `json:"batch"`
	Seq         int     `json:"seq"`
	Accum       int     `json:"accum"`
	Ckpt        string  `json:"ckpt"`
	Attn        string  `json:"attn"`
	Logits      string  `json:"logits"`
	GPUs        int     `json:"gpus"`
	Shard       string  `json:"shard"`
	LoraRank    int     `json:"lora_rank"`
	LoraTargets string  `json:"lora_targets"`
	Quant       string  `json:"quant"`
	KVDtype     string  `json:"kv_dtype"`
	Headroom    float64 `json:"headroom"`
	Activations string  `json:"activations"`
}

// Values of the enumerated request fields.
const (
	ModeTrain = "train"
	ModeInfer = "infer"

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

	QuantNone = "none"
	QuantFP8  = "fp8"
	QuantInt8 = "int8"
	QuantInt4 = "int4"

	KVAuto = "auto"
	KVFP8  = "fp8"

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
	MaxLoraRank = 1 << 13
)

// Keys lists the request vocabulary in its stable order: the order of the
// Request fields.
var Keys = fieldKeys()

// Choices lists the allowed values of every enumerated key, for forms,
// flag help and error messages.
var Choices = map[string][]string{
	"mode":        {ModeTrain, ModeInfer},
	"method":      {MethodFull, MethodLoRA, MethodQLoRA},
	"dtype":       {DtypeFP32, DtypeBF16, DtypeFP16},
	"optimizer":   {OptAdamW, OptAdamW8bit, OptSGD, OptSGDMomentum, OptAdafactor, OptLion},
	"ckpt":        {CkptNone, CkptFull, CkptSelective},
	"attn":        {AttnSDPA, AttnEager},
	"logits":      {LogitsFP32, LogitsBF16, LogitsChunked},
	"shard":       {ShardNone, ShardDDP, ShardZero1, ShardZero2, ShardZero3},
	"quant":       {QuantNone, QuantFP8, QuantInt8, QuantInt4},
	"kv_dtype":    {KVAuto, DtypeFP32, DtypeBF16, DtypeFP16, KVFP8},
	"activations": {ActivationsTally, ActivationsPaper},
}

// DefaultRequest is what an empty query means: full bf16 fine-tuning of
// Llama 3.1 8B with AdamW on one H100 SXM, micro-batch 1 × 2048 tokens.
func DefaultRequest() Request {
	return Request{
		Model: "llama-3.1-8b", GPU: "h100-sxm-80gb", Mode: ModeTrain, Method: MethodFull,
		Dtype: DtypeBF16, Optimizer: OptAdamW, Batch: 1, Seq: 2048, Accum: 1,
		Ckpt: CkptNone, Attn: AttnSDPA, Logits: LogitsFP32, GPUs: 1, Shard: ShardNone,
		LoraRank: 16, LoraTargets: TargetsAllLinear, Quant: QuantNone, KVDtype: KVAuto,
		Headroom: 10, Activations: ActivationsTally,
	}
}

func oneOf(key, v string) error {
	for _, c := range Choices[key] {
		if v == c {
			return nil
		}
	}
	return fmt.Errorf("%s: %q is not one of %s", key, v, strings.Join(Choices[key], ", "))
}

// Validate checks every field and returns one error naming each problem.
// It does not resolve the model, config or GPU; Estimate does.
func (r Request) Validate() error {
	var errs []string
	add := func(err error) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	for _, k := range Keys {
		if Choices[k] != nil {
			add(oneOf(k, r.Get(k)))
		}
	}
	if strings.TrimSpace(r.Model) == "" {
		add(fmt.Errorf("model: empty (use a catalog id such as llama-3.1-8b, or custom with a config)"))
	}
	if r.Model == ModelCustom && strings.TrimSpace(r.Config) == "" {
		add(fmt.Errorf("config: model=custom needs a config.json"))
	}
	if r.Config != "" && r.Model != ModelCustom {
		add(fmt.Errorf("config: a config.json is given, so model must be %q, not %q", ModelCustom, r.Model))
	}
	if strings.TrimSpace(r.GPU) == "" {
		add(fmt.Errorf("gpu: empty (use a catalog id such as h100-sxm-80gb or a capacity such as 80GiB)"))
	}
	for _, f := range fields {
		if f.num == nil {
			continue
		}
		if v := *f.num(&r); v < 1 || v > f.max {
			add(fmt.Errorf("%s: %d is out of range (1 to %d)", f.key, v, f.max))
		}
	}
	if math.IsNaN(r.Headroom) || r.Headroom < 0 || r.Headroom >= 100 {
		add(fmt.Errorf("headroom: %v is out of range (a percentage from 0 to below 100)", r.Headroom))
	}
	if strings.TrimSpace(r.LoraTargets) == "" {
		add(fmt.Errorf("lora_targets: empty (use all-linear, attention or module names such as q_proj,v_proj)"))
	}
	if r.Mode == ModeTrain {
		if r.Autocast && r.Dtype == DtypeFP32 {
			add(fmt.Errorf("autocast: autocast computes in dtype over fp32 weights, so dtype must be bf16 or fp16"))
		}
		if r.Master && r.Dtype == DtypeFP32 {
			add(fmt.Errorf("master: fp32 master weights need 16-bit weights (dtype bf16 or fp16)"))
		}
		if r.Master && r.Autocast {
			add(fmt.Errorf("master: autocast already keeps fp32 weights; use master=true or autocast=true, not both"))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// ParseQuery reads a URL query (or any key/value list in the vocabulary) on
// top of DefaultRequest and validates the result. Unknown keys, repeated
// keys and bad values are errors that name the key. A config without a model
// implies model=custom.
func ParseQuery(q url.Values) (Request, error) {
	r := DefaultRequest()
	var errs []string
	for _, k := range sortedKeys(q) {
		vs := q[k]
		if len(vs) > 1 {
			errs = append(errs, fmt.Sprintf("%s: given %d times", k, len(vs)))
			continue
		}
		if err := r.Set(k, vs[0]); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return r, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	if r.Config != "" && !q.Has("model") {
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
