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
	"strconv"
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

// flagHelp is a vocabulary flag's help, from the estimator's field table:
// its label and help, the choices or unit, the modes it applies to and the
// default. The CLI's own meanings of config and checkpoint_bytes (file
// paths) are said here.
func flagHelp(f estimator.Field, d estimator.Request) string {
	var b strings.Builder
	b.WriteString(f.Label + ". " + f.Help)
	switch f.Key {
	case "config":
		b.WriteString(" Give a path, or - for stdin.")
	case "checkpoint_bytes":
		b.WriteString(" Give a byte count, a size such as 16.1GB, or a path to model.safetensors.index.json or a .safetensors file.")
	}
	if len(f.Choices) > 0 {
		vals := make([]string, len(f.Choices))
		for i, c := range f.Choices {
			vals[i] = c.Value
		}
		b.WriteString("\n" + strings.Join(vals, " | "))
	} else if f.Unit != "" && f.Unit != "bytes" {
		b.WriteString("\nunit: " + f.Unit)
	}
	if len(f.Modes) > 0 {
		b.WriteString(" (mode " + strings.Join(f.Modes, ", ") + ")")
	}
	if def := d.Get(f.Key); def != "" && f.Key != "config" {
		if f.Auto != "" && def == "0" {
			def += ": " + f.Auto
		}
		b.WriteString(" (default " + def + ")")
	}
	return b.String()
}

// runEstimate prints the memory estimate of one training, inference or
// serving setup. It exits 1 when the setup does not fit the GPU and 2 on
// bad usage or input.
func runEstimate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("estimate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	listModels := fs.Bool("list-models", false, "list the model catalog")
	listGPUs := fs.Bool("list-gpus", false, "list the GPU catalog")
	q := url.Values{}
	d := estimator.DefaultRequest()
	var bools []string
	for _, f := range estimator.Fields() {
		isBool := f.Kind == estimator.KindFlag
		if isBool {
			bools = append(bools, f.Key)
		}
		fs.Var(&estimateFlag{key: f.Key, q: q, isBool: isBool}, f.Key, flagHelp(f, d))
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: oomscope estimate [flags]\n\n"+
			"Estimates the GPU memory of training, inference or serving a model, bucket by\n"+
			"bucket, with the three numbers a job prints (allocated, reserved, nvidia-smi), and\n"+
			"says whether it fits, the smallest GPU that fits, the largest batch and sequence\n"+
			"(the feasible region), and the fixes that bring it down. Flags use the /estimate\n"+
			"page's URL vocabulary. Exit codes: 0 fits, 1 does not fit, 2 bad usage or input,\n"+
			"3 internal error.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(joinBoolValues(args, bools...)); err != nil {
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
	if q.Has("config") {
		data, err := readEstimateFile("config", q.Get("config"), stdin, estimator.MaxConfigBytes)
		if err != nil {
			fmt.Fprintf(stderr, "oomscope estimate: %v\n", err)
			return exitBadInput
		}
		if _, err := estimator.ParseConfig(data); err != nil {
			fmt.Fprintf(stderr, "oomscope estimate: config %s: %v\n", q.Get("config"), err)
			return exitBadInput
		}
		q.Set("config", string(data))
	}
	if v := q.Get("checkpoint_bytes"); v != "" {
		n, err := checkpointFlag(v, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "oomscope estimate: %v\n", err)
			return exitBadInput
		}
		q.Set("checkpoint_bytes", n)
	}
	req, err := estimator.ParseQuery(q)
	if err != nil {
		fmt.Fprintf(stderr, "oomscope estimate: %v\n", err)
		return exitBadInput
	}
	rep, err := estimator.Advise(req)
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

// checkpointFlag reads --checkpoint_bytes: a byte count or size as the
// vocabulary takes it, or a path to an index or a .safetensors file whose
// header gives the stored bytes.
func checkpointFlag(v string, stdin io.Reader) (string, error) {
	var r estimator.Request
	if r.Set("checkpoint_bytes", v) == nil {
		return v, nil
	}
	data, err := readCheckpointHead(v, stdin)
	if err != nil {
		return "", err
	}
	c, err := estimator.ParseCheckpoint(data)
	if err != nil {
		return "", fmt.Errorf("checkpoint_bytes %s: %v", v, err)
	}
	return strconv.FormatInt(c.Bytes, 10), nil
}

// readCheckpointHead reads an index whole, or a .safetensors file's 8-byte
// length and header only: the tensor data after it is not needed.
func readCheckpointHead(path string, stdin io.Reader) ([]byte, error) {
	var in io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("checkpoint_bytes: %v (give a byte count, a size or a file)", err)
		}
		defer f.Close()
		in = f
	} else if stdin == nil {
		return nil, fmt.Errorf("checkpoint_bytes: no stdin to read")
	}
	head := make([]byte, 8)
	n, err := io.ReadFull(in, head)
	if err != nil && n == 0 {
		return nil, fmt.Errorf("checkpoint_bytes: %s is empty", path)
	}
	head = head[:n]
	if hl, err := estimator.SafetensorsHeaderLen(head); err == nil && head[0] != '{' {
		rest := make([]byte, hl)
		if _, err := io.ReadFull(in, rest); err != nil {
			return nil, fmt.Errorf("checkpoint_bytes: %s: the safetensors header is cut short: %v", path, err)
		}
		return append(head, rest...), nil
	}
	rest, err := io.ReadAll(io.LimitReader(in, estimator.MaxConfigBytes*64))
	if err != nil {
		return nil, fmt.Errorf("checkpoint_bytes: reading %s: %v", path, err)
	}
	return append(head, rest...), nil
}

