package analysis

import (
	"strings"

	"oomscope/snapshot"
)

// The analysis reads two things of a stack: its allocation site (the frame
// SiteRuleText picks, and how it was picked) and the program phase its
// frames point to (stackPhase's rules). Summarizer packs both into a
// snapshot.StackSummary, so that the decoder can keep them instead of the
// frames: bits 0-3 the phase, 4-7 the site kind, 8-39 the site's FrameID.

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
)

// flagsOf computes a frame's flags.
func flagsOf(f *snapshot.Frame) frameFlags {
	fl := fKnown
	if isPython(f) {
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
	if strings.Contains(n, "torch::autograd::Engine::") || strings.Contains(n, "autograd::generated::") ||
		strings.Contains(n, "AccumulateGrad") {
		fl |= fBackward
	}
	return fl
}

// Summarizer returns a snapshot.Summarizer that applies the analysis's
// site and phase rules, remembering each frame's flags. Pass it to
// snapshot.Decode (Options.Summarize) so that stacks can stay in the file;
// Analyze summarizes the stacks of a snapshot decoded without it.
func Summarizer() snapshot.Summarizer {
	var flags []frameFlags
	return func(frames []snapshot.Frame, st snapshot.Stack) snapshot.StackSummary {
		if len(flags) < len(frames) {
			flags = append(flags, make([]frameFlags, len(frames)-len(flags))...)
		}
		var all frameFlags
		var site snapshot.FrameID
		kind := siteNone
		for _, fid := range st {
			if int(fid) < 0 || int(fid) >= len(frames) {
				continue
			}
			fl := flags[fid]
			if fl == 0 {
				fl = flagsOf(&frames[fid])
				flags[fid] = fl
			}
			all |= fl
			// The first user frame wins; before one, the best candidate.
			switch {
			case kind == siteUser:
			case fl&fUser != 0:
				kind, site = siteUser, fid
			case fl&fNode != 0 && kind != siteAutograd:
				kind, site = siteAutograd, fid
			case fl&fTorchPy != 0 && (kind == siteNone || kind > siteTorch):
				kind, site = siteTorch, fid
			case fl&fOp != 0 && (kind == siteNone || kind > siteOp):
				kind, site = siteOp, fid
			case fl&fCPP != 0 && fl&fPython == 0 && kind == siteNone:
				kind, site = siteCPP, fid
			}
		}
		p := phaseUnknown
		switch {
		case all&fOptimizer != 0:
			p = phaseOptimizer
		case all&fBackward != 0:
			p = phaseBackward
		case all&fInit != 0:
			p = phaseInit
		case all&fForward != 0:
			p = phaseForward
		}
		return packSummary(kind, site, p)
	}
}
