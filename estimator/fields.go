package estimator

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"oomscope/bytesize"
)

// Kinds of request fields: how a value is written and checked.
const (
	KindChoice   = "choice"   // one of Choices
	KindText     = "text"     // free text (model id, GPU, config, LoRA targets)
	KindInt      = "int"      // a whole number from Min to Max (0 may mean Auto)
	KindBytes    = "bytes"    // a byte count, written as digits or a size such as 16GiB
	KindFlag     = "flag"     // true or false
	KindPercent  = "percent"  // a percentage from 0 to below 100, "%" optional
	KindFraction = "fraction" // a fraction above 0 up to 1 ("90%" also reads 0.9)
)

// Choice is one allowed value of a choice field, with the words a form
// shows for it.
type Choice struct {
	Value string `json:"value"`
	Label string `json:"label"`
	Help  string `json:"help,omitempty"`
}

// Field describes one key of the request vocabulary, for the page's form,
// the CLI's flags and error messages alike: its label, help text in a
// user's words, unit, the modes it applies to, and how its value is
// written. Get and Set read and write the Request field through it, so a
// key is described once.
type Field struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Help  string `json:"help"`
	// Unit is what a number counts ("tokens", "GPUs"), "" for none.
	Unit string `json:"unit,omitempty"`
	// Kind is one of the Kind constants.
	Kind    string   `json:"kind"`
	Choices []Choice `json:"choices,omitempty"`
	// Min and Max bound KindInt and KindBytes values.
	Min int64 `json:"min,omitempty"`
	Max int64 `json:"max,omitempty"`
	// Auto says what 0 means for a number whose Min is 0 ("the model's
	// context").
	Auto string `json:"auto,omitempty"`
	// Modes lists the modes the field matters in; empty means all.
	Modes []string `json:"modes,omitempty"`

	// applies narrows Modes (LoRA fields only for LoRA and QLoRA).
	applies func(r *Request) bool
	// One accessor matches Kind: text for choice and text, num for int,
	// big for bytes, flag, and real for percent and fraction.
	text func(*Request) *string
	norm func(value string) string
	num  func(*Request) *int
	big  func(*Request) *int64
	flag func(*Request) *bool
	real func(*Request) *float64
}

// lowerTrim is the normalization of enumerated values and catalog ids.
func lowerTrim(v string) string { return strings.ToLower(strings.TrimSpace(v)) }

// asGiven keeps a value as it is (the text of a config.json).
func asGiven(v string) string { return v }

// gpuValue lower-cases a catalog id and keeps a capacity as written.
func gpuValue(v string) string {
	v = strings.TrimSpace(v)
	if _, ok := LookupGPU(v); ok {
		return strings.ToLower(v)
	}
	return v
}

// moduleList lower-cases a LoRA target list and drops its spaces.
func moduleList(v string) string { return strings.ReplaceAll(lowerTrim(v), " ", "") }

var (
	train      = []string{ModeTrain}
	trainInfer = []string{ModeTrain, ModeInfer}
	inferServe = []string{ModeInfer, ModeServe}
	serve      = []string{ModeServe}
)

func peftOnly(r *Request) bool { return r.Method != MethodFull }

