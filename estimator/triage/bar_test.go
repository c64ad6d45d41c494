package triage

import "testing"

func TestCardBar(t *testing.T) {
	const gib, mib = 1 << 30, 1 << 20
	tests := []struct {
		name  string
		text  string
		want  map[string]int64 // segment sizes, ±1 B
		req   int64
		short int64
		noted bool
	}{
		{
			name: "2.x with processes",
			// 23.63 GiB card: allocated 20.73 GiB, unallocated 35.86 MiB,
			// this process 21.22 GiB, others 558 MiB + 1.03 GiB, free 34.56 MiB.
			text: "CUDA out of memory. Tried to allocate 54.00 MiB. GPU 0 has a total capacity of 23.63 GiB of which 34.56 MiB is free. Process 1 has 558.00 MiB memory in use. Process 2 has 1.03 GiB memory in use. Including non-PyTorch memory, this process has 21.22 GiB memory in use. Of the allocated memory 20.73 GiB is allocated by PyTorch, and 35.86 MiB is reserved by PyTorch but unallocated.",
			want: map[string]int64{
				"allocated":       22258668012,                                       // 20.73 GiB
				"reserved-unused": 37601935,                                          // 35.86 MiB
				"non-pytorch":     22784801505 - 22258668012 - 37601935,              // 21.22 GiB − the two above
				"other-processes": 585105408 + 1105954079,                            // 558 MiB + 1.03 GiB
				"unaccounted":     25372519301 - 36238787 - 22784801505 - 1691059487, // the rest
				"free":            36238787,                                          // 34.56 MiB
			},
			req: 54 * mib, short: 54*mib - 36238787,
		},
		{
			name: "1.x reserved in total",
			text: "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 5.00 GiB already allocated; 1.00 GiB free; 5.50 GiB reserved in total by PyTorch)",
			want: map[string]int64{"allocated": 5 * gib, "reserved-unused": gib / 2, "unaccounted": 8*gib - gib - 5*gib - gib/2, "free": gib},
			req:  2 * gib, short: gib,
		},
		{
			name: "MPS: the allowance is the bar",
			text: "MPS backend out of memory (MPS allocated: 8.00 GB, other allocations: 1.00 GB, max allowed: 9.50 GB). Tried to allocate 1.00 GB on private pool.",
			want: map[string]int64{"allocated": 8 * gib, "non-pytorch": gib, "free": gib / 2},
			req:  gib, short: gib / 2,
		},
		{
			name: "Windows spill beyond the card",
			text: "CUDA out of memory. Tried to allocate 1.00 GiB (GPU 0; 8.00 GiB total capacity; 10.00 GiB already allocated; 0 bytes free; 10.50 GiB reserved in total by PyTorch)",
			want: map[string]int64{"allocated": 10 * gib, "reserved-unused": gib / 2},
			req:  gib, short: gib, noted: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := CardBar(one(t, tt.text))
			if !ok {
				t.Fatal("no bar")
			}
			var sum int64
			got := map[string]int64{}
			for _, s := range b.Segments {
				got[s.Name] += s.Bytes
				sum += s.Bytes
			}
			for k, w := range tt.want {
				if d := got[k] - w; d < -1 || d > 1 {
					t.Errorf("%s = %d, want %d", k, got[k], w)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("segments %v, want the keys of %v", got, tt.want)
			}
			if d := sum - b.Total; d < -2 || d > 2 {
				t.Errorf("segments sum to %d, total %d", sum, b.Total)
			}
			if b.Request != tt.req || b.Shortfall != tt.short {
				t.Errorf("request %d shortfall %d, want %d %d", b.Request, b.Shortfall, tt.req, tt.short)
			}
			if (b.Note != "") != tt.noted {
				t.Errorf("note %q, want noted=%v", b.Note, tt.noted)
			}
		})
	}
	if _, ok := CardBar(one(t, "RuntimeError: CUDA error: out of memory")); ok {
		t.Error("bar for a message without capacity")
	}
}
