package analysis

import (
	"strings"

	"oomscope/snapshot"
)

// The analysis reads two things of a stack: its allocation site (the frame
// SiteRuleText picks, and how it was picked) and the program phase its
// frames point to (stackPhase's rules). Summarizer packs both into a
// snapshot.StackSummary, so that the decoder can keep them instead of the
// frames: bits 0-3 the phase, 4-7 the site kind, 8-39 the site's FrameID,
// bit 40 whether a frame allocates a cuBLAS workspace (workspace.go), bit 41
// whether a frame is Optimizer.zero_grad, bit 42 whether a frame computes
// a loss or an lm_head (the diagnosis's logits rule).

// siteKind is how the site frame of a summary was picked, best first after
// the user frame.
type siteKind uint8

const (
	siteNone siteKind = iota
	siteUser
	siteAutograd
	siteTorch
	siteOp
	siteCPP
)

func packSummary(k siteKind, f snapshot.FrameID, p phase) snapshot.StackSummary {
	return snapshot.StackSummary(uint64(uint32(f))<<8 | uint64(k)<<4 | uint64(p))
}

// summaryWorkspaceBit marks a stack that allocates a cuBLAS or cuBLASLt
// workspace.
const summaryWorkspaceBit snapshot.StackSummary = 1 << 40

func summaryWorkspace(s snapshot.StackSummary) bool { return s&summaryWorkspaceBit != 0 }

// summaryZeroGradBit marks a stack inside Optimizer.zero_grad, and
// summaryLossBit one that runs a cross-entropy, log-softmax, NLL loss or an
// lm_head (it allocates loss-sized tensors).
const (
	summaryZeroGradBit snapshot.StackSummary = 1 << 41
	summaryLossBit     snapshot.StackSummary = 1 << 42
)

func summaryZeroGrad(s snapshot.StackSummary) bool { return s&summaryZeroGradBit != 0 }
func summaryLoss(s snapshot.StackSummary) bool     { return s&summaryLossBit != 0 }

// isLossName reports whether a frame's name computes a loss or an lm_head.
func isLossName(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "cross_entropy") || strings.Contains(n, "log_softmax") || strings.Contains(n, "nll_loss") ||
		strings.Contains(n, "lm_head") || strings.Contains(n, "causallmloss")
}

func summarySite(s snapshot.StackSummary) (siteKind, snapshot.FrameID) {
	return siteKind(s >> 4 & 15), snapshot.FrameID(uint32(s >> 8))
}

func summaryPhase(s snapshot.StackSummary) phase { return phase(s & 15) }

// frameFlags are what the site and phase rules read of one frame.
type frameFlags uint16

const (
	fKnown     frameFlags = 1 << iota // the flags were computed
	fPython                           // a Python frame
	fUser                             // a Python frame outside torch and the libraries
	fTorchPy                          // a Python frame inside torch
	fNode                             // an autograd node (XBackward::apply, AccumulateGrad)
	fOp                               // an ATen operator (at::_ops::)
	fCPP                              // a C++ frame that is not unwinder noise or the allocator
	fOptimizer                        // phase markers (stackPhase)
	fBackward
	fInit
	fForward
	fWorkspace // a C++ frame that allocates a cuBLAS/cuBLASLt workspace
	fZeroGrad  // Optimizer.zero_grad
	fLoss      // a loss or an lm_head (isLossName)
)

