package triage

import (
	"slices"
	"strings"
)

// Caching-allocator messages: CUDA and its hipified/ported twins (HIP, XPU,
// NPU, MLU, ...), in the 1.x parenthesised wording (≤ 2.0) and the 2.x
// sentence wording (2.1+), plus fragments of the parenthesised fields.

var (
	allocHead    = lazy(`(CUDA|HIP|XPU|NPU|MLU|MUSA|GCU|DCU|CNRT|HPU|MTIA|PrivateUse1)\s+out\s+of\s+memory\b|(Current\s+platform\s+can\s+NOT\s+allocate\s+memory\s+block)`)
	triedHead    = rx(`Tried\s+to\s+allocate\s+(?:SIZE|more\s+than\s+1\s*EB)`)
	fragmentHead = rx(`SIZE\s+(?:total\s+capacity|already\s+allocated|current\s+active|allowed|reserved\s+in\s+total\s+by\s+PyTorch|cached)\s*[;)]`)
	reTried      = rx(`Tried\s+to\s+allocate\s+SIZE`)
	reTried1EB   = lazy(`Tried\s+to\s+allocate\s+more\s+than\s+1\s*EB(?:\s+memory)?\.?`)
	reIPEX4GB    = lazy(`Current\s+platform\s+can\s+NOT\s+allocate\s+memory\s+block\s+with\s+size\s+larger\s+than\s+4\s*GB!?`)
	// The device index may be missing: 2.3.x printed c10::DeviceIndex (int8)
	// as a character, so device 2 came out as byte 0x02 ("GPU  has").
	reGPU2x       = rx(`GPU[\s\x00-\x1f]*(\d+)?[\s\x00-\x1f]*has\s+a\s+total\s+capac(i?)ty\s+of\s+SIZE`)
	reGPUOnly2x   = lazy(`^\.?\s*GPU\s*(\d+)\b`)
	reTrunc23     = lazy(`^\.\s*GPU(?:\s*$|[^ \w]|\s*\n)`)
	reOfWhich     = rx(`of\s+which\s+SIZE\s+is\s+free`)
	reProcess     = rx(`Process\s+(\d+)\s+has\s+SIZE\s+memory\s+in\s+use`)
	reSelf        = rx(`this\s+process\s+has\s+SIZE\s+memory\s+in\s+use`)
	reAllocated2x = rx(`Of\s+the\s+allocated\s+memory\s+SIZE\s+is\s+allocated\s+by\s+PyTorch`)
	rePrivate     = rx(`with\s+SIZE\s+allocated\s+in\s+private\s+pools`)
	reUnalloc2x   = rx(`SIZE\s+is\s+reserved\s+by\s+PyTorch\s+but\s+unallocated`)
	reGPU1x       = lazy(`\(\s*(?:GPU|NPU|XPU|MLU|device)\s*(\d+)\s*;`)
	reTotal1x     = rx(`SIZE\s+total\s+capacity\b`)
	reAlready1x   = rx(`SIZE\s+already\s+allocated\b`)
	reActive1x    = rx(`SIZE\s+current\s+active\b`)
	reFree1x      = rx(`SIZE\s+free\s*[;)]`)
	reAllowed     = rx(`SIZE\s+allowed\s*;`)
	reReserved1x  = rx(`SIZE\s+reserved\s+in\s+total\s+by\s+PyTorch\)?`)
	reCached1x    = rx(`SIZE\s+cached\s*\)?`)
	reHint        = lazy(`^\.?\s*If\s+reserved\s+(?:but\s+unallocated\s+)?memory\s+is\s+(?:large|(?:>>|&gt;&gt;)\s*allocated\s+memory)\s+try\s+setting\s+(\S+?)\s+to\s+avoid\s+fragmentation\.?(?:\s+See\s+documentation\s+for\s+Memory\s+Management(?:\s+and\s+PYTORCH_\w+|\s*\(\s*https?://[^\s)]*\)?)?)?`)
	reOldHint     = lazy(`(?:>>|&gt;&gt;)\s*allocated\s+memory`)
	reConfVar     = lazy(`\b(PYTORCH_(?:[A-Z]+_)?ALLOC_CONF)\b`)
	reEmptyCache  = lazy(`^\.?\s*Please\s+use\s+` + "`" + `?empty_cache` + "`" + `?\s+to\s+release\s+all\s+unoccupied\s+cached\s+memory\.?`)
	reSecondTried = lazy(`Tried\s+to\s+allocate`)
	reFullStop    = lazy(`^\.`)
	reBlankLine   = lazy(`\n[ \t\r]*\n`)
	reHeadOnlyEnd = lazy(`^(?:\.|[ \t]*(?:\r?\n|$))`)
)