// readEstimateFile reads a path, or stdin for "-", up to limit bytes.
func readEstimateFile(key, path string, stdin io.Reader, limit int64) ([]byte, error) {
	var in io.Reader
	switch {
	case path == "":
		return nil, fmt.Errorf("%s: empty path (give a file, or - for stdin)", key)
	case path == "-" && stdin == nil:
		return nil, fmt.Errorf("%s: no stdin to read", key)
	case path == "-":
		in = stdin
	default:
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", key, err)
		}
		defer f.Close()
		in = f
	}
	data, err := io.ReadAll(io.LimitReader(in, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading %s: %v", key, path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %s is larger than %d bytes", key, path, limit)
	}
	return data, nil
}

// estBoth renders bytes in GiB with GB beside it.
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

// setupWords describes the request in one line, with the fields that apply
// to its mode only.
func setupWords(r estimator.Request) string {
	var parts []string
	for _, f := range estimator.Fields() {
		switch f.Key {
		case "model", "config", "gpu", "headroom", "checkpoint_bytes":
			continue
		}
		if !r.Applies(f.Key) {
			continue
		}
		v := r.Get(f.Key)
		if f.Kind == estimator.KindInt && v == "0" && f.Auto != "" {
			v = f.Auto
		}
		parts = append(parts, f.Key+" "+v)
	}
	return strings.Join(parts, ", ")
}