// flagsOf computes a frame's flags.
func flagsOf(f *snapshot.Frame) frameFlags {
	fl := fKnown
	if isLossName(f.Name) {
		fl |= fLoss
	}
	if isPython(f) {
		if f.Name == "zero_grad" && strings.Contains(f.Filename, "torch/optim") {
			fl |= fZeroGrad
		}
		fl |= fPython
		if !isLibrary(f) {
			fl |= fUser
		}
		if isTorchPython(f) {
			fl |= fTorchPy
		}
		fn := f.Filename
		switch {
		case strings.Contains(fn, "torch/optim/"):
			fl |= fOptimizer
		case f.Name == "backward" && (strings.Contains(fn, "torch/autograd/") || strings.HasSuffix(fn, "torch/_tensor.py")):
			fl |= fBackward
		case strings.Contains(fn, "torch/nn/") && (initNames[f.Name] ||
			strings.HasSuffix(fn, "nn/init.py") || strings.HasSuffix(fn, "nn/parameter.py")):
			fl |= fInit
		case f.Name == "forward" || (f.Name == "_call_impl" && strings.HasSuffix(fn, "nn/modules/module.py")):
			fl |= fForward
		}
		return fl
	}
	n := f.Name
	if isAutogradNode(n) {
		fl |= fNode
	}
	if strings.HasPrefix(n, "at::_ops::") {
		fl |= fOp
	}
	if !isNoise(f) && !strings.Contains(n, "CachingAllocator") {
		fl |= fCPP
	}
	if isWorkspaceFrame(n) {
		fl |= fWorkspace
	}
	if strings.Contains(n, "torch::autograd::Engine::") || strings.Contains(n, "autograd::generated::") ||
		strings.Contains(n, "AccumulateGrad") {
		fl |= fBackward
	}
	return fl
}

// siteRank is the site kind frame flags fl make a frame a candidate for
// (siteNone: none). The stack's site is its first frame of the best rank:
// taking "the first user frame, before one the best candidate so far" as
// the frames come amounts to that.
func siteRank(fl frameFlags) siteKind {
	switch {
	case fl&fUser != 0:
		return siteUser
	case fl&fNode != 0:
		return siteAutograd
	case fl&fTorchPy != 0:
		return siteTorch
	case fl&fOp != 0:
		return siteOp
	case fl&fCPP != 0 && fl&fPython == 0:
		return siteCPP
	}
	return siteNone
}

// rankNone is siteNone's rank in a frame word: after every kind.
const rankNone = 0xffff

// Fold returns the analysis's site and phase rules as a snapshot.StackFold:
// a frame's word is its flags and its site rank (siteRank). Pass it to
// snapshot.Decode (Options.Fold) so that stacks can stay in the file and
// be summarized as they are read.
func Fold() *snapshot.StackFold {
	return &snapshot.StackFold{Word: frameWord, Finish: finishSummary}
}

// frameWord is a frame's word for Fold: its flags, and its site rank above.
func frameWord(f *snapshot.Frame) uint32 {
	fl := flagsOf(f)
	r := uint32(siteRank(fl))
	if r == uint32(siteNone) {
		r = rankNone
	}
	return uint32(fl) | r<<16
}

// finishSummary makes a stack's summary of its frames' flags, the best
// site rank among them and the first frame of that rank.
func finishSummary(flags, rank uint16, site snapshot.FrameID) snapshot.StackSummary {
	fl := frameFlags(flags)
	kind := siteKind(rank)
	if rank == rankNone {
		kind, site = siteNone, 0
	}
	p := phaseUnknown
	switch {
	case fl&fOptimizer != 0:
		p = phaseOptimizer
	case fl&fBackward != 0:
		p = phaseBackward
	case fl&fInit != 0:
		p = phaseInit
	case fl&fForward != 0:
		p = phaseForward
	}
	sum := packSummary(kind, site, p)
	if fl&fWorkspace != 0 {
		sum |= summaryWorkspaceBit
	}
	if fl&fZeroGrad != 0 {
		sum |= summaryZeroGradBit
	}
	if fl&fLoss != 0 {
		sum |= summaryLossBit
	}
	return sum
}

// Summarizer returns a snapshot.Summarizer that applies the analysis's
// site and phase rules (Fold's), remembering each frame's flags. Pass it
// to snapshot.Decode (Options.Summarize) so that stacks can stay in the
// file; Analyze summarizes the stacks of a snapshot decoded without it.
func Summarizer() snapshot.Summarizer { return Fold().Summarizer() }
