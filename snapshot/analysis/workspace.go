package analysis

import (
	"strings"

	"oomscope/snapshot"
)

// workspaceFrames name the C++ functions that allocate cuBLAS and
// cuBLASLt workspaces: buffers each handle keeps for as long as it lives.
var workspaceFrames = []string{"getNewWorkspace", "getCurrentCUDABlasHandle", "getCUDABlasLtWorkspace", "CublasLtWorkspace"}

// workspaceSet tells, per stack, whether it allocates a cuBLAS workspace;
// each stack's frames are read once.
type workspaceSet struct {
	snap *snapshot.Snapshot
	memo map[snapshot.StackID]bool
}

// workspaces returns an empty workspaceSet over the analysis's snapshot.
func (a *Analysis) workspaces() *workspaceSet {
	return &workspaceSet{snap: a.Snap, memo: map[snapshot.StackID]bool{}}
}

// is reports whether stack id allocates a cuBLAS/cuBLASLt workspace.
func (w *workspaceSet) is(id snapshot.StackID) bool {
	st := w.snap.Stack(id)
	if len(st) == 0 {
		return false
	}
	v, ok := w.memo[id]
	if ok {
		return v
	}
	for _, fid := range st {
		if int(fid) < 0 || int(fid) >= len(w.snap.Frames) {
			continue
		}
		f := &w.snap.Frames[fid]
		if isPython(f) {
			continue
		}
		for _, n := range workspaceFrames {
			if strings.Contains(f.Name, n) {
				v = true
			}
		}
		if v {
			break
		}
	}
	w.memo[id] = v
	return v
}
