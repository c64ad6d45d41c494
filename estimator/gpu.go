package estimator

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"oomscope/bytesize"
)

// GPU is one accelerator model. CapacityBytes is what PyTorch reports as
// total_memory (and prints in OOM messages as "total capacity"), which is
// always less than the marketed size.
type GPU struct {
	// ID is the catalog slug, e.g. "h100-sxm-80gb", or "custom".
	ID string `json:"id"`
	// Name is the product name.
	Name string `json:"name"`
	// Vendor is nvidia or amd.
	Vendor string `json:"vendor"`
	// MarketedGB is the nameplate number ("80GB"). Vendors mean GiB for HBM
	// parts and roughly GB for GDDR; either way PyTorch sees less.
	MarketedGB int `json:"marketed_gb"`
	// CapacityBytes is torch.cuda.get_device_properties().total_memory.
	CapacityBytes int64 `json:"capacity_bytes"`
	// Observed is true when CapacityBytes was seen in device properties or
	// OOM messages; false when it is estimated from the nameplate.
	Observed bool `json:"observed"`
	// Evidence says where CapacityBytes comes from.
	Evidence string `json:"evidence"`
	// SM is the CUDA compute capability ×10 (90 for Hopper), 0 for AMD.
	SM int `json:"sm"`
	// BF16 and FP8 report hardware support for those formats.
	BF16 bool `json:"bf16"`
	FP8  bool `json:"fp8"`
}

func mib(n int64) int64 { return n << 20 }

func gib(v float64) int64 { return int64(math.Round(v * float64(bytesize.GiB))) }

// catalogGPUs is the GPU catalog (estimator-notes §5).
var catalogGPUs = []GPU{
	{"t4-16gb", "Tesla T4", "nvidia", 16, mib(15109), true, "device properties total_memory=15109MB", 75, false, false},
	{"v100-16gb", "Tesla V100 16GB", "nvidia", 16, mib(16160), true, "device properties / nvidia-smi 16160MiB", 70, false, false},
	{"v100-32gb", "Tesla V100 32GB", "nvidia", 32, gib(31.74), true, "OOM message: total capacity of 31.74 GiB", 70, false, false},
	{"rtx-3060-12gb", "GeForce RTX 3060 12GB", "nvidia", 12, gib(11.76), false, "OOM messages report 11.76 GiB (not re-verified)", 86, true, false},
	{"rtx-3090-24gb", "GeForce RTX 3090", "nvidia", 24, mib(24268), true, "device properties total_memory=24268MB", 86, true, false},
	{"rtx-4090-24gb", "GeForce RTX 4090", "nvidia", 24, mib(24563), true, "device properties total_memory=24563MB (Linux)", 89, true, true},
	{"rtx-5090-32gb", "GeForce RTX 5090", "nvidia", 32, gib(31.36), true, "OOM message: total capacity of 31.36 GiB", 120, true, true},
	{"a10g-24gb", "NVIDIA A10G", "nvidia", 24, mib(22587), true, "device properties total_memory=22587MB", 86, true, false},
	{"l4-24gb", "NVIDIA L4", "nvidia", 24, gib(22.03), true, "OOM message: total capacity of 22.03 GiB", 89, true, true},
	{"rtx-a6000-48gb", "RTX A6000", "nvidia", 48, mib(48676), true, "device properties total_memory=48676MB", 86, true, false},
	{"l40s-48gb", "NVIDIA L40S", "nvidia", 48, mib(45589), true, "device properties total_memory=45589MB", 89, true, true},
	{"rtx-pro-6000-96gb", "RTX PRO 6000 Blackwell", "nvidia", 96, gib(95.13), false, "estimated: nvidia-smi 97887MiB less the ~477 MiB gap seen on H100", 120, true, true},
	{"a100-pcie-40gb", "A100 PCIe 40GB", "nvidia", 40, gib(39.39), true, "OOM message: total capacity of 39.39 GiB", 80, true, false},
	{"a100-sxm-40gb", "A100 SXM4 40GB", "nvidia", 40, mib(40536), true, "device properties total_memory=40536MB", 80, true, false},
	{"a100-80gb", "A100 80GB", "nvidia", 80, gib(79.15), true, "OOM message: total capacity of 79.15 GiB", 80, true, false},
	{"h100-pcie-80gb", "H100 PCIe 80GB", "nvidia", 80, gib(79.10), true, "OOM messages: total capacity of 79.10 GiB", 90, true, true},
	{"h100-sxm-80gb", "H100 SXM 80GB", "nvidia", 80, mib(81082), true, "device properties total_memory=81082MB (79.18 GiB)", 90, true, true},
	{"h100-nvl-94gb", "H100 NVL 94GB", "nvidia", 94, gib(93.10), true, "OOM message naming H100 NVL: 93.10 GiB", 90, true, true},
	{"gh200-96gb", "GH200 (Hopper, 96GB)", "nvidia", 96, gib(95.0), false, "estimated: nameplate less ~1 % as on H100/H200", 90, true, true},
	{"h200-141gb", "H200 141GB", "nvidia", 141, mib(143156), true, "device properties total_memory=143156MB (139.80 GiB)", 90, true, true},
	{"b200-180gb", "B200 180GB", "nvidia", 180, gib(178.35), true, "device properties: 178.35 GiB (pytorch/ao#4002)", 100, true, true},
	{"gb200-186gb", "GB200 (per GPU, 186GB)", "nvidia", 186, gib(184.0), false, "estimated: ~184 GiB, not seen", 100, true, true},
	{"b300-288gb", "B300 288GB", "nvidia", 288, gib(285.4), false, "estimated: nameplate less ~1 % as on B200", 103, true, true},
	{"mi250x-64gb", "Instinct MI250X (one GCD)", "amd", 64, gib(63.98), true, "HIP OOM messages: 63.98 GiB per GCD", 0, true, false},
	{"mi300x-192gb", "Instinct MI300X", "amd", 192, mib(196592), true, "device properties total_memory=196592MB (191.98 GiB)", 0, true, true},
	{"mi325x-256gb", "Instinct MI325X", "amd", 256, gib(255.98), false, "estimated: 256 GiB less the 0.02 GiB seen on MI250X/MI300X", 0, true, true},
}

