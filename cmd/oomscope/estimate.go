package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"oomscope/bytesize"
	"oomscope/estimator"
)

// estimateFlag is one request-vocabulary flag: setting it records the value in
// a url.Values, so flags go through estimator.ParseQuery exactly as the
// /estimate page's URL does.
type estimateFlag struct {
	key    string
	q      url.Values
	isBool bool
}

func (f *estimateFlag) String() string   { return "" }
func (f *estimateFlag) IsBoolFlag() bool { return f.isBool }
func (f *estimateFlag) Set(v string) error {
	f.q.Set(f.key, v)
	return nil
}

// estimateFlagHelp is the help text of each vocabulary flag.
var estimateFlagHelp = map[string]string{
	"model":        "catalog model id (see --list-models), or custom with --config",
	"config":       "path to a Hugging Face config.json (- for stdin); implies model custom",
	"gpu":          "catalog GPU id (see --list-gpus) or a capacity as PyTorch reports it, e.g. 80GiB",
	"batch":        "micro-batch size",
	"seq":          "sequence length (tokens)",
	"accum":        "gradient accumulation steps",
	"gpus":         "number of GPUs (data parallel)",
	"lora_rank":    "LoRA rank r",
	"lora_targets": "all-linear, attention, or module names such as q_proj,v_proj",
	"master":       "keep fp32 master weights (with 16-bit dtype)",
	"autocast":     "fp32 weights with autocast to dtype",
	"headroom":     "percent of the GPU kept free",
}

// runEstimate prints the memory estimate of one training or inference
// setup. It exits 1 when the setup does not fit the GPU.
func runEstimate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("estimate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	listModels := fs.Bool("list-models", false, "list the model catalog")
	listGPUs := fs.Bool("list-gpus", false, "list the GPU catalog")
	q := url.Values{}
	d := estimator.DefaultRequest()
	for _, k := range estimator.Keys {
		help := estimateFlagHelp[k]
		if cs, ok := estimator.Choices[k]; ok {
			help = strings.Join(cs, " | ")
		}
		if def := d.Get(k); def != "" && k != "config" {
			help += " (default " + def + ")"
		}
		fs.Var(&estimateFlag{key: k, q: q, isBool: k == "master" || k == "autocast"}, k, help)
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: oomscope estimate [flags]\n\n"+
			"Estimates the GPU memory of training or serving a model, bucket by bucket, and\n"+
			"says whether it fits, the smallest GPU that fits, the largest batch and sequence,\n"+
			"and the fixes that bring it down. Flags use the /estimate page's URL vocabulary.\n"+
			"Exit codes: 0 fits, 1 does not fit, 2 bad usage or input, 3 internal error.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(joinBoolValues(args, "master", "autocast")); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return exitOK
		}
		return exitBadInput
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "oomscope estimate: unexpected argument %q (every input is a flag)\n", fs.Arg(0))
		return exitBadInput
	}
	switch {
	case *listModels:
		return printModelList(stdout, *asJSON)
	case *listGPUs:
		return printGPUList(stdout, *asJSON)
	}
	if path := q.Get("config"); path != "" {
		data, err := readEstimateConfig(path, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "oomscope estimate: %v\n", err)
			return exitBadInput
		}
		q.Set("config", string(data))
	}
	req, err := estimator.ParseQuery(q)
	if err != nil {
		fmt.Fprintf(stderr, "oomscope estimate: %v\n", err)
		return exitBadInput
	}
	rep, err := estimator.Analyze(req)
	if err != nil {
		fmt.Fprintf(stderr, "oomscope estimate: %v\n", err)
		return exitBadInput
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "oomscope estimate: %v\n", err)
			return exitBadInput
		}
	} else {
		printEstimate(stdout, rep)
	}
	if !rep.Fits {
		return exitCheck
	}
	return exitOK
}

// readEstimateConfig reads a config.json path, or stdin for "-".
func readEstimateConfig(path string, stdin io.Reader) ([]byte, error) {
	var in io.Reader
	if path == "-" {
		if stdin == nil {
			return nil, fmt.Errorf("config: no stdin to read")
		}
		in = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("config: %v", err)
		}
		defer f.Close()
		in = f
	}
	data, err := io.ReadAll(io.LimitReader(in, estimator.MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("config: reading %s: %v", path, err)
	}
	if len(data) > estimator.MaxConfigBytes {
		return nil, fmt.Errorf("config: %s is larger than %d bytes", path, estimator.MaxConfigBytes)
	}
	return data, nil
}

// both renders bytes in GiB with GB beside it.
func estBoth(n int64) string {
	return bytesize.Format(n, bytesize.Binary) + " (" + bytesize.Format(n, bytesize.Decimal) + ")"
}

func printModelList(w io.Writer, asJSON bool) int {
	ms := estimator.Models()
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(ms)
		return exitOK
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tname\tparams\thidden\tlayers\theads\tkv\thead_dim\tvocab")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", m.ID, m.Name, m.Size(), m.Hidden, m.Layers, m.Heads, m.KVHeads, m.HeadDim, m.Vocab)
	}
	tw.Flush()
	return exitOK
}

