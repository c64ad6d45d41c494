package analysis

import (
	"strconv"
	"strings"

	"oomscope/snapshot"
)

// SiteKind tells how a site was found in a stack.
type SiteKind string

// Site kinds, best first.
const (
	// SiteUser is the first Python frame outside torch and its thin wrappers.
	SiteUser SiteKind = "user"
	// SiteAutograd is a backward node (e.g. MulBackward0) for allocations the
	// autograd engine made without a Python stack.
	SiteAutograd SiteKind = "autograd"
	// SiteTorch is the first Python frame inside torch (no user frame).
	SiteTorch SiteKind = "torch"
	// SiteOp is an ATen operator taken from C++ frames.
	SiteOp SiteKind = "op"
	// SiteCPP is the first C++ frame that is not unwinder noise.
	SiteCPP SiteKind = "cpp"
	// SiteNone means no stack was recorded.
	SiteNone SiteKind = "none"
)

// SiteRuleText explains how allocation sites are found.
const SiteRuleText = "site = the first Python frame (innermost first) outside torch, functorch, triton, einops, " +
	"opt_einsum and the standard library; else the autograd node (XBackward) for backward allocations; else the " +
	"first torch Python frame; else the ATen op; else the first C++ frame that is not unwinder noise"

// Site is a place in the code that allocates memory.
type Site struct {
	// Key groups allocations: the full file:line:function or a kind-prefixed
	// name.
	Key string `json:"key"`
	// Label is a short display form, e.g. "models/block.py:42 forward".
	Label string `json:"site"`
	// Kind tells how the site was found.
	Kind SiteKind `json:"kind"`
	// File, Line and Function describe a Python site; empty otherwise.
	File string `json:"file,omitempty"`
	// Line is the Python line number.
	Line int64 `json:"line,omitempty"`
	// Function is the Python function or C++ symbol.
	Function string `json:"function,omitempty"`
}

// noSite is the site of allocations without a stack.
var noSite = Site{Key: "none", Label: "(no stack recorded)", Kind: SiteNone}

// siteOfSummary rebuilds the Site a stack summary names (see
// SiteRuleText).
func siteOfSummary(frames []snapshot.Frame, sum snapshot.StackSummary) Site {
	k, fid := summarySite(sum)
	if k == siteNone || int(fid) >= len(frames) {
		return noSite
	}
	f := &frames[fid]
	switch k {
	case siteUser:
		return pySite(SiteUser, f)
	case siteAutograd:
		name := autogradNode(f.Name)
		return Site{Key: "autograd:" + name, Label: "backward " + name, Kind: SiteAutograd, Function: f.Name}
	case siteTorch:
		return pySite(SiteTorch, f)
	case siteOp:
		name := atenOp(f.Name)
		return Site{Key: "op:" + name, Label: "aten::" + name, Kind: SiteOp, Function: f.Name}
	}
	return Site{Key: "cpp:" + f.Name, Label: truncate(f.Name, 120), Kind: SiteCPP, Function: f.Name}
}

func pySite(k SiteKind, f *snapshot.Frame) Site {
	line := strconv.FormatInt(f.Line, 10)
	return Site{
		Key:      f.Filename + ":" + line + ":" + f.Name,
		Label:    shortFile(f.Filename) + ":" + line + " " + f.Name,
		Kind:     k,
		File:     f.Filename,
		Line:     f.Line,
		Function: f.Name,
	}
}

// isAutogradNode reports whether a C++ symbol is a backward node's apply
// (not one of the generated::details helper formulas) or AccumulateGrad.
func isAutogradNode(sym string) bool {
	if strings.Contains(sym, "AccumulateGrad") {
		return true
	}
	_, rest, ok := strings.Cut(sym, "autograd::generated::")
	return ok && !strings.HasPrefix(rest, "details::") && strings.Contains(rest, "::apply")
}

// autogradNode extracts "MulBackward0" from
// "torch::autograd::generated::MulBackward0::apply(...)".
func autogradNode(sym string) string {
	if strings.Contains(sym, "AccumulateGrad") {
		return "AccumulateGrad"
	}
	_, rest, ok := strings.Cut(sym, "autograd::generated::")
	if !ok {
		return truncate(sym, 80)
	}
	if i := strings.Index(rest, "::"); i > 0 {
		rest = rest[:i]
	}
	return rest
}

// atenOp extracts "mul_Tensor" from "at::_ops::mul_Tensor::call(...)".
func atenOp(sym string) string {
	rest := strings.TrimPrefix(sym, "at::_ops::")
	if i := strings.Index(rest, "::"); i > 0 {
		rest = rest[:i]
	}
	return rest
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