// GPUs returns the GPU catalog ordered by capacity, smallest first. The
// slice is a copy.
func GPUs() []GPU {
	gs := make([]GPU, len(catalogGPUs))
	copy(gs, catalogGPUs)
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].CapacityBytes < gs[j].CapacityBytes })
	return gs
}

// LookupGPU finds a catalog GPU by ID (case-insensitive).
func LookupGPU(id string) (GPU, bool) {
	for _, g := range catalogGPUs {
		if strings.EqualFold(g.ID, id) {
			return g, true
		}
	}
	return GPU{}, false
}

// Custom GPU capacities must lie in this range.
const (
	minCustomCapacity = 256 << 20
	maxCustomCapacity = 64 << 40
)

// ResolveGPU turns the gpu field of a request into a GPU: a catalog ID, or a
// size such as "80GiB" or "22.03GiB", taken as the capacity PyTorch reports
// (what an OOM message calls "total capacity").
func ResolveGPU(s string) (GPU, error) {
	if g, ok := LookupGPU(s); ok {
		return g, nil
	}
	t := strings.TrimSpace(s)
	if t == "" || !(t[0] >= '0' && t[0] <= '9') {
		return GPU{}, fmt.Errorf("gpu: unknown GPU %q (use a catalog id such as h100-sxm-80gb, see the GPU list, or a capacity such as 80GiB)", s)
	}
	n, err := bytesize.Parse(t)
	if err != nil {
		return GPU{}, fmt.Errorf("gpu: %q is neither a catalog id nor a capacity: %v", s, err)
	}
	if n < minCustomCapacity || n > maxCustomCapacity {
		return GPU{}, fmt.Errorf("gpu: capacity %s is out of range (256 MiB to 64 TiB)", bytesize.Format(n, bytesize.Binary))
	}
	return GPU{
		ID: "custom", Name: "custom GPU (" + bytesize.Format(n, bytesize.Binary) + ")", Vendor: "custom",
		MarketedGB: int(n / bytesize.GB), CapacityBytes: n, Observed: true, Evidence: "capacity given by the user", SM: 90, BF16: true, FP8: true,
	}, nil
}