// printEstimate writes the human-readable estimate: the verdict first, the
// three readouts, the buckets in GiB and GB with their formulas, the
// serving engine's numbers, host RAM, the answers and the fixes.
func printEstimate(w io.Writer, rep *estimator.Advice) {
	r := rep.Request
	m := rep.Model
	switch {
	case rep.Serving != nil && rep.Fits:
		fmt.Fprintf(w, "Verdict: starts on %s: %s\n", rep.GPU.Name, rep.Verdict)
	case rep.Serving != nil:
		fmt.Fprintf(w, "Verdict: does NOT start on %s: %s\n", rep.GPU.Name, rep.Verdict)
	case rep.Fits:
		fmt.Fprintf(w, "Verdict: fits: %s needed of %s usable on %s\n", bytesize.Format(rep.TotalBytes, bytesize.Binary), bytesize.Format(rep.UsableBytes, bytesize.Binary), rep.GPU.Name)
	default:
		fmt.Fprintf(w, "Verdict: does NOT fit: %s needed of %s usable on %s\n", bytesize.Format(rep.TotalBytes, bytesize.Binary), bytesize.Format(rep.UsableBytes, bytesize.Binary), rep.GPU.Name)
	}
	if len(rep.Fixes) > 0 {
		f := rep.Fixes[0]
		fmt.Fprintf(w, "Top fix: %s (%s), saves %s\n", f.Name, f.Change, bytesize.Format(f.SavesBytes, bytesize.Binary))
	}
	fmt.Fprintf(w, "\nModel:  %s (%s params, %s trainable)\n", m.Name, bytesize.Commas(rep.Params), bytesize.Commas(rep.TrainableParams))
	fmt.Fprintf(w, "Setup:  %s\n", setupWords(r))
	fmt.Fprintf(w, "GPU:    %s, %s as PyTorch reports it; usable: %s = %s\n", rep.GPU.Name, estBoth(rep.GPU.CapacityBytes), rep.UsableFormula, estBoth(rep.UsableBytes))
	for _, n := range m.Notes {
		fmt.Fprintf(w, "Note:   %s\n", n)
	}

	fmt.Fprintln(w, "\nReadouts per GPU (compare with):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range estimator.ReadoutNames {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", name, estBoth(rep.Readouts.Get(name)), rep.Readouts.Compare[name])
	}
	tw.Flush()
	for _, name := range estimator.ReadoutNames {
		fmt.Fprintf(w, "  %-9s = %s\n", name, rep.Readouts.Formulas[name])
	}

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "bucket\tGiB\tGB\t")
	for _, b := range rep.Details {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t\n", b.Name, estGiB(b.Bytes), float64(b.Bytes)/1e9)
	}
	fmt.Fprintf(tw, "total (device)\t%.2f\t%.2f\t\n", estGiB(rep.TotalBytes), float64(rep.TotalBytes)/1e9)
	tw.Flush()
	fmt.Fprintln(w, "\nFormulas:")
	for _, b := range rep.Details {
		fmt.Fprintf(w, "  %-12s %s\n", b.Name, b.Formula)
	}
	if s := rep.Serving; s != nil {
		printServing(w, s)
	}
	if rep.HostBytes > 0 {
		fmt.Fprintf(w, "\nHost RAM: %s = %s\n", estBoth(rep.HostBytes), rep.HostFormula)
	}

	fmt.Fprintln(w)
	smallest := "none in the catalog"
	if rep.SmallestGPU != "" {
		smallest = rep.SmallestGPU
	}
	fmt.Fprintf(w, "Smallest GPU that fits: %s\n", smallest)
	switch r.Mode {
	case estimator.ModeTrain:
		n := "none up to the limit (activations and logits are not sharded)"
		if rep.GPUsNeeded > 0 {
			n = fmt.Sprint(rep.GPUsNeeded)
		}
		fmt.Fprintf(w, "GPUs needed under zero3: %s\n", n)
	case estimator.ModeServe:
		n := "none up to 8"
		if rep.GPUsNeeded > 0 {
			n = fmt.Sprint(rep.GPUsNeeded)
		}
		fmt.Fprintf(w, "Tensor-parallel size needed: %s\n", n)
	}
	if r.Mode == estimator.ModeServe {
		fmt.Fprintf(w, "Requests of max_model_len at once: %d; longest max_model_len that starts: %d tokens\n", rep.MaxBatch, rep.MaxSeq)
	} else {
		if rep.MaxBatch == 0 {
			fmt.Fprintf(w, "Largest micro-batch that fits: none (batch 1 does not fit); longest sequence at batch %d: %d tokens", r.Batch, rep.MaxSeq)
		} else {
			fmt.Fprintf(w, "Largest micro-batch that fits: %d; longest sequence at batch %d: %d tokens", rep.MaxBatch, r.Batch, rep.MaxSeq)
		}
		if m.MaxPositions > 0 {
			fmt.Fprintf(w, " (model context %d)", m.MaxPositions)
		}
		fmt.Fprintln(w)
		if c := rep.CapacityMargin; c.Rows > 0 {
			fmt.Fprintf(w, "  (on %d measured longest-context runs the shown maximum was %+.0f %% … %+.0f %% of the measured one; the bound is +5 %%)\n", c.Rows, 100*c.Low, 100*c.High)
		}
	}
	printFeasible(w, rep)
	if b := rep.ErrorBand; b != nil {
		fmt.Fprintf(w, "\nError band: %s.\n", b.Words)
		for _, s := range b.Setups {
			fmt.Fprintf(w, "  %+6.1f %%  %s: %s\n", 100*s.Error, s.ID, s.What)
		}
	}
	if len(rep.Fixes) > 0 {
		fmt.Fprintln(w, "\nFixes, cheapest first (each on top of the ones before, up to the first that fits):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for i, f := range rep.Fixes {
			v := "does not fit"
			if f.Fits {
				v = "fits"
			}
			fmt.Fprintf(tw, "  %d.\t%s\t%s\tsaves %s\t→ %s\t%s\n", i+1, f.Name, f.Change, bytesize.Format(f.SavesBytes, bytesize.Binary), bytesize.Format(f.TotalBytes, bytesize.Binary), v)
		}
		tw.Flush()
	}
	if !rep.Fits && (len(rep.Fixes) == 0 || !rep.Fixes[len(rep.Fixes)-1].Fits) {
		fmt.Fprintln(w, "\nNo fix in the ladder makes it fit this GPU.")
	}
}