// fields is the vocabulary in the order of the Request fields
// (docs/estimator.md#9-one-vocabulary-one-field-table).
var fields = []Field{
	{Key: "model", Label: "Model", Kind: KindText, norm: lowerTrim, text: func(r *Request) *string { return &r.Model },
		Help: "A model from the catalog (its sizes come from its Hugging Face config.json), or custom to paste your own config.json."},
	{Key: "config", Label: "config.json", Kind: KindText, norm: asGiven, text: func(r *Request) *string { return &r.Config },
		Help:    "The text of a Hugging Face config.json: hidden size, layers, heads, vocabulary. It is read in your browser, never uploaded.",
		applies: func(r *Request) bool { return r.Model == ModelCustom }},
	{Key: "checkpoint_bytes", Label: "Checkpoint size", Kind: KindBytes, Unit: "bytes", Max: MaxCheckpointBytes, Auto: "count from the config",
		big: func(r *Request) *int64 { return &r.CheckpointBytes }, Modes: inferServe,
		Help: "The exact bytes of the stored weights, from model.safetensors.index.json (metadata.total_size) or a .safetensors header. Use it for quantized checkpoints; 0 counts the weights from the config."},
	{Key: "gpu", Label: "GPU", Kind: KindText, norm: gpuValue, text: func(r *Request) *string { return &r.GPU },
		Help: "The card: a catalog GPU, or the total capacity PyTorch reports (an OOM message's \"total capacity\", e.g. 79.19GiB)."},
	{Key: "mode", Label: "Mode", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.Mode },
		Help:    "Training, plain inference (PyTorch / Hugging Face generate), or serving with vLLM or SGLang, which reserve a fixed share of the card up front.",
		Choices: []Choice{{ModeTrain, "Training", ""}, {ModeInfer, "Inference", ""}, {ModeServe, "Serving (vLLM / SGLang)", ""}}},
	{Key: "method", Label: "Method", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.Method }, Modes: train,
		Help:    "Full fine-tuning trains every weight. LoRA freezes the model and trains small adapter matrices; QLoRA also stores the frozen weights in 4-bit NF4.",
		Choices: []Choice{{MethodFull, "Full fine-tuning", ""}, {MethodLoRA, "LoRA", ""}, {MethodQLoRA, "QLoRA (NF4 base)", ""}}},
	{Key: "dtype", Label: "Precision", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.Dtype },
		Help:    "The dtype weights are loaded in and activations computed in. bf16 needs an Ampere or newer card; fp16 is the choice before that.",
		Choices: []Choice{{DtypeFP32, "fp32", "4 bytes per value"}, {DtypeBF16, "bf16", "2 bytes per value"}, {DtypeFP16, "fp16", "2 bytes per value"}}},
	{Key: "master", Label: "fp32 master weights", Kind: KindFlag, flag: func(r *Request) *bool { return &r.Master }, Modes: train,
		Help: "Keep an fp32 copy of the 16-bit weights for the optimizer step (Megatron and DeepSpeed mixed precision): 4 more bytes per trained parameter."},
	{Key: "autocast", Label: "fp32 weights + autocast", Kind: KindFlag, flag: func(r *Request) *bool { return &r.Autocast }, Modes: train,
		Help: "PyTorch AMP: weights, gradients and optimizer states stay fp32; matrix multiplies run in the 16-bit dtype. The residual stream stays fp32."},
	{Key: "optimizer", Label: "Optimizer", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.Optimizer }, Modes: train,
		Help:    "AdamW keeps two states per trained parameter, SGD with momentum and Lion one, plain SGD none; Adafactor factors its second moment into rows and columns.",
		Choices: []Choice{{OptAdamW, "AdamW", ""}, {OptAdamW8bit, "AdamW 8-bit", "bitsandbytes"}, {OptSGD, "SGD", ""}, {OptSGDMomentum, "SGD + momentum", ""}, {OptAdafactor, "Adafactor", ""}, {OptLion, "Lion", ""}}},
	{Key: "optim_dtype", Label: "Optimizer state dtype", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.OptimDtype }, Modes: train,
		Help:    "What each optimizer state is stored in. Auto is PyTorch's default: the parameter's dtype (bf16 weights give bf16 Adam states; fp32 with master weights). fp32 states on bf16 weights and gradients give the \"12 bytes per parameter\" rule of thumb.",
		Choices: []Choice{{OptimDtypeAuto, "auto (as PyTorch)", ""}, {DtypeFP32, "fp32", ""}, {DtypeBF16, "bf16", ""}, {OptimDtype8bit, "8-bit (bitsandbytes)", ""}}},
	{Key: "batch", Label: "Micro-batch", Kind: KindInt, Unit: "sequences", Min: 1, Max: MaxBatch, num: func(r *Request) *int { return &r.Batch }, Modes: trainInfer,
		Help: "Sequences per forward pass on one GPU (per_device_train_batch_size). Activations and logits grow with it."},
	{Key: "seq", Label: "Sequence length", Kind: KindInt, Unit: "tokens", Min: 1, Max: MaxSeq, num: func(r *Request) *int { return &r.Seq }, Modes: trainInfer,
		Help: "Tokens per sequence (max_seq_len, or the packed length). Size by the real length of your batches: padding to a cap that samples never reach overestimates."},
	{Key: "accum", Label: "Grad accumulation", Kind: KindInt, Unit: "steps", Min: 1, Max: MaxAccum, num: func(r *Request) *int { return &r.Accum }, Modes: train,
		Help: "Micro-batches summed before each optimizer step. It raises the global batch without raising memory."},
	{Key: "ckpt", Label: "Activation checkpointing", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.Ckpt }, Modes: train,
		Help:    "Gradient checkpointing keeps only each layer's input and recomputes the layer in backward: less memory, about a third more compute. Selective recomputes only attention scores.",
		Choices: []Choice{{CkptNone, "none", ""}, {CkptFull, "full (every layer)", ""}, {CkptSelective, "selective (attention)", ""}}},
	{Key: "attn", Label: "Attention", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.Attn }, Modes: trainInfer,
		Help:    "SDPA / FlashAttention never stores the sequence × sequence score matrix; eager attention does, which dominates at long sequences.",
		Choices: []Choice{{AttnSDPA, "SDPA / Flash", ""}, {AttnEager, "eager", ""}}},
	{Key: "logits", Label: "Logits / loss", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.Logits }, Modes: train,
		Help:    "The batch × sequence × vocabulary logits around the loss. Most trainers upcast them to fp32; chunked (or fused) cross-entropy computes the loss a slice at a time.",
		Choices: []Choice{{LogitsFP32, "fp32 upcast", ""}, {LogitsBF16, "16-bit", ""}, {LogitsChunked, "chunked CE", ""}}},
	{Key: "gpus", Label: "GPUs", Kind: KindInt, Unit: "GPUs", Min: 1, Max: MaxGPUs, num: func(r *Request) *int { return &r.GPUs }, Modes: train,
		Help: "All GPUs of the job. With tensor parallelism they form gpus ÷ tp data-parallel replicas, over which sharding splits the model states."},
	{Key: "tp", Label: "Tensor parallel", Kind: KindInt, Unit: "GPUs", Min: 1, Max: MaxTP, num: func(r *Request) *int { return &r.TP },
		Help: "Tensor-parallel size (Megatron, vLLM's --tensor-parallel-size): each layer's matrices are split across this many GPUs, and so are their activations and the KV cache's heads."},
	{Key: "shard", Label: "Sharding", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.Shard }, Modes: train,
		Help:    "How data-parallel replicas split the model states: ZeRO-1 the optimizer states, ZeRO-2 also gradients, ZeRO-3 / FSDP full shard also the weights. Activations are never sharded this way.",
		Choices: []Choice{{ShardNone, "none (replicas)", ""}, {ShardDDP, "DDP", ""}, {ShardZero1, "ZeRO-1", ""}, {ShardZero2, "ZeRO-2", ""}, {ShardZero3, "ZeRO-3 / FSDP", ""}}},
	{Key: "offload", Label: "CPU offload", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.Offload }, Modes: train,
		Help:    "Move model states to host RAM: the GPU gets room, the host must hold them (jobs die of host RAM as often as of GPU memory). The optimizer step then runs on the CPU.",
		Choices: []Choice{{OffloadNone, "none", ""}, {OffloadOptimizer, "optimizer states + gradients (ZeRO-Offload)", ""}, {OffloadParams, "parameters too (FSDP CPU offload)", ""}}},
	{Key: "lora_rank", Label: "LoRA rank", Kind: KindInt, Unit: "", Min: 1, Max: MaxLoraRank, num: func(r *Request) *int { return &r.LoraRank }, Modes: train, applies: peftOnly,
		Help: "r, the inner width of each adapter pair: an adapted d_in × d_out matrix trains r·(d_in + d_out) parameters."},
	{Key: "lora_targets", Label: "LoRA targets", Kind: KindText, norm: moduleList, text: func(r *Request) *string { return &r.LoraTargets }, Modes: train, applies: peftOnly,
		Help: "Which linears get adapters: all-linear, attention, or module names such as q_proj,v_proj (PEFT's target_modules)."},
	{Key: "quant", Label: "Weight quantization", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.Quant }, Modes: inferServe,
		Help: "How the weights are stored. Auto keeps the checkpoint's own format (its quantization_config: FP8, MXFP4, ...) or the dtype. AWQ and GPTQ are 4-bit with group scales; bitsandbytes loads 4-bit NF4.",
		Choices: []Choice{{QuantAuto, "auto (checkpoint's)", ""}, {QuantNone, "none (dtype)", ""}, {QuantFP8, "FP8", ""}, {QuantInt8, "int8", ""}, {QuantInt4, "int4", ""},
			{QuantAWQ, "AWQ 4-bit", ""}, {QuantGPTQ, "GPTQ 4-bit", ""}, {QuantBnB, "bitsandbytes NF4", ""}}},
	{Key: "kv_dtype", Label: "KV cache dtype", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.KVDtype }, Modes: inferServe,
		Help:    "The dtype of cached keys and values. FP8 halves the cache and doubles the tokens it holds.",
		Choices: []Choice{{KVAuto, "same as the model", ""}, {DtypeFP32, "fp32", ""}, {DtypeBF16, "bf16", ""}, {DtypeFP16, "fp16", ""}, {KVFP8, "fp8", ""}}},
	{Key: "engine", Label: "Engine", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.Engine }, Modes: serve,
		Help:    "The serving engine: vLLM budgets gpu_memory_utilization for weights, activations and KV cache; SGLang's mem_fraction_static budgets weights and KV cache.",
		Choices: []Choice{{EngineVLLM, "vLLM", ""}, {EngineSGLang, "SGLang", ""}}},
	{Key: "gpu_memory_utilization", Label: "GPU memory utilization", Kind: KindFraction, real: func(r *Request) *float64 { return &r.GPUMemoryUtil }, Modes: serve,
		Help: "The share of the card the engine may use (vLLM --gpu-memory-utilization, default 0.9; SGLang --mem-fraction-static). Whatever is left after weights and activations becomes KV cache."},
	{Key: "max_model_len", Label: "Max model length", Kind: KindInt, Unit: "tokens", Min: 0, Max: MaxSeq, Auto: "the model's context", num: func(r *Request) *int { return &r.MaxModelLen }, Modes: serve,
		Help: "The longest prompt + output one request may have (--max-model-len). The KV cache must hold at least one such sequence or the engine refuses to start."},
	{Key: "max_num_seqs", Label: "Max sequences", Kind: KindInt, Unit: "sequences", Min: 0, Max: MaxNumSeqs, Auto: "the engine's default", num: func(r *Request) *int { return &r.MaxNumSeqs }, Modes: serve,
		Help: "Requests batched together at most (--max-num-seqs); the start-up profile samples that many."},
	{Key: "max_num_batched_tokens", Label: "Max batched tokens", Kind: KindInt, Unit: "tokens", Min: 0, Max: MaxSeq, Auto: "the engine's default", num: func(r *Request) *int { return &r.MaxBatchedToks }, Modes: serve,
		Help: "Tokens in one forward step (--max-num-batched-tokens, the chunked-prefill size). The start-up profile runs this many, which sets the activation peak."},
	{Key: "block_size", Label: "KV block size", Kind: KindInt, Unit: "tokens", Min: 1, Max: MaxBlock, num: func(r *Request) *int { return &r.BlockSize }, Modes: serve,
		Help: "Tokens per KV cache block (--block-size, 16 by default): the pool is counted in whole blocks."},
	{Key: "headroom", Label: "Headroom", Kind: KindPercent, Unit: "%", real: func(r *Request) *float64 { return &r.Headroom }, Modes: trainInfer,
		Help: "Share of the card kept free for what no estimate sees: spikes, other processes, library growth. The fit verdict compares against the rest."},
	{Key: "activations", Label: "Activation model", Kind: KindChoice, norm: lowerTrim, text: func(r *Request) *string { return &r.Activations }, Modes: trainInfer,
		Help:    "Tally counts the tensors a real Hugging Face / torchtune layer keeps for backward, with the overheads; paper uses Korthikanti et al.'s per-layer formula without them, for comparison with papers.",
		Choices: []Choice{{ActivationsTally, "tally (measured stacks)", ""}, {ActivationsPaper, "paper (Korthikanti et al.)", ""}}},
}

