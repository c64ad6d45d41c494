package analysis

import "strings"

// workspaceFrames name the C++ functions that allocate cuBLAS and
// cuBLASLt workspaces: buffers each handle keeps for as long as it lives.
var workspaceFrames = []string{"getNewWorkspace", "getCurrentCUDABlasHandle", "getCUDABlasLtWorkspace", "CublasLtWorkspace"}

// isWorkspaceFrame reports whether a C++ frame's name is one of
// workspaceFrames; the stack summary keeps the answer (summaryWorkspaceBit),
// so the classification never reads a stack's frames again.
func isWorkspaceFrame(name string) bool {
	for _, n := range workspaceFrames {
		if strings.Contains(name, n) {
			return true
		}
	}
	return false
}
