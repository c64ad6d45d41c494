package triage

// vLLM's KV-cache budget checks and its start-up free-memory check.

var (
	vllmNoMemHead  = lazy(`No\s+available\s+memory\s+for\s+the\s+cache\s+blocks\.?`)
	vllmSeqLenHead = lazy(`(?:The\s+model'?s\s+)?max\s+seq\s+len\s*\((\d+)\)\s+is\s+larger\s+than\s+the\s+maximum\s+number\s+of\s+tokens\s+that\s+can\s+be\s+stored\s+in\s+KV\s+cache\s*\((\d+)\)\.?`)
	vllmServeHead  = lazy(`To\s+serve\s+at\s+least\s+one\s+request\s+with\s+the\s+\S+\s+max\s+seq\s+len\s*\((\d+)\)`)
	reVLLMNeeded   = lazy(`(\d+(?:\.\d+)?)\s*GiB\s+KV\s+cache\s+is\s+needed`)
	reVLLMAvail    = lazy(`available\s+KV\s+cache\s+memory\s*\(\s*(\d+(?:\.\d+)?)\s*GiB\s*\)\.?`)
	reVLLMEstimate = lazy(`estimated\s+maximum\s+model\s+length\s+is\s+(\d+)\.?`)
	reVLLMTry      = lazy("^\\s*Try\\s+increasing\\s+`?gpu_memory_utilization`?(?:\\s+or\\s+decreasing\\s+`?max_model_len`?)?\\s+when\\s+initializing\\s+the\\s+engine\\.?(?:\\s*See\\s+https?://\\S+\\s+for\\s+more\\s+details\\.?)?")
	vllmStartHead  = lazy(`Free\s+memory\s+on\s+device(?:\s*\[?\s*([a-z]+:\d+)\]?)?\s*\(\s*(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)\s*GiB\s*\)\s+on\s+startup\s+is\s+less\s+than\s+desired\s+GPU\s+memory\s+utilization\s*\(\s*(\d+(?:\.\d+)?)\s*,\s*(\d+(?:\.\d+)?)\s*GiB\s*\)\.?(?:\s*Decrease\s+GPU\s+memory\s+utilization\s+or\s+reduce\s+GPU\s+memory\s+used\s+by\s+other\s+processes\.?)?`)
)

// parseVLLMKV reads vLLM's KV-cache checks (V0 worker and V1
// kv_cache_utils wordings).
func parseVLLMKV(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindVLLM, Backend: BackendVLLM}
	m := newMsg(p, h, &f)
	switch h.f.name {
	case "vllm-seqlen":
		f.Variant = "max seq len larger than KV cache tokens"
		f.MaxModelLen = m.integer("max_model_len", "Max model length", h.sub, 1)
		f.KVCacheTokens = m.integer("kv_cache_tokens", "Tokens the KV cache can hold", h.sub, 2)
	case "vllm-serve":
		f.Variant = "KV cache needed larger than available (V1)"
		f.MaxModelLen = m.integer("max_model_len", "Max model length", h.sub, 1)
		m.hi = min(m.hi, h.end+600)
		if sub := m.find(reVLLMNeeded()); sub != nil {
			f.KVNeededBytes = m.gib("kv_needed_bytes", "KV cache needed", sub)
		}
		if sub := m.find(reVLLMAvail()); sub != nil {
			f.KVAvailableBytes = m.gib("kv_available_bytes", "KV cache available", sub)
		}
		if sub := m.find(reVLLMEstimate()); sub != nil {
			f.EstimatedMaxModelLen = m.integer("estimated_max_model_len", "Estimated max model length", sub, 1)
		}
	default:
		f.Variant = "no available memory for the cache blocks"
	}
	m.extend(reVLLMTry())
	return m.done()
}

// gib reads a vLLM "<x> GiB" value in group 1 of sub (GiB = 2^30).
func (m *msg) gib(key, label string, sub []int) *Bytes {
	num := m.group(sub, 1)
	b, err := parseSize(num, "GiB")
	if err != nil {
		return nil
	}
	m.addField(Field{Key: key, Label: label, Printed: num + " GiB", Bytes: &b, Rule: unitRule(num, "GiB")}, sub)
	return &b
}

// parseVLLMStart reads "Free memory on device (F/T GiB) on startup is less
// than desired GPU memory utilization (U, R GiB)".
func parseVLLMStart(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindVLLMStartup, Backend: BackendVLLM, Device: p.text[max(0, h.sub[2]):max(0, h.sub[3])]}
	m := newMsg(p, h, &f)
	if f.Device != "" {
		f.Variant = "with device name"
	} else {
		f.Variant = "without device name (older)"
	}
	f.FreeBytes = m.gib("free_bytes", "Free on the device", []int{h.sub[0], h.sub[1], h.sub[4], h.sub[5]})
	f.TotalBytes = m.gib("total_bytes", "Total on the device", []int{h.sub[0], h.sub[1], h.sub[6], h.sub[7]})
	f.GPUMemoryUtilization = m.decimal("gpu_memory_utilization", "gpu_memory_utilization", h.sub, 4)
	f.RequestedBytes = m.gib("requested_bytes", "Requested by the utilization", []int{h.sub[0], h.sub[1], h.sub[10], h.sub[11]})
	return m.done()
}