// Fields returns the field table in vocabulary order. The slice is a copy.
func Fields() []Field { return slices.Clone(fields) }

// FieldByKey returns the field named by key.
func FieldByKey(key string) (Field, bool) {
	if f := fieldOf(key); f != nil {
		return *f, true
	}
	return Field{}, false
}

func fieldKeys() []string {
	ks := make([]string, len(fields))
	for i, f := range fields {
		ks[i] = f.Key
	}
	return ks
}

func choiceValues() map[string][]string {
	m := map[string][]string{}
	for _, f := range fields {
		for _, c := range f.Choices {
			m[f.Key] = append(m[f.Key], c.Value)
		}
	}
	return m
}

// fieldOf returns the field named by key, or nil for an unknown key.
func fieldOf(key string) *Field {
	for i := range fields {
		if fields[i].Key == key {
			return &fields[i]
		}
	}
	return nil
}

// ChoiceLabel is the label of one value of a choice field, the value itself
// when the field has no such choice.
func ChoiceLabel(key, value string) string {
	if f := fieldOf(key); f != nil {
		for _, c := range f.Choices {
			if c.Value == value {
				return c.Label
			}
		}
	}
	return value
}

// Applies reports whether the field named by key matters for the request:
// its mode is one of the field's modes and its own condition holds (LoRA
// fields only for LoRA and QLoRA, config only for a custom model).
func (r Request) Applies(key string) bool {
	f := fieldOf(key)
	if f == nil {
		return false
	}
	if len(f.Modes) > 0 && !slices.Contains(f.Modes, r.Mode) {
		return false
	}
	return f.applies == nil || f.applies(&r)
}