var backendNames = map[string]Backend{"CUDA": BackendCUDA, "HIP": BackendHIP, "XPU": BackendXPU, "NPU": BackendNPU}

// parseAlloc reads a caching-allocator message starting at a "<BACKEND> out
// of memory" head or at a bare "Tried to allocate" head.
func parseAlloc(p *parser, h head) (Finding, bool) {
	f := Finding{}
	m := newMsg(p, h, &f)
	word := "CUDA"
	switch {
	case h.f.name != "alloc":
	case m.group(h.sub, 2) != "":
		word = "XPU" // Intel Extension for PyTorch's allocator
	default:
		word = m.group(h.sub, 1)
	}
	f.Backend = backendNames[word]
	if f.Backend == "" {
		f.Backend = Backend(strings.ToLower(word))
	}
	// A second "Tried to allocate" starts another (truncated) message, and
	// one far past the head belongs to some other text.
	if first := m.find(reSecondTried()); first != nil {
		if first[0]-h.end > 200 {
			m.hi = first[0]
		} else if next := m.findFrom(reSecondTried(), first[1]); next != nil {
			m.hi = next[0]
		}
	}
	m.end = h.end
	// A message has no blank line; one ends it.
	if i := reBlankLine().FindStringIndex(p.text[h.end:m.hi]); i != nil {
		m.hi = h.end + i[0]
	}

	var variants []string
	var one1EB, is1x, is2x, truncated bool
	ipex := m.find(reIPEX4GB()) != nil
	if sub := m.find(reTried()); sub != nil {
		f.TriedBytes = m.size("tried_bytes", "Tried to allocate", sub, 1)
		rest := p.text[sub[1]:m.hi]
		if reTrunc23().MatchString(rest) && !reGPU2x().MatchString(rest) {
			truncated = true
			m.end = max(m.end, sub[1]+strings.Index(rest, "GPU")+3)
		}
		if g := reGPUOnly2x().FindStringSubmatchIndex(rest); g != nil && !reGPU2x().MatchString(rest) {
			for i := range g {
				if g[i] >= 0 {
					g[i] += sub[1]
				}
			}
			m.end = max(m.end, g[1])
			f.GPUIndex = m.index(g, 1)
			is2x = true
		}
	} else if m.find(reTried1EB()) != nil {
		one1EB = true
	}

	// 2.x sentence wording.
	if sub := m.find(reGPU2x()); sub != nil {
		is2x = true
		f.GPUIndex = m.index(sub, 1)
		if f.GPUIndex == nil {
			variants = append(variants, "device index printed as a character (2.3.x bug)")
		}
		f.TotalBytes = m.size("total_bytes", "Total capacity", sub, 3)
		if m.group(sub, 2) == "" {
			variants = append(variants, "capacty typo (2.1)")
		}
	}
	// The device sentences (free, processes, allowed) come before "Of the
	// allocated memory"; past it they belong to some other text.
	hi := m.hi
	if sub := reAllocated2x().FindStringIndex(p.text[m.lo:m.hi]); sub != nil {
		m.hi = m.lo + sub[0]
	}
	if sub := m.find(reOfWhich()); sub != nil {
		is2x = true
		f.FreeBytes = m.size("free_bytes", "Free on the device", sub, 1)
	}
	for _, sub := range m.findAll(reProcess()) {
		pid := m.integer("other_processes.pid", "Process id", sub, 1)
		b := m.size("other_processes.bytes", "Held by process "+m.group(sub, 1), sub, 2)
		if pid != nil && b != nil {
			f.OtherProcesses = append(f.OtherProcesses, Process{PID: *pid, Bytes: *b})
		}
		is2x = true
	}
	if sub := m.find(reSelf()); sub != nil {
		is2x = true
		f.ProcessInUseBytes = m.size("process_in_use_bytes", "This process in use (incl. non-PyTorch)", sub, 1)
	}
	var allowed2x []int
	if is2x {
		allowed2x = m.find(reAllowed())
	}
	m.hi = hi
	if sub := m.find(reAllocated2x()); sub != nil {
		is2x = true
		f.AllocatedBytes = m.size("allocated_bytes", "Allocated by PyTorch", sub, 1)
	}
	if sub := m.find(rePrivate()); sub != nil {
		is2x = true
		f.PrivatePoolsBytes = m.size("private_pools_bytes", "In private pools (CUDA Graphs)", sub, 1)
		variants = append(variants, "private pools (2.4+)")
	}
	if sub := m.find(reUnalloc2x()); sub != nil {
		is2x = true
		f.ReservedUnallocatedBytes = m.size("reserved_unallocated_bytes", "Reserved by PyTorch but unallocated", sub, 1)
		if m.end == sub[1] {
			m.extend(reFullStop()) // the sentence's period belongs to the message
		}
	}

	// 1.x parenthesised wording: the fields lie inside "(GPU N; … )".
	if !is2x {
		hi := m.hi
		if sub := m.find(reGPU1x()); sub != nil {
			is1x = true
			f.GPUIndex = m.index(sub, 1)
			if c := strings.IndexByte(p.text[sub[1]:m.hi], ')'); c >= 0 {
				m.hi = sub[1] + c + 1
			}
		}
		is1x = readParenFields(m, &f, &variants) || is1x
		m.hi = hi
	} else if allowed2x != nil {
		f.AllowedBytes = m.size("allowed_bytes", "Allowed (memory fraction)", allowed2x, 1)
	}

	m.extend(reHint())
	if v := reConfVar().FindStringSubmatch(p.text[m.lo:m.end]); v != nil {
		f.AllocConfVar = v[1]
	}
	m.extend(reEmptyCache())
	hintText := p.text[m.lo:m.end]

	switch {
	case strings.Contains(hintText, "PYTORCH_ALLOC_CONF="):
		variants = append(variants, "PYTORCH_ALLOC_CONF hint (2.9+)")
		f.PyTorchVersion = "2.9+"
	case strings.Contains(hintText, "expandable_segments"):
		variants = append(variants, "expandable_segments hint (2.2+)")
		f.PyTorchVersion = "2.2-2.8"
	case reOldHint().MatchString(hintText):
		variants = append(variants, "max_split_size_mb hint (1.10-2.0)")
		f.PyTorchVersion = "1.10-2.0"
	case strings.Contains(hintText, "max_split_size_mb"):
		variants = append(variants, "max_split_size_mb hint")
	}
	if ipex {
		variants = append(variants, "IPEX 4GB single-allocation limit")
	}
	switch {
	case slices.Contains(variants, "device index printed as a character (2.3.x bug)"):
		f.PyTorchVersion = "2.3"
	case slices.Contains(variants, "capacty typo (2.1)"):
		f.PyTorchVersion = "2.1"
	case slices.Contains(variants, "private pools (2.4+)") && f.PyTorchVersion != "2.9+":
		f.PyTorchVersion = "2.4+"
	case is2x && f.PyTorchVersion == "":
		f.PyTorchVersion = "2.1+"
	}

	kindBase := Kind(f.Backend)
	if f.Backend == BackendCUDA {
		switch {
		case one1EB:
			kindBase = KindCUDA1EB
		case truncated:
			kindBase = KindCUDA2xTruncated
			variants = append(variants, "truncated after GPU (2.3.x bug)")
			f.PyTorchVersion = "2.3"
		case is2x:
			kindBase = KindCUDA2x
		case is1x:
			kindBase = KindCUDA1x
		default:
			kindBase = KindCUDATruncated
		}
	}
	f.Kind = kindBase
	f.Variant = strings.Join(variants, " + ")
	if h.f.name != "alloc" && f.TriedBytes == nil && !one1EB {
		return Finding{}, false
	}
	if len(f.Fields) == 0 && !one1EB && !ipex && !reHeadOnlyEnd().MatchString(p.text[h.end:m.hi]) {
		// "CUDA out of memory errors" in prose, not a message.
		return Finding{}, false
	}
	return m.done()
}

