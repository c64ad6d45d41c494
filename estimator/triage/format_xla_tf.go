package triage

import (
	"math/big"
	"strconv"
	"strings"
)

// JAX/XLA and TensorFlow messages.

// xlaSize matches XLA's unspaced sizes: "372.76MiB", "48.5KiB", "0B".
const xlaSize = `(\d+(?:\.\d+)?)(B|KiB|MiB|GiB|TiB)`

var (
	xlaHead     = lazy(`(?:(RESOURCE_EXHAUSTED|Resource\s+exhausted)\s*:\s*)?Out\s+of\s+memory\s+(?:while\s+trying\s+to\s+allocate|allocating)\s+(\d[\d,]*)\s*bytes\.?(?:\s*\(allocated\s+so\s+far\s*:\s*(\d[\d,]*)\s*bytes\)\.?)?`)
	xlaPJRTHead = lazy(`(?:RESOURCE_EXHAUSTED\s*:\s*)?Failed\s+to\s+allocate\s+request\s+for\s+` + xlaSize + `\s*\((\d+)B\)\s+on\s+device\s+ordinal\s+(\d+)`)
	xlaTPUHead  = lazy(`(?:XLA:TPU\s+compile\s+permanent\s+error\.\s*)?Ran\s+out\s+of\s+memory\s+in\s+memory\s+space\s+(\w+)\s*\.?(?:\s*Used\s+(\d+(?:\.\d+)?)([KMGT])\s+of\s+(\d+(?:\.\d+)?)([KMGT])\s+\w+\.?(?:\s*Exceeded\s+\w+\s+capacity\s+by\s+(\d+(?:\.\d+)?)([KMGT])\.?)?)?`)
	reXLAStats  = lazy(`BufferAssignment\s+stats\s*:`)
	reXLAStat   = lazy(`^\s*(parameter|constant|maybe_live_out|preallocated\s+temp|total)\s+(allocation|fragmentation)\s*:\s*` + xlaSize + `(?:\s*\([\d.]+%\))?`)

	tfHead      = lazy(`OOM\s+when\s+allocating\s+tensor\s+(?:with|of)\s+shape\s*\[([\d,\s]{0,200})\](?:\s+and\s+type\s+(\w+))?(?:\s+on\s+(\S+))?(?:\s+by\s+allocator\s+(\w+))?`)
	reTFHint    = lazy(`^\s*\[?\[?\s*(?:\{\{node\s+[^}\n]*\}\}\s*)?(?:\]\]\s*)?(?:Hint\s*:\s*If\s+you\s+want\s+to\s+see\s+a\s+list\s+of\s+allocated\s+tensors\s+when\s+OOM\s+happens,\s+add\s+report_tensor_allocations_upon_oom\s+to\s+RunOptions\s+for\s+current\s+allocation\s+info\.?)`)
	reTFGPU     = lazy(`(?:device:GPU:|GPU_)(\d+)`)
	tfEagerHead = lazy(`(?:ResourceExhaustedError|Resource\s+exhausted|RESOURCE_EXHAUSTED)\s*:\s*failed\s+to\s+allocate\s+memory(?:\s*\[Op:(\w+)\])?`)
	tfBFCHead   = lazy(`Allocator\s+\((\w+)\)\s+ran\s+out\s+of\s+memory\s+trying\s+to\s+allocate\s+` + xlaSize + `(?:\s*\(rounded\s+to\s+(\d+)\))?`)
	reTFNotOOM  = lazy(`^(?:\s+with\s+freed_by_count=\d+)?\.?\s+The\s+caller\s+indicates\s+that\s+this\s+is\s+not\s+a\s+failure`)
	tfDevHead   = lazy(`failed\s+to\s+allocate\s+([\d.]+)([KMG])\s*\((\d+)\s+bytes\)\s+from\s+device\s*:\s*CUDA_ERROR_OUT_OF_MEMORY(?:\s*:\s*out\s+of\s+memory)?`)
)