// Get returns the string form of the field named by a vocabulary key (as it
// appears in a URL query), or "" for an unknown key.
func (r Request) Get(key string) string {
	f := fieldOf(key)
	switch {
	case f == nil:
		return ""
	case f.text != nil:
		return *f.text(&r)
	case f.num != nil:
		return strconv.Itoa(*f.num(&r))
	case f.big != nil:
		return strconv.FormatInt(*f.big(&r), 10)
	case f.flag != nil:
		return strconv.FormatBool(*f.flag(&r))
	}
	return strconv.FormatFloat(*f.real(&r), 'f', -1, 64)
}

// Set parses value into the field named by key, as ParseQuery does for one
// query parameter. The error is a *FieldError naming the key and saying
// what is wrong with the value.
func (r *Request) Set(key, value string) error {
	f := fieldOf(key)
	v := strings.TrimSpace(value)
	bad := func(format string, args ...any) error {
		return &FieldError{Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case f == nil:
		return bad("unknown parameter %q (known: %s)", key, strings.Join(Keys, ", "))
	case f.text != nil:
		*f.text(r) = f.norm(value)
	case f.num != nil:
		n, err := strconv.Atoi(v)
		if err != nil {
			return bad("%q is not a whole number: enter %s", value, f.rangeWords())
		}
		*f.num(r) = n
	case f.big != nil:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			if n, err = bytesize.Parse(v); err != nil {
				return bad("%q is not a byte count: enter digits or a size such as 16.1GB", value)
			}
		}
		*f.big(r) = n
	case f.flag != nil:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return bad("%q is not true or false", value)
		}
		*f.flag(r) = b
	default:
		pct := strings.HasSuffix(v, "%")
		x, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil {
			if f.Kind == KindPercent {
				return bad("%q is not a percentage", value)
			}
			return bad("%q is not a fraction such as 0.9", value)
		}
		if pct && f.Kind == KindFraction {
			x /= 100
		}
		*f.real(r) = x
	}
	return nil
}

