package estimator

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
)

// Checkpoint is what a checkpoint's index or header says of its stored
// weights (docs/estimator.md#2-weights): exact bytes, including quantized
// formats, to show beside the count the config gives.
type Checkpoint struct {
	// Kind is "index" (model.safetensors.index.json) or "header" (one
	// .safetensors file's header).
	Kind string `json:"kind"`
	// Bytes is the stored tensor bytes: the index's metadata.total_size, or
	// the sum of the header's tensor extents.
	Bytes int64 `json:"bytes"`
	// Tensors is how many tensors the index maps or the header holds.
	Tensors int `json:"tensors"`
	// Params counts the header's elements; DtypeBytes its bytes per dtype
	// (both empty for an index, which lists names only).
	Params     int64            `json:"params,omitempty"`
	DtypeBytes map[string]int64 `json:"dtype_bytes,omitempty"`
}

// MaxSafetensorsHeader is the largest header ParseCheckpoint reads: the
// safetensors format's own limit of 100 MB.
const MaxSafetensorsHeader = 100 << 20

// safetensorsDtypeBits are the element sizes of safetensors dtypes.
var safetensorsDtypeBits = map[string]int64{
	"BOOL": 8, "U8": 8, "I8": 8, "F8_E4M3": 8, "F8_E5M2": 8, "F8_E8M0": 8, "F4": 4,
	"I16": 16, "U16": 16, "F16": 16, "BF16": 16,
	"I32": 32, "U32": 32, "F32": 32, "I64": 64, "U64": 64, "F64": 64,
}

// SafetensorsHeaderLen reads the 8-byte little-endian header length at the
// start of a .safetensors file, so a caller can read just 8 + n bytes.
func SafetensorsHeaderLen(prefix []byte) (int64, error) {
	if len(prefix) < 8 {
		return 0, fmt.Errorf("checkpoint: %d bytes is too short for a safetensors file (8-byte header length first)", len(prefix))
	}
	n := binary.LittleEndian.Uint64(prefix[:8])
	if n < 2 || n > MaxSafetensorsHeader {
		return 0, fmt.Errorf("checkpoint: header length %d is not a safetensors header (2 bytes to 100 MB)", n)
	}
	return int64(n), nil
}

// ParseCheckpoint reads a model.safetensors.index.json, or the start of a
// .safetensors file (its 8-byte length and JSON header; the tensor data
// after it is not needed), and returns the stored weight bytes.
func ParseCheckpoint(data []byte) (Checkpoint, error) {
	t := bytes.TrimSpace(data)
	if len(t) == 0 {
		return Checkpoint{}, fmt.Errorf("checkpoint: empty: drop a model.safetensors.index.json or a .safetensors file")
	}
	if t[0] == '{' {
		return parseIndex(t)
	}
	n, err := SafetensorsHeaderLen(data)
	if err != nil {
		return Checkpoint{}, err
	}
	if int64(len(data)) < 8+n {
		return Checkpoint{}, fmt.Errorf("checkpoint: the header needs %d bytes, only %d given", 8+n, len(data))
	}
	return parseHeader(data[8 : 8+n])
}

// parseIndex reads a sharded checkpoint's index.
func parseIndex(data []byte) (Checkpoint, error) {
	var idx struct {
		Metadata struct {
			TotalSize *json.Number `json:"total_size"`
		} `json:"metadata"`
		WeightMap map[string]string `json:"weight_map"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&idx); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: not a safetensors index: %v", err)
	}
	if idx.Metadata.TotalSize == nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: the index has no metadata.total_size")
	}
	n, err := idx.Metadata.TotalSize.Int64()
	if err != nil || n <= 0 || n > MaxCheckpointBytes {
		return Checkpoint{}, fmt.Errorf("checkpoint: metadata.total_size %s is not a size from 1 B to 64 TiB", idx.Metadata.TotalSize)
	}
	return Checkpoint{Kind: "index", Bytes: n, Tensors: len(idx.WeightMap)}, nil
}

// parseHeader reads a safetensors JSON header: each tensor's dtype, shape
// and [begin, end) extent in the data, which must agree.
func parseHeader(h []byte) (Checkpoint, error) {
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(h, &hdr); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint: the safetensors header is not JSON: %v", err)
	}
	c := Checkpoint{Kind: "header", DtypeBytes: map[string]int64{}}
	names := make([]string, 0, len(hdr))
	for name := range hdr {
		if name != "__metadata__" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		var ti struct {
			Dtype   string  `json:"dtype"`
			Shape   []int64 `json:"shape"`
			Offsets []int64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(hdr[name], &ti); err != nil {
			return Checkpoint{}, fmt.Errorf("checkpoint: tensor %q: %v", name, err)
		}
		if len(ti.Offsets) != 2 || ti.Offsets[0] < 0 || ti.Offsets[1] < ti.Offsets[0] || ti.Offsets[1] > MaxCheckpointBytes {
			return Checkpoint{}, fmt.Errorf("checkpoint: tensor %q: data_offsets %v are not a [begin, end) range", name, ti.Offsets)
		}
		size := ti.Offsets[1] - ti.Offsets[0]
		elems := int64(1)
		for _, d := range ti.Shape {
			if d < 0 || (d > 0 && elems > MaxCheckpointBytes/d) {
				return Checkpoint{}, fmt.Errorf("checkpoint: tensor %q: shape %v is not a size", name, ti.Shape)
			}
			elems *= d
		}
		if bits, ok := safetensorsDtypeBits[ti.Dtype]; ok && ceilDiv(elems*bits, 8) != size {
			return Checkpoint{}, fmt.Errorf("checkpoint: tensor %q: %d %s elements take %d bytes, not the %d of data_offsets", name, elems, ti.Dtype, ceilDiv(elems*bits, 8), size)
		}
		c.Bytes = sum(c.Bytes, size)
		c.Params = sum(c.Params, elems)
		c.DtypeBytes[ti.Dtype] += size
		c.Tensors++
	}
	if c.Tensors == 0 || c.Bytes == 0 {
		return Checkpoint{}, fmt.Errorf("checkpoint: the safetensors header lists no tensor data")
	}
	return c, nil
}