// printServing writes what the engine prints at start-up.
func printServing(w io.Writer, s *estimator.Serving) {
	fmt.Fprintf(w, "\nServing (%s), per GPU; tokens are engine-wide:\n", s.Engine)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	rows := []struct {
		key, label, value string
	}{
		{"budget_bytes", "budget", estBoth(s.BudgetBytes)},
		{"weights_bytes", "weights", estBoth(s.WeightsBytes)},
		{"activation_peak_bytes", "activation peak", estBoth(s.ActivationPeakBytes)},
		{"non_torch_bytes", "non-torch memory", estBoth(s.NonTorchBytes)},
		{"kv_cache_bytes", "KV cache", estBoth(s.KVCacheBytes)},
		{"kv_bytes_per_token", "KV per token", bytesize.Commas(s.KVBytesPerToken) + " B"},
		{"kv_blocks", "KV blocks", bytesize.Commas(s.KVBlocks)},
		{"kv_cache_tokens", "KV tokens", bytesize.Commas(s.KVCacheTokens)},
		{"max_concurrency", "max concurrency", fmt.Sprintf("%.2fx at %d tokens", s.MaxConcurrency, s.MaxModelLen)},
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", row.label, row.value, s.Formulas[row.key])
	}
	tw.Flush()
	fmt.Fprintf(w, "  limits: max_model_len %d, max_num_seqs %d, max_num_batched_tokens %d, block_size %d\n", s.MaxModelLen, s.MaxNumSeqs, s.MaxBatchedTokens, s.BlockSize)
	fmt.Fprintln(w, "Start-up log, as the engine would print it:")
	for _, l := range s.Log {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if s.Error != "" {
		fmt.Fprintf(w, "Engine error: %s\n", s.Error)
	}
}

// printFeasible writes the feasible region's boundary as two rows.
func printFeasible(w io.Writer, rep *estimator.Advice) {
	if len(rep.Feasible) == 0 {
		return
	}
	head, what := "seq", "max batch"
	if rep.Request.Mode == estimator.ModeServe {
		head, what = "max_model_len", "requests"
	}
	fmt.Fprintf(w, "\nFeasible region on %s (largest %s at each %s):\n", rep.GPU.Name, what, head)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight)
	var a, b []string
	for _, p := range rep.Feasible {
		a = append(a, strconv.Itoa(p.Seq))
		b = append(b, strconv.Itoa(p.MaxBatch))
	}
	fmt.Fprintf(tw, "  %s\t%s\t\n", head, strings.Join(a, "\t"))
	fmt.Fprintf(tw, "  %s\t%s\t\n", what, strings.Join(b, "\t"))
	tw.Flush()
	if len(rep.FeasibleByBatch) > 0 {
		var parts []string
		for _, p := range rep.FeasibleByBatch {
			parts = append(parts, fmt.Sprintf("batch %d → %d", p.Batch, p.MaxSeq))
		}
		fmt.Fprintf(w, "  longest sequence: %s\n", strings.Join(parts, ", "))
	}
}

func estGiB(n int64) float64 { return float64(n) / float64(bytesize.GiB) }

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