func printGPUList(w io.Writer, asJSON bool) int {
	gs := estimator.GPUs()
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(gs)
		return exitOK
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tname\tmarketed\tPyTorch capacity\tsource")
	for _, g := range gs {
		src := "observed"
		if !g.Observed {
			src = "estimated"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d GB\t%s\t%s\n", g.ID, g.Name, g.MarketedGB, estBoth(g.CapacityBytes), src)
	}
	tw.Flush()
	return exitOK
}

// printEstimate writes the human-readable estimate: a table in GiB and GB
// with each bucket's formula, the verdict and the answers.
func printEstimate(w io.Writer, rep *estimator.Report) {
	r := rep.Request
	m := rep.Model
	var setup string
	if r.Mode == estimator.ModeTrain {
		setup = fmt.Sprintf("train %s, %s, %s, batch %d × seq %d, ckpt %s, attn %s, logits %s", r.Method, estPrecision(r), r.Optimizer, r.Batch, r.Seq, r.Ckpt, r.Attn, r.Logits)
		if r.GPUs > 1 {
			setup += fmt.Sprintf(", %d GPUs %s", r.GPUs, r.Shard)
		}
	} else {
		setup = fmt.Sprintf("infer, %s weights (quant %s), kv %s, batch %d × context %d", r.Dtype, r.Quant, r.KVDtype, r.Batch, r.Seq)
	}
	fmt.Fprintf(w, "Model:  %s (%s params, %s trainable)\n", m.Name, bytesize.Commas(rep.Params), bytesize.Commas(rep.TrainableParams))
	fmt.Fprintf(w, "Setup:  %s; activations %s\n", setup, r.Activations)
	fmt.Fprintf(w, "GPU:    %s, %s as PyTorch reports it; usable with %g %% headroom: %s\n\n",
		rep.GPU.Name, estBoth(rep.GPU.CapacityBytes), r.Headroom, estBoth(rep.UsableBytes))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "bucket\tGiB\tGB\t")
	for _, b := range rep.Details {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t\n", b.Name, estGiB(b.Bytes), float64(b.Bytes)/1e9)
	}
	fmt.Fprintf(tw, "total\t%.2f\t%.2f\t\n", estGiB(rep.TotalBytes), float64(rep.TotalBytes)/1e9)
	tw.Flush()
	fmt.Fprintln(w, "\nFormulas:")
	for _, b := range rep.Details {
		fmt.Fprintf(w, "  %-12s %s\n", b.Name, b.Formula)
	}
	fmt.Fprintln(w)
	if rep.Fits {
		fmt.Fprintf(w, "Verdict: fits (%s of %s usable)\n", bytesize.Format(rep.TotalBytes, bytesize.Binary), bytesize.Format(rep.UsableBytes, bytesize.Binary))
	} else {
		fmt.Fprintf(w, "Verdict: does NOT fit (%s needed, %s usable)\n", bytesize.Format(rep.TotalBytes, bytesize.Binary), bytesize.Format(rep.UsableBytes, bytesize.Binary))
	}
	smallest := "none in the catalog"
	if rep.SmallestGPU != "" {
		smallest = rep.SmallestGPU
	}
	fmt.Fprintf(w, "Smallest GPU that fits: %s\n", smallest)
	if r.Mode == estimator.ModeTrain {
		n := "none up to the limit (activations and logits are not sharded)"
		if rep.GPUsNeeded > 0 {
			n = fmt.Sprint(rep.GPUsNeeded)
		}
		fmt.Fprintf(w, "GPUs needed under zero3: %s\n", n)
	}
	if rep.MaxBatch == 0 {
		fmt.Fprintf(w, "Largest micro-batch that fits: none (batch 1 does not fit); longest sequence at batch %d: %d tokens", r.Batch, rep.MaxSeq)
	} else {
		fmt.Fprintf(w, "Largest micro-batch that fits: %d; longest sequence at batch %d: %d tokens", rep.MaxBatch, r.Batch, rep.MaxSeq)
	}
	if m.MaxPositions > 0 {
		fmt.Fprintf(w, " (model context %d)", m.MaxPositions)
	}
	fmt.Fprintln(w)
	if len(rep.Fixes) > 0 {
		fmt.Fprintln(w, "\nFixes, cheapest first (each on top of the ones before, up to the first that fits):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for i, f := range rep.Fixes {
			verdict := "does not fit"
			if f.Fits {
				verdict = "fits"
			}
			fmt.Fprintf(tw, "  %d.\t%s\t%s\tsaves %s\t→ %s\t%s\n", i+1, f.Name, f.Change, bytesize.Format(f.SavesBytes, bytesize.Binary), bytesize.Format(f.TotalBytes, bytesize.Binary), verdict)
		}
		tw.Flush()
	}
	if !rep.Fits && (len(rep.Fixes) == 0 || !rep.Fixes[len(rep.Fixes)-1].Fits) {
		fmt.Fprintln(w, "\nNo fix in the ladder makes it fit this GPU.")
	}
}

func estGiB(n int64) float64 { return float64(n) / float64(bytesize.GiB) }

func estPrecision(r estimator.Request) string {
	switch {
	case r.Autocast:
		return "fp32 weights + " + r.Dtype + " autocast"
	case r.Master:
		return r.Dtype + " + fp32 master"
	}
	return r.Dtype
}

// joinBoolValues lets boolean flags take their value as the next argument,
// as the vocabulary documents them ("--master false"): package flag only
// reads "--master=false". A bare "--master" still means true.
func joinBoolValues(args []string, names ...string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		if a != name && slices.Contains(names, name) && i+1 < len(args) {
			if v := args[i+1]; v == "true" || v == "false" {
				out = append(out, a+"="+v)
				i++
				continue
			}
		}
		out = append(out, a)
	}
	return out
}
