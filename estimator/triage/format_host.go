package triage

// Host (CPU) allocator messages.

var (
	cpuHead       = lazy(`DefaultCPUAllocator\s*:\s*(can't\s+allocate\s+memory|not\s+enough\s+memory)\s*:\s*you\s+tried\s+to\s+allocate\s+(\d+)\s*bytes\.?`)
	reCPUErrno    = lazy(`^\s*Error\s+code\s+(\d+)(?:\s*\(([^)\n]{0,80})\))?`)
	cpuMemalign   = lazy(`posix_memalign\s*\([^)\n]{0,80}\)\s*==\s*0\s*\.\s*(\d+)\s+vs\s+0`)
	cpuTHHead     = lazy(`not\s+enough\s+memory\s*:\s*you\s+tried\s+to\s+allocate\s+(\d+)\s*GB\.?(?:\s*Buy\s+new\s+RAM!?)?`)
	reTorchDollar = lazy(`\$?\s*Torch\s*:\s*$`)
)

// parseCPU reads "DefaultCPUAllocator: can't allocate memory: you tried to
// allocate N bytes. Error code 12 (Cannot allocate memory)".
func parseCPU(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindCPU, Backend: BackendCPU}
	m := newMsg(p, h, &f)
	f.TriedBytes = m.exact("tried_bytes", "Tried to allocate", h.sub, 2)
	if m.group(h.sub, 1) == "not enough memory" {
		f.Variant = "not enough memory (Windows/Android)"
	} else {
		f.Variant = "can't allocate memory (posix_memalign)"
	}
	if sub := m.findFrom(reCPUErrno(), m.end); sub != nil && sub[0] == h.end {
		if code := m.integer("error_code", "Error code", sub, 1); code != nil && *code < 1<<20 {
			c := int(*code)
			f.ErrorCode = &c
		}
	}
	f.PyTorchVersion = "1.2+"
	return m.done()
}

// parseCPULegacy reads the pre-1.2 posix_memalign failure and the TH-era
// "not enough memory: you tried to allocate 72GB. Buy new RAM!".
func parseCPULegacy(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindCPULegacy, Backend: BackendCPU}
	m := newMsg(p, h, &f)
	if h.f.name == "cpu-th" {
		gb := m.group(h.sub, 1)
		if b, err := parseSize(gb, "GB"); err == nil {
			m.addField(Field{Key: "tried_bytes", Label: "Tried to allocate", Printed: gb + " GB", Bytes: &b,
				Rule: gb + " GB = " + gb + " × 2^30 B (TH printed nbytes/2^30, truncated)"}, h.sub)
			f.TriedBytes = &b
		}
		f.Variant = "TH (<=0.4)"
		f.PyTorchVersion = "<=0.4"
		if lo := max(p.consumed, h.start-20); lo < h.start {
			if d := reTorchDollar().FindStringIndex(p.text[lo:h.start]); d != nil {
				f.Start = lo + d[0]
			}
		}
		f.End = m.end
		return f, true
	}
	if code := m.integer("error_code", "Error code", h.sub, 1); code != nil && *code < 1<<20 {
		c := int(*code)
		f.ErrorCode = &c
	}
	f.Variant = "posix_memalign (<1.2)"
	f.PyTorchVersion = "<1.2"
	return m.done()
}