// readParenFields reads the 1.x parenthesised fields ("X total capacity; X
// already allocated; X free; [X allowed;] X reserved in total by PyTorch)" or
// "X cached)") and reports whether any was found.
func readParenFields(m *msg, f *Finding, variants *[]string) bool {
	found := false
	if sub := m.find(reTotal1x()); sub != nil {
		f.TotalBytes = m.size("total_bytes", "Total capacity", sub, 1)
		found = true
	}
	if sub := m.find(reAlready1x()); sub != nil {
		f.AlreadyAllocatedBytes = m.size("already_allocated_bytes", "Already allocated", sub, 1)
		found = true
	}
	if sub := m.find(reActive1x()); sub != nil {
		f.CurrentActiveBytes = m.size("current_active_bytes", "Current active", sub, 1)
		found = true
	}
	if sub := m.find(reFree1x()); sub != nil {
		f.FreeBytes = m.size("free_bytes", "Free on the device", sub, 1)
		found = true
	}
	if sub := m.find(reAllowed()); sub != nil {
		f.AllowedBytes = m.size("allowed_bytes", "Allowed (memory fraction)", sub, 1)
		*variants = append(*variants, "allowed (1.8+, memory fraction set)")
		found = true
	}
	if sub := m.find(reReserved1x()); sub != nil {
		f.ReservedTotalBytes = m.size("reserved_total_bytes", "Reserved in total by PyTorch", sub, 1)
		*variants = append(*variants, "reserved in total by PyTorch (1.4-2.0)")
		f.PyTorchVersion = "1.4-2.0"
		found = true
	} else if sub := m.find(reCached1x()); sub != nil {
		f.ReservedUnallocatedBytes = m.size("reserved_unallocated_bytes", "Cached (reserved but unallocated)", sub, 1)
		*variants = append(*variants, "cached (1.0-1.3)")
		f.PyTorchVersion = "1.0-1.3"
		found = true
	}
	return found
}