// tfDTypeBytes are the element sizes of TensorFlow's DataTypeString names.
var tfDTypeBytes = map[string]uint64{
	"float": 4, "double": 8, "half": 2, "bfloat16": 2, "float16": 2, "float32": 4, "float64": 8,
	"int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
	"bool": 1, "complex64": 8, "complex128": 16, "qint8": 1, "quint8": 1, "qint32": 4,
}

// parseXLA reads "RESOURCE_EXHAUSTED: Out of memory while trying to allocate
// N bytes." and the BufferAssignment stats that may follow.
func parseXLA(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindXLA, Backend: BackendXLA}
	m := newMsg(p, h, &f)
	switch pre := m.group(h.sub, 1); {
	case pre == "RESOURCE_EXHAUSTED":
		f.Variant = "RESOURCE_EXHAUSTED"
	case pre != "":
		f.Variant = "Resource exhausted (2019 wording)"
	}
	f.TriedBytes = m.exact("tried_bytes", "Out of memory while trying to allocate", h.sub, 2)
	if h.sub[6] >= 0 {
		f.Kind, f.Backend, f.Variant = KindCuPy, BackendCUDA, "CuPy memory pool"
		f.AllocatedBytes = m.exact("allocated_bytes", "Allocated so far", h.sub, 3)
	}
	readXLAStats(m, &f)
	return m.done()
}

// parseXLAPJRT reads the PJRT wording "Failed to allocate request for
// 1.00GiB (1073741824B) on device ordinal 0".
func parseXLAPJRT(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindXLA, Backend: BackendXLA, Variant: "PJRT allocate request"}
	m := newMsg(p, h, &f)
	f.TriedBytes = m.exact("tried_bytes", "Failed to allocate request for", h.sub, 3)
	f.GPUIndex = m.index(h.sub, 4)
	readXLAStats(m, &f)
	return m.done()
}

// parseXLATPU reads the TPU compiler's "Ran out of memory in memory space
// hbm. Used 20.95G of 15.48G hbm. Exceeded hbm capacity by 5.47G." (G = 2^30).
func parseXLATPU(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindXLA, Backend: BackendXLA, Variant: "TPU compile: memory space " + p.text[h.sub[2]:h.sub[3]] + " exceeded"}
	m := newMsg(p, h, &f)
	f.XLAProgramBytes = m.size("xla_program_bytes", "Program needs", h.sub, 2)
	f.TotalBytes = m.size("total_bytes", "Memory space capacity", h.sub, 4)
	f.XLAExceededBytes = m.size("xla_exceeded_bytes", "Exceeded capacity by", h.sub, 6)
	return m.done()
}

// readXLAStats reads a "BufferAssignment stats:" block after the message.
func readXLAStats(m *msg, f *Finding) {
	sub := reXLAStats().FindStringIndex(m.text[m.end:m.hi])
	if sub == nil || sub[0] > 2000 {
		return
	}
	sub[0], sub[1] = sub[0]+m.end, sub[1]+m.end
	targets := map[string]**Bytes{
		"parameter allocation":            &f.XLAParameterBytes,
		"constant allocation":             &f.XLAConstantBytes,
		"maybe_live_out allocation":       &f.XLAMaybeLiveOutBytes,
		"preallocated temp allocation":    &f.XLAPreallocatedTempBytes,
		"preallocated temp fragmentation": &f.XLAPreallocatedTempFragBytes,
		"total allocation":                &f.XLATotalAllocationBytes,
		"total fragmentation":             &f.XLATotalFragmentationBytes,
	}
	for pos := sub[1]; pos < m.hi; {
		line := reXLAStat().FindStringSubmatchIndex(m.text[pos:m.hi])
		if line == nil {
			break
		}
		for i := range line {
			if line[i] >= 0 {
				line[i] += pos
			}
		}
		name := strings.Join(strings.Fields(m.group(line, 1)), " ") + " " + m.group(line, 2)
		key := "xla_" + strings.ReplaceAll(name, " ", "_") + "_bytes"
		if t, ok := targets[name]; ok && *t == nil {
			*t = m.size(key, "XLA "+name, line, 3)
		}
		m.end = max(m.end, line[1])
		pos = line[1]
	}
}

