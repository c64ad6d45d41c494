package gen

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteRanks writes the snapshots of an n-rank job into dir, one file per
// rank named snapshot_rank<k>.pickle: every rank runs one training step of
// the same 4-layer model, except rank deep, which runs 8 layers and so
// peaks higher (an outlier by design; pass -1 for none). It returns the
// files' paths and each rank's peak allocated bytes from the generator's
// truth, both in rank order.
func WriteRanks(dir string, n, deep int) (paths []string, peaks []int64, err error) {
	for rank := range n {
		opt := Options{Seed: uint64(rank + 1), Layers: 4, Hidden: 512, Steps: 1}
		if rank == deep {
			opt.Layers = 8
		}
		data, truth, err := Bytes(opt)
		if err != nil {
			return nil, nil, fmt.Errorf("rank %d: %w", rank, err)
		}
		p := filepath.Join(dir, fmt.Sprintf("snapshot_rank%d.pickle", rank))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, nil, err
		}
		paths = append(paths, p)
		peaks = append(peaks, truth.Devices[0].PeakAllocated)
	}
	return paths, peaks, nil
}
