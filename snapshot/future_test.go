package snapshot

import (
	"bytes"
	"reflect"
	"testing"
)

// future2026 is a snapshot with every key the notes list for 2025/26
// nightlies, built as a generic value.
func future2026() Value {
	frame := Dict{{"name", "forward"}, {"filename", "gen.py"}, {"line", int64(7)},
		{"fx_node_op", "call_function"}, {"fx_node_name", "mm_1"}, {"fx_node_target", "aten.mm"}, {"fx_original_trace", "x @ w"}}
	entry := func(action string, extra ...DictItem) Dict {
		d := Dict{{"action", action}, {"addr", int64(4096)}, {"size", int64(512)}, {"stream", int64(0)},
			{"time_us", int64(1767225600000000)}, {"frames", List{frame}}}
		return append(d, extra...)
	}
	seg := Dict{{"device", int64(0)}, {"address", int64(4096)}, {"total_size", int64(2 << 20)},
		{"allocated_size", int64(512)}, {"active_size", int64(512)}, {"requested_size", int64(512)},
		{"stream", int64(0)}, {"segment_type", "small"}, {"segment_pool_id", Tuple{int64(1), int64(2)}},
		{"is_expandable", false}, {"frames", List{}},
		{"blocks", List{
			Dict{{"address", int64(4096)}, {"size", int64(512)}, {"requested_size", int64(512)}, {"state", "active_allocated"}, {"frames", List{frame}}},
			Dict{{"address", int64(4608)}, {"size", int64(2<<20 - 512)}, {"requested_size", int64(0)}, {"state", "inactive"}, {"frames", List{}}},
		}}}
	return Dict{
		{"segments", List{seg}},
		{"device_traces", List{List{
			entry("alloc", DictItem{"compile_context", "Torch-Compiled Region: 0/0"}, DictItem{"user_metadata", `{"fqn":"layers.0"}`},
				DictItem{"forward_frames", List{"model.py:12 forward"}}, DictItem{"pool_id", Tuple{int64(1), int64(2)}},
				DictItem{"internal_metadata", "tag"}, DictItem{"category", "activation"}),
			entry("annotate", DictItem{"user_metadata", Dict{{"component", "PARAMETER"}}}),
			entry("future_action", DictItem{"brand_new_key", List{int64(1)}}),
		}, List{}}},
		{"allocator_settings", Dict{{"expandable_segments", true}, {"max_split_size", int64(-1)},
			{"graph_capture_record_stream_reuse", true}, {"trace_alloc_max_entries", int64(100000)}}},
		{"external_annotations", List{Dict{{"stage", "START"}, {"name", "ProfilerStep#3"}, {"device", int64(0)}, {"time_us", int64(1)}, {"extra", "x"}}}},
		{"host_segments", List{}},
		{"host_traces", List{List{}}},
		{"some_future_key", "kept"},
	}
}

func TestFutureKeys(t *testing.T) {
	var buf bytes.Buffer
	if err := EncodeValue(&buf, future2026(), 5); err != nil {
		t.Fatal(err)
	}
	s, err := DecodeBytes(buf.Bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := DecodeReferenceBytes(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !Equal(s, ref) {
		t.Errorf("fast and reference differ: %s", Diff(ref, s))
	}
	tr := s.DeviceTraces[0].Entries()
	if len(s.DeviceTraces) != 2 || len(tr) != 3 {
		t.Fatalf("traces %d, entries %d", len(s.DeviceTraces), len(tr))
	}
	a := tr[0]
	if a.CompileContext != "Torch-Compiled Region: 0/0" || a.UserMetadata != `{"fqn":"layers.0"}` || a.Extra == nil ||
		!reflect.DeepEqual(a.Extra.ForwardFrames, []string{"model.py:12 forward"}) || a.Extra.PoolID != (PoolID{1, 2}) ||
		!a.Extra.HasPoolID || a.Extra.InternalMetadata != "tag" || a.Extra.Category != "activation" || len(a.Extra.Other) != 0 {
		t.Errorf("alloc entry = %+v extra %+v", a, a.Extra)
	}
	if f := s.Frames[s.Stacks.MustFrames(a.Frames)[0]]; f.FXNodeOp != "call_function" || f.FXNodeTarget != "aten.mm" || f.FXOriginalTrace != "x @ w" {
		t.Errorf("fx frame = %+v", f)
	}
	ann := tr[1]
	if ann.Action != ActionAnnotate || ann.UserMetadata != "" || ann.Extra == nil ||
		!reflect.DeepEqual(ann.Extra.Other, Dict{{"user_metadata", Dict{{"component", "PARAMETER"}}}}) {
		t.Errorf("annotate entry with dict metadata = %+v extra %+v", ann, ann.Extra)
	}
	if fu := tr[2]; fu.Action != "future_action" || !reflect.DeepEqual(fu.Extra.Other, Dict{{"brand_new_key", List{int64(1)}}}) {
		t.Errorf("future entry = %+v", fu)
	}
	if g := s.Segments[0]; g.PoolID != (PoolID{1, 2}) || !g.HasPoolID || g.Frames != EmptyStack || len(g.Blocks) != 2 {
		t.Errorf("segment = %+v", g)
	}
	as := s.AllocatorSettings
	if !as.ExpandableSegments || !as.GraphCaptureRecordStreamReuse || as.MaxSplitSize != -1 || len(as.Raw) != 4 {
		t.Errorf("settings = %+v", as)
	}
	if v, ok := as.Raw.Get("trace_alloc_max_entries"); !ok || v != int64(100000) {
		t.Errorf("trace_alloc_max_entries = %v", v)
	}
	if an := s.ExternalAnnotations; len(an) != 1 || an[0].Name != "ProfilerStep#3" || !reflect.DeepEqual(an[0].Extra, Dict{{"extra", "x"}}) {
		t.Errorf("annotations = %+v", an)
	}
	if s.HostSegments == nil || len(s.HostTraces) != 1 || !reflect.DeepEqual(s.Extra, Dict{{"some_future_key", "kept"}}) {
		t.Errorf("host %v %v extra %v", s.HostSegments, s.HostTraces, s.Extra)
	}
}
