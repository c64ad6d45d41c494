package estimator

import (
	"fmt"
	"strconv"
	"strings"
)

// field is one key of the request vocabulary and the Request field it names.
// Exactly one of text, num, flag and pct is set; Get and Set read and write
// the field through it, so a key is described once.
type field struct {
	key string
	// text is a string field; norm turns what Set is given into its value.
	text func(*Request) *string
	norm func(value string) string
	// num is a whole-number field that Validate keeps within 1 to max.
	num func(*Request) *int
	max int
	// flag is a true/false field.
	flag func(*Request) *bool
	// pct is a percentage; Set accepts a trailing %.
	pct func(*Request) *float64
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

// fields lists the vocabulary in the order of the Request fields.
var fields = []field{
	{key: "model", text: func(r *Request) *string { return &r.Model }, norm: lowerTrim},
	{key: "config", text: func(r *Request) *string { return &r.Config }, norm: asGiven},
	{key: "gpu", text: func(r *Request) *string { return &r.GPU }, norm: gpuValue},
	{key: "mode", text: func(r *Request) *string { return &r.Mode }, norm: lowerTrim},
	{key: "method", text: func(r *Request) *string { return &r.Method }, norm: lowerTrim},
	{key: "dtype", text: func(r *Request) *string { return &r.Dtype }, norm: lowerTrim},
	{key: "master", flag: func(r *Request) *bool { return &r.Master }},
	{key: "autocast", flag: func(r *Request) *bool { return &r.Autocast }},
	{key: "optimizer", text: func(r *Request) *string { return &r.Optimizer }, norm: lowerTrim},
	{key: "batch", num: func(r *Request) *int { return &r.Batch }, max: MaxBatch},
	{key: "seq", num: func(r *Request) *int { return &r.Seq }, max: MaxSeq},
	{key: "accum", num: func(r *Request) *int { return &r.Accum }, max: MaxAccum},
	{key: "ckpt", text: func(r *Request) *string { return &r.Ckpt }, norm: lowerTrim},
	{key: "attn", text: func(r *Request) *string { return &r.Attn }, norm: lowerTrim},
	{key: "logits", text: func(r *Request) *string { return &r.Logits }, norm: lowerTrim},
	{key: "gpus", num: func(r *Request) *int { return &r.GPUs }, max: MaxGPUs},
	{key: "shard", text: func(r *Request) *string { return &r.Shard }, norm: lowerTrim},
	{key: "lora_rank", num: func(r *Request) *int { return &r.LoraRank }, max: MaxLoraRank},
	{key: "lora_targets", text: func(r *Request) *string { return &r.LoraTargets }, norm: moduleList},
	{key: "quant", text: func(r *Request) *string { return &r.Quant }, norm: lowerTrim},
	{key: "kv_dtype", text: func(r *Request) *string { return &r.KVDtype }, norm: lowerTrim},
	{key: "headroom", pct: func(r *Request) *float64 { return &r.Headroom }},
	{key: "activations", text: func(r *Request) *string { return &r.Activations }, norm: lowerTrim},
}

func fieldKeys() []string {
	ks := make([]string, len(fields))
	for i, f := range fields {
		ks[i] = f.key
	}
	return ks
}

// fieldOf returns the field named by key, or nil for an unknown key.
func fieldOf(key string) *field {
	for i := range fields {
		if fields[i].key == key {
			return &fields[i]
		}
	}
	return nil
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
	case f.flag != nil:
		return strconv.FormatBool(*f.flag(&r))
	}
	return strconv.FormatFloat(*f.pct(&r), 'f', -1, 64)
}

// Set parses value into the field named by key, as ParseQuery does for one
// query parameter. The error names the key and the bad value.
func (r *Request) Set(key, value string) error {
	f := fieldOf(key)
	v := strings.TrimSpace(value)
	switch {
	case f == nil:
		return fmt.Errorf("unknown parameter %q (known: %s)", key, strings.Join(Keys, ", "))
	case f.text != nil:
		*f.text(r) = f.norm(value)
	case f.num != nil:
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%s: %q is not a whole number", key, value)
		}
		*f.num(r) = n
	case f.flag != nil:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s: %q is not true or false", key, value)
		}
		*f.flag(r) = b
	default:
		p, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil {
			return fmt.Errorf("%s: %q is not a percentage", key, value)
		}
		*f.pct(r) = p
	}
	return nil
}
