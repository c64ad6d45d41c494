package estimator

import (
	"encoding/binary"
	"strings"
	"testing"
)

// safetensors builds the start of a .safetensors file around a header.
func safetensors(header string) []byte {
	b := make([]byte, 8, 8+len(header))
	binary.LittleEndian.PutUint64(b, uint64(len(header)))
	return append(b, header...)
}

func TestParseCheckpoint(t *testing.T) {
	// A Llama 3.1 8B index: metadata.total_size = 8,030,261,248 × 2 B.
	idx := `{"metadata": {"total_size": 16060522496}, "weight_map": {"lm_head.weight": "model-00004-of-00004.safetensors", "model.embed_tokens.weight": "model-00001-of-00004.safetensors"}}`
	c, err := ParseCheckpoint([]byte(idx))
	if err != nil || c.Kind != "index" || c.Bytes != 16_060_522_496 || c.Tensors != 2 {
		t.Errorf("index: %+v, %v", c, err)
	}
	// A header with a bf16 matrix, an FP8 one with its fp32 scale, and
	// packed 4-bit weights.
	hdr := `{"__metadata__":{"format":"pt"},
		"a.weight":{"dtype":"BF16","shape":[4,8],"data_offsets":[0,64]},
		"b.weight":{"dtype":"F8_E4M3","shape":[8,8],"data_offsets":[64,128]},
		"b.weight_scale":{"dtype":"F32","shape":[8],"data_offsets":[128,160]},
		"c.qweight":{"dtype":"I32","shape":[2,8],"data_offsets":[160,224]}}`
	c, err = ParseCheckpoint(append(safetensors(hdr), make([]byte, 224)...))
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind != "header" || c.Bytes != 224 || c.Tensors != 4 || c.Params != 32+64+8+16 || c.DtypeBytes["F8_E4M3"] != 64 || c.DtypeBytes["I32"] != 64 {
		t.Errorf("header: %+v", c)
	}
	// Only the header is needed, not the data after it.
	if c2, err := ParseCheckpoint(safetensors(hdr)); err != nil || c2.Bytes != 224 {
		t.Errorf("header alone: %+v, %v", c2, err)
	}
	errs := []struct{ data, want string }{
		{"", "empty"},
		{"   ", "empty"},
		{`{"metadata": {}}`, "no metadata.total_size"},
		{`{"metadata": {"total_size": -5}}`, "not a size"},
		{`{"metadata": {"total_size": 1e30}}`, "not a size"},
		{`{"metadata": `, "not a safetensors index"},
		{"abc", "too short"},
		{string(safetensors(`{"x":{"dtype":"BF16","shape":[4],"data_offsets":[0,6]}}`)), "take 8 bytes, not the 6"},
		{string(safetensors(`{"x":{"dtype":"BF16","shape":[4],"data_offsets":[9,6]}}`)), "not a [begin, end) range"},
		{string(safetensors(`{"x":{"dtype":"BF16","shape":[-4],"data_offsets":[0,8]}}`)), "not a size"},
		{string(safetensors(`{"__metadata__":{}}`)), "no tensor data"},
		{string(safetensors(`[1,2]`)), "not JSON"},
		{string(safetensors(`{"x":`))[:10], "needs 13 bytes"},
		{"\xff\xff\xff\xff\xff\xff\xff\xff{}", "not a safetensors header"},
	}
	for _, e := range errs {
		_, err := ParseCheckpoint([]byte(e.data))
		if err == nil || !strings.Contains(err.Error(), e.want) {
			t.Errorf("%q: error %v, want %q", e.data, err, e.want)
		}
	}
}

// TestCheckpointBytesInEstimate: a checkpoint's stored bytes replace the
// config's count for inference and serving, split over tensor parallelism.
func TestCheckpointBytesInEstimate(t *testing.T) {
	res := estimateQuery(t, "mode=infer&checkpoint_bytes=9000000000")
	if res.Buckets.Weights != 9_000_000_000 {
		t.Errorf("weights %d, want the checkpoint's 9,000,000,000", res.Buckets.Weights)
	}
	res = estimateQuery(t, "mode=serve&checkpoint_bytes=9GB&tp=2")
	// Norms (4,096 + 32 layers × 2 × 4,096 params, 2 B each) stay whole.
	norms := (l8H + l8L*2*l8H) * 2
	if w, want := res.Term(BucketWeights, "checkpoint"), (9_000_000_000-norms+1)/2+norms; w != want {
		t.Errorf("tp 2 checkpoint share %d, want %d", w, want)
	}
	if !strings.Contains(res.Formulas[BucketWeights], "the config counts 8,030,261,248 params") {
		t.Errorf("formula %q does not show the config's count beside", res.Formulas[BucketWeights])
	}
}

func FuzzParseCheckpoint(f *testing.F) {
	f.Add([]byte(`{"metadata": {"total_size": 16060522496}, "weight_map": {}}`))
	f.Add(safetensors(`{"a":{"dtype":"BF16","shape":[4,8],"data_offsets":[0,64]}}`))
	f.Add(safetensors(`{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCheckpoint(data)
		if err != nil {
			return
		}
		if c.Bytes <= 0 || c.Bytes > MaxCheckpointBytes || c.Tensors < 0 {
			t.Fatalf("accepted %+v", c)
		}
	})
}