// parseFragment reads a run of 1.x parenthesised fields with no head, e.g.
// "4.77 GiB allowed; 4.74 GiB reserved in total by PyTorch".
func parseFragment(p *parser, h head) (Finding, bool) {
	f := Finding{Backend: BackendCUDA, Kind: KindCUDA1xFragment}
	m := newMsg(p, h, &f)
	// Start at the line start (a "(GPU 0;" may precede the first field).
	lo := h.start
	for lo > p.consumed && lo > h.start-200 && p.text[lo-1] != '\n' {
		lo--
	}
	// The fields run to the closing parenthesis, which a wrapped line may
	// put on a later line; without one, to the end of the line.
	if i := reBlankLine().FindStringIndex(p.text[h.start:m.hi]); i != nil {
		m.hi = h.start + i[0]
	}
	if c := strings.IndexByte(p.text[h.start:m.hi], ')'); c >= 0 {
		m.hi = h.start + c + 1
	} else if nl := strings.IndexByte(p.text[h.start:m.hi], '\n'); nl >= 0 {
		m.hi = h.start + nl
	}
	m.lo = lo
	var variants []string
	if sub := m.find(reGPU1x()); sub != nil {
		f.GPUIndex = m.index(sub, 1)
	}
	if !readParenFields(m, &f, &variants) {
		return Finding{}, false
	}
	start := m.hi
	for _, fd := range f.Fields {
		start = min(start, fd.Start)
	}
	f.Start = start
	f.Variant = strings.Join(variants, " + ")
	f.End = m.end
	sortFields(f.Fields)
	return f, true
}
