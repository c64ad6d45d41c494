package snapshot

import (
	"fmt"
	"reflect"
)

// firstDiff describes the first difference between two snapshots, for test
// failure messages.
func firstDiff(a, b *Snapshot) string {
	if a.Protocol != b.Protocol || a.Legacy != b.Legacy {
		return fmt.Sprintf("protocol/legacy %d/%v vs %d/%v", a.Protocol, a.Legacy, b.Protocol, b.Legacy)
	}
	if len(a.Segments) != len(b.Segments) {
		return fmt.Sprintf("%d vs %d segments", len(a.Segments), len(b.Segments))
	}
	for i := range a.Segments {
		if !reflect.DeepEqual(a.Segments[i], b.Segments[i]) {
			return fmt.Sprintf("segment %d:\n%+v\nvs\n%+v", i, a.Segments[i], b.Segments[i])
		}
	}
	if len(a.DeviceTraces) != len(b.DeviceTraces) {
		return fmt.Sprintf("%d vs %d device traces", len(a.DeviceTraces), len(b.DeviceTraces))
	}
	for d := range a.DeviceTraces {
		if len(a.DeviceTraces[d]) != len(b.DeviceTraces[d]) {
			return fmt.Sprintf("device %d: %d vs %d entries", d, len(a.DeviceTraces[d]), len(b.DeviceTraces[d]))
		}
		for i := range a.DeviceTraces[d] {
			if !reflect.DeepEqual(a.DeviceTraces[d][i], b.DeviceTraces[d][i]) {
				return fmt.Sprintf("device %d entry %d:\n%+v\nvs\n%+v", d, i, a.DeviceTraces[d][i], b.DeviceTraces[d][i])
			}
		}
	}
	if !reflect.DeepEqual(a.Frames, b.Frames) {
		return fmt.Sprintf("frame tables differ (%d vs %d frames)", len(a.Frames), len(b.Frames))
	}
	if !reflect.DeepEqual(a.Stacks, b.Stacks) {
		return fmt.Sprintf("stack tables differ (%d vs %d stacks)", len(a.Stacks), len(b.Stacks))
	}
	if !reflect.DeepEqual(a.AllocatorSettings, b.AllocatorSettings) {
		return fmt.Sprintf("allocator settings %+v vs %+v", a.AllocatorSettings, b.AllocatorSettings)
	}
	if !reflect.DeepEqual(a.ExternalAnnotations, b.ExternalAnnotations) {
		return "external annotations differ"
	}
	return fmt.Sprintf("other fields differ: extra %v vs %v, host %d/%d vs %d/%d", a.Extra, b.Extra,
		len(a.HostSegments), len(a.HostTraces), len(b.HostSegments), len(b.HostTraces))
}

// sameSnapshot is reflect.DeepEqual.
func sameSnapshot(a, b *Snapshot) bool { return reflect.DeepEqual(a, b) }
