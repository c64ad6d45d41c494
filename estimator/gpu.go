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

// catalogGPUs is the GPU catalog (docs/estimator.md#1-models-and-gpus).
var catalogGPUs = []GPU{
	{ID: "t4-16gb", Name: "Tesla T4", Vendor: "nvidia", MarketedGB: 16, CapacityBytes: mib(15109), Observed: true, SM: 75, BF16: false, FP8: false,
		Evidence: "device properties total_memory=15109MB"},
	{ID: "v100-16gb", Name: "Tesla V100 16GB", Vendor: "nvidia", MarketedGB: 16, CapacityBytes: mib(16160), Observed: true, SM: 70, BF16: false, FP8: false,
		Evidence: "device properties / nvidia-smi 16160MiB"},
	{ID: "v100-32gb", Name: "Tesla V100 32GB", Vendor: "nvidia", MarketedGB: 32, CapacityBytes: gib(31.74), Observed: true, SM: 70, BF16: false, FP8: false,
		Evidence: "OOM message: total capacity of 31.74 GiB"},
	{ID: "rtx-3060-12gb", Name: "GeForce RTX 3060 12GB", Vendor: "nvidia", MarketedGB: 12, CapacityBytes: gib(11.76), Observed: false, SM: 86, BF16: true, FP8: false,
		Evidence: "OOM messages report 11.76 GiB (not re-verified)"},
	{ID: "rtx-3090-24gb", Name: "GeForce RTX 3090", Vendor: "nvidia", MarketedGB: 24, CapacityBytes: mib(24268), Observed: true, SM: 86, BF16: true, FP8: false,
		Evidence: "device properties total_memory=24268MB"},
	{ID: "rtx-4090-24gb", Name: "GeForce RTX 4090", Vendor: "nvidia", MarketedGB: 24, CapacityBytes: mib(24563), Observed: true, SM: 89, BF16: true, FP8: true,
		Evidence: "device properties total_memory=24563MB (Linux)"},
	{ID: "rtx-5090-32gb", Name: "GeForce RTX 5090", Vendor: "nvidia", MarketedGB: 32, CapacityBytes: gib(31.36), Observed: true, SM: 120, BF16: true, FP8: true,
		Evidence: "OOM message: total capacity of 31.36 GiB"},
	{ID: "a10g-24gb", Name: "NVIDIA A10G", Vendor: "nvidia", MarketedGB: 24, CapacityBytes: mib(22587), Observed: true, SM: 86, BF16: true, FP8: false,
		Evidence: "device properties total_memory=22587MB"},
	{ID: "l4-24gb", Name: "NVIDIA L4", Vendor: "nvidia", MarketedGB: 24, CapacityBytes: gib(22.03), Observed: true, SM: 89, BF16: true, FP8: true,
		Evidence: "OOM message: total capacity of 22.03 GiB"},
	{ID: "rtx-a6000-48gb", Name: "RTX A6000", Vendor: "nvidia", MarketedGB: 48, CapacityBytes: mib(48676), Observed: true, SM: 86, BF16: true, FP8: false,
		Evidence: "device properties total_memory=48676MB"},
	{ID: "l40s-48gb", Name: "NVIDIA L40S", Vendor: "nvidia", MarketedGB: 48, CapacityBytes: mib(45589), Observed: true, SM: 89, BF16: true, FP8: true,
		Evidence: "device properties total_memory=45589MB"},
	{ID: "rtx-pro-6000-96gb", Name: "RTX PRO 6000 Blackwell", Vendor: "nvidia", MarketedGB: 96, CapacityBytes: gib(95.13), Observed: false, SM: 120, BF16: true, FP8: true,
		Evidence: "estimated: nvidia-smi 97887MiB less the ~477 MiB gap seen on H100"},
	{ID: "a100-pcie-40gb", Name: "A100 PCIe 40GB", Vendor: "nvidia", MarketedGB: 40, CapacityBytes: gib(39.39), Observed: true, SM: 80, BF16: true, FP8: false,
		Evidence: "OOM message: total capacity of 39.39 GiB"},
	{ID: "a100-sxm-40gb", Name: "A100 SXM4 40GB", Vendor: "nvidia", MarketedGB: 40, CapacityBytes: mib(40536), Observed: true, SM: 80, BF16: true, FP8: false,
		Evidence: "device properties total_memory=40536MB"},
	{ID: "a100-80gb", Name: "A100 80GB", Vendor: "nvidia", MarketedGB: 80, CapacityBytes: gib(79.15), Observed: true, SM: 80, BF16: true, FP8: false,
		Evidence: "OOM message: total capacity of 79.15 GiB"},
	{ID: "h100-pcie-80gb", Name: "H100 PCIe 80GB", Vendor: "nvidia", MarketedGB: 80, CapacityBytes: gib(79.10), Observed: true, SM: 90, BF16: true, FP8: true,
		Evidence: "OOM messages: total capacity of 79.10 GiB"},
	{ID: "h100-sxm-80gb", Name: "H100 SXM 80GB", Vendor: "nvidia", MarketedGB: 80, CapacityBytes: mib(81082), Observed: true, SM: 90, BF16: true, FP8: true,
		Evidence: "device properties total_memory=81082MB (79.18 GiB)"},
	{ID: "h100-nvl-94gb", Name: "H100 NVL 94GB", Vendor: "nvidia", MarketedGB: 94, CapacityBytes: gib(93.10), Observed: true, SM: 90, BF16: true, FP8: true,
		Evidence: "OOM message naming H100 NVL: 93.10 GiB"},
	{ID: "gh200-96gb", Name: "GH200 (Hopper, 96GB)", Vendor: "nvidia", MarketedGB: 96, CapacityBytes: gib(95.0), Observed: false, SM: 90, BF16: true, FP8: true,
		Evidence: "estimated: nameplate less ~1 % as on H100/H200"},
	{ID: "h200-141gb", Name: "H200 141GB", Vendor: "nvidia", MarketedGB: 141, CapacityBytes: mib(143156), Observed: true, SM: 90, BF16: true, FP8: true,
		Evidence: "device properties total_memory=143156MB (139.80 GiB)"},
	{ID: "b200-180gb", Name: "B200 180GB", Vendor: "nvidia", MarketedGB: 180, CapacityBytes: gib(178.35), Observed: true, SM: 100, BF16: true, FP8: true,
		Evidence: "device properties: 178.35 GiB (pytorch/ao#4002)"},
	{ID: "gb200-186gb", Name: "GB200 (per GPU, 186GB)", Vendor: "nvidia", MarketedGB: 186, CapacityBytes: gib(184.0), Observed: false, SM: 100, BF16: true, FP8: true,
		Evidence: "estimated: ~184 GiB, not seen"},
	{ID: "b300-288gb", Name: "B300 288GB", Vendor: "nvidia", MarketedGB: 288, CapacityBytes: gib(285.4), Observed: false, SM: 103, BF16: true, FP8: true,
		Evidence: "estimated: nameplate less ~1 % as on B200"},
	{ID: "mi250x-64gb", Name: "Instinct MI250X (one GCD)", Vendor: "amd", MarketedGB: 64, CapacityBytes: gib(63.98), Observed: true, SM: 0, BF16: true, FP8: false,
		Evidence: "HIP OOM messages: 63.98 GiB per GCD"},
	{ID: "mi300x-192gb", Name: "Instinct MI300X", Vendor: "amd", MarketedGB: 192, CapacityBytes: mib(196592), Observed: true, SM: 0, BF16: true, FP8: true,
		Evidence: "device properties total_memory=196592MB (191.98 GiB)"},
	{ID: "mi325x-256gb", Name: "Instinct MI325X", Vendor: "amd", MarketedGB: 256, CapacityBytes: gib(255.98), Observed: false, SM: 0, BF16: true, FP8: true,
		Evidence: "estimated: 256 GiB less the 0.02 GiB seen on MI250X/MI300X"},
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