// rangeWords is the allowed range of a number field in words.
func (f *Field) rangeWords() string {
	s := bytesize.Commas(f.Min) + " to " + bytesize.Commas(f.Max)
	if f.Min == 0 && f.Auto != "" {
		s += " (0: " + f.Auto + ")"
	}
	return s
}

// check returns what is wrong with the field's value in r, "" if nothing.
func (f *Field) check(r *Request) string {
	switch {
	case f.Kind == KindChoice:
		v := *f.text(r)
		for _, c := range f.Choices {
			if c.Value == v {
				return ""
			}
		}
		vals := make([]string, len(f.Choices))
		for i, c := range f.Choices {
			vals[i] = c.Value
		}
		return fmt.Sprintf("%q is not one of %s", v, strings.Join(vals, ", "))
	case f.num != nil:
		if v := int64(*f.num(r)); v < f.Min || v > f.Max {
			return fmt.Sprintf("%d is out of range (%s)", v, f.rangeWords())
		}
	case f.big != nil:
		if v := *f.big(r); v < f.Min || v > f.Max {
			return fmt.Sprintf("%d is out of range (0 to 64 TiB; 0: %s)", v, f.Auto)
		}
	case f.Kind == KindPercent:
		if v := *f.real(r); !finite(v) || v < 0 || v >= 100 {
			return fmt.Sprintf("%v is out of range (a percentage from 0 to below 100)", v)
		}
	case f.Kind == KindFraction:
		if v := *f.real(r); !finite(v) || v <= 0 || v > 1 {
			return fmt.Sprintf("%v is out of range (a fraction above 0, at most 1)", v)
		}
	}
	return ""
}
