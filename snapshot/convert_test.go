package snapshot

import (
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

// The fast decoder and the reference share settingsFrom and
// annotationsFrom, so the differential test cannot catch a key mapped to
// the wrong field: these tests check every field against hand-written
// values.

func TestSettingsFrom(t *testing.T) {
	rp := Dict{{"1", int64(4)}, {">", int64(8)}}
	all := Dict{
		{"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"},
		{"max_split_size", int64(-1)},
		{"garbage_collection_threshold", 0.8},
		{"expandable_segments", true},
		{"pinned_num_register_threads", int64(8)},
		{"release_lock_on_cudamalloc", true},
		{"pinned_use_cuda_host_register", true},
		{"graph_capture_record_stream_reuse", true},
		{"roundup_power2_divisions", rp},
		{"future_key", "kept in Raw"},
	}
	tests := []struct {
		name string
		in   Value
		want *AllocatorSettings
		err  string // substring of the error; "" for none
	}{
		{"every key", all, &AllocatorSettings{
			PyTorchCUDAAllocConf:          "expandable_segments:True",
			MaxSplitSize:                  -1,
			GarbageCollectionThreshold:    0.8,
			ExpandableSegments:            true,
			PinnedNumRegisterThreads:      8,
			ReleaseLockOnCUDAMalloc:       true,
			PinnedUseCUDAHostRegister:     true,
			GraphCaptureRecordStreamReuse: true,
			RoundupPower2Divisions:        rp,
			Raw:                           all,
		}, ""},
		{"empty", Dict{}, &AllocatorSettings{Raw: Dict{}}, ""},
		{"int threshold", Dict{{"garbage_collection_threshold", int64(1)}},
			&AllocatorSettings{GarbageCollectionThreshold: 1, Raw: Dict{{"garbage_collection_threshold", int64(1)}}}, ""},
		{"max_split_size past int64", Dict{{"max_split_size", new(big.Int).SetUint64(1 << 63)}},
			&AllocatorSettings{MaxSplitSize: -1 << 63, Raw: Dict{{"max_split_size", new(big.Int).SetUint64(1 << 63)}}}, ""},
		{"not a dict", List{}, nil, "allocator_settings: expected a dict, got list"},
		{"conf not a str", Dict{{"PYTORCH_CUDA_ALLOC_CONF", int64(1)}}, nil, "allocator_settings.PYTORCH_CUDA_ALLOC_CONF: expected a str, got int"},
		{"max_split_size a str", Dict{{"max_split_size", "x"}}, nil, "allocator_settings.max_split_size: expected an int, got str"},
		{"max_split_size too big", Dict{{"max_split_size", new(big.Int).Lsh(big.NewInt(1), 64)}}, nil, "does not fit in 64 bits"},
		{"threshold a str", Dict{{"garbage_collection_threshold", "x"}}, nil, "garbage_collection_threshold: expected a float, got str"},
		{"expandable an int", Dict{{"expandable_segments", int64(1)}}, nil, "expandable_segments: expected a bool, got int"},
		{"roundup a list", Dict{{"roundup_power2_divisions", List{}}}, nil, "roundup_power2_divisions: expected a dict, got list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := settingsFrom("allocator_settings", tt.in)
			checkConverted(t, got, tt.want, err, tt.err)
		})
	}
}

func TestAnnotationsFrom(t *testing.T) {
	tests := []struct {
		name string
		in   Value
		want []Annotation
		err  string // substring of the error; "" for none
	}{
		{"list", List{
			Dict{{"stage", "START"}, {"name", "ProfilerStep#3"}, {"device", int64(1)}, {"time_us", int64(42)}, {"extra", "x"}},
			Dict{},
		}, []Annotation{{Stage: "START", Name: "ProfilerStep#3", Device: 1, TimeUS: 42, Extra: Dict{{"extra", "x"}}}, {}}, ""},
		{"tuple", Tuple{Dict{{"stage", "END"}}}, []Annotation{{Stage: "END"}}, ""},
		{"empty", List{}, []Annotation{}, ""},
		{"not a list", Dict{}, nil, "external_annotations: expected a list, got dict"},
		{"item not a dict", List{int64(1)}, nil, "external_annotations[0]: expected a dict, got int"},
		{"stage an int", List{Dict{}, Dict{{"stage", int64(1)}}}, nil, "external_annotations[1].stage: expected a str, got int"},
		{"device a str", List{Dict{{"device", "cuda:0"}}}, nil, "external_annotations[0].device: expected an int, got str"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := annotationsFrom("external_annotations", tt.in)
			checkConverted(t, got, tt.want, err, tt.err)
		})
	}
}

// checkConverted compares a conversion's result (when wantErr is "") or
// its error (a shape error containing wantErr).
func checkConverted[T any](t *testing.T, got, want T, err error, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("error %v, want a shape error containing %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}