// parseTF reads TensorFlow's "OOM when allocating tensor with shape[…] and
// type float on /job:…/device:GPU:0 by allocator GPU_0_bfc".
func parseTF(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindTF, Backend: BackendTF}
	m := newMsg(p, h, &f)
	dims := m.group(h.sub, 1)
	shape := []int64{}
	elems := big.NewInt(1) // exact: the dims are at most 200 characters
	for _, d := range strings.Split(dims, ",") {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		v, ok := new(big.Int).SetString(d, 10)
		if !ok {
			return Finding{}, false
		}
		elems.Mul(elems, v)
		shape = append(shape, satInt64(v))
	}
	f.TensorShape = shape
	f.DType = m.group(h.sub, 2)
	m.addField(Field{Key: "tensor_shape", Label: "Tensor shape", Printed: "[" + dims + "]"}, []int{h.sub[2] - 1, h.sub[3] + 1})
	if size, known := tfDTypeBytes[f.DType]; known {
		b := bytesOfBig(elems.Mul(elems, new(big.Int).SetUint64(size)))
		f.TriedBytes = &b
		rule := "product of shape [" + dims + "] × " + strconv.FormatUint(size, 10) + " B per " + f.DType
		if b == MaxBytes {
			rule += ", " + saturatedRule
		}
		m.addField(Field{Key: "tried_bytes", Label: "Tensor size", Printed: b.Human(), Bytes: &b, Rule: rule}, h.sub)
	}
	f.tfDevice, f.Allocator = m.group(h.sub, 3), m.group(h.sub, 4)
	if dev := m.group(h.sub, 3) + " " + m.group(h.sub, 4); strings.TrimSpace(dev) != "" {
		if g := reTFGPU().FindStringSubmatch(dev); g != nil {
			if v, err := strconv.Atoi(g[1]); err == nil && v < 1<<20 {
				f.GPUIndex = &v
			}
		}
		f.Variant = "with shape, type, device and allocator (TF >= 1.14)"
	} else if strings.Contains(p.text[h.start:h.end], "of shape") {
		f.Variant = "tensor of shape (old TF)"
	}
	m.extend(reTFHint())
	return m.done()
}

// parseTFEager reads TensorFlow 2's eager "ResourceExhaustedError: failed to
// allocate memory [Op:AddV2]", which prints no size.
func parseTFEager(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindTF, Backend: BackendTF, Variant: "failed to allocate memory (TF2 eager)"}
	if op := p.text[max(0, h.sub[2]):max(0, h.sub[3])]; op != "" {
		f.Variant += " in op " + op
	}
	m := newMsg(p, h, &f)
	return m.done()
}

// parseTFBFC reads the BFC allocator's log line "Allocator (GPU_0_bfc) ran
// out of memory trying to allocate 2.10GiB (rounded to 2254438400)", unless
// it is the harmless "not a failure" warning.
func parseTFBFC(p *parser, h head) (Finding, bool) {
	if reTFNotOOM().MatchString(p.text[h.end:p.bound]) {
		return Finding{}, false
	}
	f := Finding{Kind: KindTFBFC, Backend: BackendTF, Variant: "BFC allocator log", Allocator: p.text[h.sub[2]:h.sub[3]]}
	m := newMsg(p, h, &f)
	if h.sub[8] >= 0 {
		f.TriedBytes = m.exact("tried_bytes", "Rounded request", h.sub, 4)
	} else {
		f.TriedBytes = m.size("tried_bytes", "Tried to allocate", h.sub, 2)
	}
	if g := reTFGPU().FindStringSubmatch(f.Allocator); g != nil {
		if v, err := strconv.Atoi(g[1]); err == nil && v < 1<<20 {
			f.GPUIndex = &v
		}
	}
	return m.done()
}

// parseTFDevice reads the stream executor's "failed to allocate 2.12G
// (2282521344 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY".
func parseTFDevice(p *parser, h head) (Finding, bool) {
	f := Finding{Kind: KindTFDevice, Backend: BackendTF, Variant: "device allocation at start-up"}
	m := newMsg(p, h, &f)
	f.TriedBytes = m.exact("tried_bytes", "Failed to allocate", h.sub, 3)
	return m.done()
}
